/**
 * A write-back (the request that puts back what a check changed) answered 5xx: a gateway that lost
 * its upstream connection or an instance restarting answers so for a moment, and HTTP clients send
 * such a request once more. The checks' restores (the stock of the functional checks, the generated
 * checks, the capacity mix) send their write-backs through `sendWriteBack`: once more after a
 * pause, and a second refusal stands. Accepted the second time, it is a warning of the check
 * (`transient5xxWarning`): a valid request was answered 5xx. (The journal's repair leaves a refused
 * entry open for the next run instead.)
 */
import { retryAfterWaitSeconds } from './retry-after.ts';

/** The pause before a write-back answered 5xx goes once more, when the answer asks for none shorter. */
const PAUSE_MS = 300;
/** The longest `Retry-After` of a 5xx a write-back waits before it goes once more. */
const RETRY_5XX_MAX_S = 10;

/**
 * The pause (ms) before a write-back answered 5xx goes once more: the answer's `Retry-After`
 * (RFC 9110 §10.2.3: how long the service expects to be unavailable) when it asks for at most
 * RETRY_5XX_MAX_S, else a short pause; undefined when it asks for longer (the write-back does not
 * go again, and the refusal stands). `headers`: lower-cased names.
 */
export function pauseBefore5xxRetry(res: { headers: Record<string, string> }): number | undefined {
  const asked = retryAfterWaitSeconds(res.headers['retry-after'], res.headers.date);
  if (asked === undefined) return PAUSE_MS;
  return asked <= RETRY_5XX_MAX_S ? Math.max(PAUSE_MS, asked * 1000) : undefined;
}

/**
 * Sends a write-back (`send`), and once more after `pauseBefore5xxRetry` when it is answered 5xx.
 * The last answer, and `first5xx`, the status of the first answer, when it was sent again. An
 * answer without a status (the request failed) is not sent again.
 */
export async function sendWriteBack<R extends object>(send: () => Promise<R>): Promise<{ res: R; first5xx?: number }> {
  const res = await send();
  // An answer has a status and lower-cased headers; a failed request has neither.
  const { status, headers } = res as { status?: number; headers?: Record<string, string> };
  if (status === undefined || status < 500 || headers === undefined) return { res };
  const pause = pauseBefore5xxRetry({ headers });
  if (pause === undefined) return { res };
  await new Promise((r) => setTimeout(r, pause));
  return { res: await send(), first5xx: status };
}

/** The warning for a write-back of `pet` to `original` answered `first` (5xx), then `status` when sent once more. */
export function transient5xxWarning(pet: string, original: string, first: number, status: number): string {
  return `restoring pet ${pet} to quantity ${original} got ${first}, and ${status} when sent once more: a valid request answered 5xx (HTTP rules: 2xx or 4xx)`;
}
