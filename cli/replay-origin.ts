/**
 * Which target a replay token came from, and whether a replay may go where the settings point.
 * A token is printed by a run; that run's `conformance.json` holds it (in the failing check's
 * message) and names its target. A replay goes to that target; it refuses another one (say, a
 * config file's default target) unless the user names the target (`--base-url`, `--target`, or
 * `BASE_URL` in the environment). Pure but for reading the last run's conformance.json.
 */
import fs from 'node:fs';

export interface TargetRef {
  kind: 'reference' | 'external';
  baseUrl?: string;
  apiUrl?: string;
}

/** `the bundled reference server` or the URL. */
export function targetName(t: TargetRef): string {
  return t.kind === 'reference' ? 'the bundled reference server' : String(t.baseUrl);
}

function same(a: TargetRef, b: TargetRef): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind === 'reference' || (a.baseUrl ?? '').replace(/\/+$/, '') === (b.baseUrl ?? '').replace(/\/+$/, '');
}

/** The target of the run whose conformance.json holds the token, or undefined. */
export function tokenOrigin(conformanceJson: string, token: string): TargetRef | undefined {
  let text: string;
  try {
    text = fs.readFileSync(conformanceJson, 'utf8');
  } catch {
    return undefined;
  }
  if (!text.includes(token.trim())) return undefined;
  try {
    const t = (JSON.parse(text) as { target?: { kind?: string; baseUrl?: string; apiUrl?: string | null } }).target;
    if (!t) return undefined;
    return t.kind === 'reference'
      ? { kind: 'reference' }
      : { kind: 'external', ...(t.baseUrl ? { baseUrl: t.baseUrl } : {}), ...(t.apiUrl ? { apiUrl: t.apiUrl } : {}) };
  } catch {
    return undefined;
  }
}

export type ReplayTargetDecision = { ok: true; target: TargetRef; note: string } | { ok: false; error: string };

/**
 * Where the replay goes: `resolved` (the settings' target), checked against the token's origin.
 * `named`: the user named the target for this replay (a flag or BASE_URL in the environment).
 */
export function decideReplayTarget(origin: TargetRef | undefined, resolved: TargetRef, named: boolean): ReplayTargetDecision {
  if (!origin)
    return {
      ok: true,
      target: resolved,
      note: `replay: the token is not in the last run's conformance.json; replaying against ${targetName(resolved)}`,
    };
  if (same(origin, resolved))
    return { ok: true, target: resolved, note: `replay: against ${targetName(resolved)}, the target the token came from` };
  if (named)
    return {
      ok: true,
      target: resolved,
      note: `replay: against ${targetName(resolved)} as named (the token came from ${targetName(origin)})`,
    };
  return {
    ok: false,
    error:
      `the token came from ${targetName(origin)}, but the settings point at ${targetName(resolved)}; ` +
      'name the target to replay there (--base-url, --target or BASE_URL), or replay against the one the token came from',
  };
}
