/**
 * A 429 outside the overload check's plan (LOAD-02): one that carries none of the three
 * `X-RateLimit-*` headers, while the burst was sized on the key's own count. It is not the key's
 * limiter answering but another limit met on the way (a front door's own gate, a limit per
 * address), so what the burst judges was not seen: the check stops, not certified, never failed.
 * What the 429 itself breaks is judged as findings of those requirements (spec, Limits rules 1
 * and 3: RL-06, RL-07, RL-01, RL-09; suites/fixtures/unplanned-429.ts), with a curl line.
 */
import { shellWord } from '../../core/exchange.ts';
import { finding, type Finding } from '../../core/finding.ts';
import { parseRetryAfter } from '../lib/retry-after.ts';
import { refusalFindings } from '../fixtures/unplanned-429.ts';
import { answeredBy } from '../lib/front-door.ts';
import { RATE_LIMIT_HEADERS } from '../lib/rate-limit.ts';
import type { RecordedResponse } from './engine.ts';

/** A 429 without any X-RateLimit-* header (headers lowercased, as the engine and the probe record them). */
export function outsidePlan(r: Pick<RecordedResponse, 'status' | 'headers'>): boolean {
  return r.status === 429 && RATE_LIMIT_HEADERS.every((h) => r.headers[h.toLowerCase()] === undefined);
}

/**
 * The check's stop (LOAD-02, every part: not certified) and the findings of what the first such
 * 429 breaks by itself, each naming the response and a curl line (`$RATE_LIMIT_KEY`, never a key).
 */
export function outsidePlanFindings(
  outside: readonly RecordedResponse[],
  o: { id: string; what: string; listUrl: string; listPath: string; keyLabel: string },
): Finding[] {
  const first = outside[0]!;
  const curl = `curl -sS -i -H ${shellWord('Authorization: Bearer $RATE_LIMIT_KEY')} ${shellWord(o.listUrl)}`;
  const label = `GET ${o.listPath} → 429`;
  const retryAfter = first.headers['retry-after'];
  const parsed = retryAfter === undefined ? undefined : parseRetryAfter(retryAfter, first.headers.date, { nowMs: first.receivedAt });
  const broken = refusalFindings(
    { label, curl, header: (name) => first.headers[name.toLowerCase()] },
    parsed && !parsed.ok ? parsed.reason : undefined,
  );
  const stop = finding({
    id: o.id,
    level: 'not-certified',
    message:
      `${outside.length} 429(s) in ${o.what} carried none of the X-RateLimit-* headers (${answeredBy({ headers: first.headers })}): not the limit the burst was sized on ` +
      `but another met on the way (a front door's own gate, a limit per address), so what the check judges was not seen; nothing more is sent on ${o.keyLabel}` +
      (broken.length ? `; the 429 itself fails ${[...new Set(broken.map((f) => f.id))].join(', ')}` : ''),
    expected: `the key's own limit answering: a 429 with Retry-After and the three X-RateLimit-* headers`,
    observed: `${label} with Retry-After: ${retryAfter ?? 'missing'} and no X-RateLimit-* header`,
    curl,
  });
  return [stop, ...broken];
}
