/**
 * The scope of a generated request (`suites/lib/front-door.ts`): an operation of the spec sent as
 * valid HTTP, or outside the API. The generator probes only methods its path lacks, so a method
 * other than the operation's (HEAD beside GET aside) is one the spec does not define there. Pure.
 */
import { scopeOf, type Scope } from '../lib/front-door.ts';
import type { Operation } from './document.ts';
import { fillPath, type GeneratedRequest } from './classes.ts';

/** Any listed value stands for the id: the scope depends on the encoding around it, not on the digits. */
const SAMPLE_ID = '1';

export function generatedScope(op: Operation, req: GeneratedRequest): Scope {
  const names = [...req.path.matchAll(/\{([^}:]+)(?::[^}]+)?\}/g)].map((m) => m[1]!);
  const target = fillPath(req.path, Object.fromEntries(names.map((n) => [n, SAMPLE_ID])));
  const body = req.body ?? '';
  const bodyBytes = req.bodyEncoding === 'latin1' ? body.length : Buffer.byteLength(body, 'utf8');
  return scopeOf({ method: req.method, target, headers: req.headers, bodyBytes }, [op.method]);
}
