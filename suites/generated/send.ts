/**
 * One generated request on the wire: sent through the suites' `api` client (so through the run's
 * pacer), its outcome for the judge, and how a failure reads (a one-line request, a curl line with
 * the key as `$API_KEY`). Used by the coverage cases and the random classes alike.
 */
import type { ApiClient, ApiResponse, SendOptions } from '../fixtures.ts';
import { NotCertified } from '../fixtures/verdicts.ts';
import { abbreviate } from '../lib/error-body.ts';
import type { Operation } from './document.ts';
import { fillPath, type GeneratedRequest } from './classes.ts';
import type { JudgedResponse, Outcome } from './judge.ts';
import { curlCommand } from './replay.ts';

/** Sends one generated request; a transport failure is an outcome, not an exception. */
export async function sendGenerated(
  api: ApiClient,
  op: Operation,
  req: GeneratedRequest,
  values: Record<string, string>,
): Promise<{ outcome: Outcome; options: SendOptions }> {
  const headers = { ...req.headers };
  let contentType: string | null | undefined = req.contentType;
  if (req.body !== undefined && contentType === undefined) contentType = 'application/json';
  if (contentType === '') {
    headers['content-type'] = '';
    contentType = null;
  }
  const template = req.authTemplate ?? (req.scheme ? `${req.scheme} {key}` : undefined);
  const options: SendOptions = {
    method: req.method,
    base: op.base,
    path: fillPath(req.path, values),
    credential: req.noKey ? 'none' : template ? { key: 'api', format: (k) => template.split('{key}').join(k) } : 'api',
    ...(req.body !== undefined ? { body: req.bodyEncoding === 'latin1' ? Buffer.from(req.body, 'latin1') : req.body } : {}),
    contentType: contentType ?? null,
    headers,
    evidence: false,
    // A message the run's budget (MAX_MESSAGES) has no place for is left out, by name, and the run goes on.
    throwWhenMessagesSpent: true,
    // One place is kept for the stateful sequences' message (GEN-06), which run after the cases.
    leaveMessages: 1,
  };
  try {
    const res = await api.send(options);
    return { outcome: { kind: 'response', response: judged(res) }, options };
  } catch (e) {
    const message = (e as Error).message;
    // Not certified (a timeout the run could not judge) is never a case's outcome.
    if (!(e instanceof NotCertified) && /request failed:/.test(message))
      return { outcome: { kind: 'no-response', error: message.replace(/^.*request failed: /, '') }, options };
    throw e;
  }
}

function judged(res: ApiResponse): JudgedResponse {
  return {
    method: res.method,
    status: res.status,
    headers: res.headers,
    json: res.json,
    jsonError: res.jsonError,
    text: res.text,
    missingRateLimit: res.rateLimit.missing,
  };
}

/** A request as one line for messages (method, path, headers of note, body abbreviated). */
export function describeRequest(o: SendOptions, req: GeneratedRequest): string {
  const extra = Object.entries(o.headers ?? {}).map(([k, v]) => `${k}: ${abbreviate(v, 40)}`);
  const template = req.authTemplate ?? (req.scheme ? `${req.scheme} {key}` : undefined);
  if (template) extra.push(`Authorization: ${template.split('{key}').join('<API_KEY>')}`);
  if (o.contentType) extra.push(`Content-Type: ${o.contentType}`);
  const body = o.body === undefined ? undefined : typeof o.body === 'string' ? o.body : o.body.toString('latin1');
  return `${o.method} ${abbreviate(o.path, 120)}${extra.length ? ` [${extra.join('; ')}]` : ''}${body !== undefined ? ` body ${abbreviate(JSON.stringify(body), 160)}` : ''}`;
}

/** The curl line of a sent request (the key as `$API_KEY`), redacted. */
export function curlOf(api: ApiClient, op: Operation, o: SendOptions, req: GeneratedRequest): string {
  const url = `${op.base === 'inventory' ? api.env.baseUrl : api.env.apiUrl}${o.path}`;
  const template = req.noKey ? undefined : (req.authTemplate ?? `${req.scheme ?? 'Bearer'} {key}`);
  return api.redact(
    curlCommand({ method: o.method, url, headers: o.headers ?? {}, authTemplate: template, contentType: o.contentType, body: o.body }),
  );
}
