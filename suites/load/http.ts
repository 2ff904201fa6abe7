/**
 * Single requests and waits of the load checks (probes before and after a run). The key goes in
 * the `Authorization` header only; nothing here prints or returns it.
 */

export interface ProbeResponse {
  ok: true;
  status: number;
  /** Header names lowercased. */
  headers: Record<string, string>;
  body: string;
  /** `Date.now()` when the response was complete. */
  receivedAt: number;
  latencyMs: number;
}

export interface ProbeFailure {
  ok: false;
  /** A readable reason without any header value. */
  error: string;
  latencyMs: number;
}

export interface ProbeRequest {
  method?: 'GET' | 'PATCH';
  url: string;
  authorization: string;
  body?: string;
  timeoutS: number;
}

/** Sends one request with `fetch` and reads the whole body. Never throws. */
export async function probe(request: ProbeRequest): Promise<ProbeResponse | ProbeFailure> {
  const started = performance.now();
  try {
    const response = await fetch(request.url, {
      method: request.method ?? 'GET',
      headers: {
        Authorization: request.authorization,
        Accept: 'application/json',
        ...(request.body !== undefined ? { 'Content-Type': 'application/json' } : {}),
      },
      body: request.body,
      signal: AbortSignal.timeout(request.timeoutS * 1000),
    });
    const body = await response.text();
    const headers: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      headers[name.toLowerCase()] = value;
    });
    return {
      ok: true,
      status: response.status,
      headers,
      body,
      receivedAt: Date.now(),
      latencyMs: Math.round((performance.now() - started) * 100) / 100,
    };
  } catch (error) {
    const e = error as { name?: string; cause?: { code?: string } };
    const reason = e.name === 'TimeoutError' ? `no response within ${request.timeoutS} s` : (e.cause?.code ?? e.name ?? 'network error');
    return { ok: false, error: reason, latencyMs: Math.round((performance.now() - started) * 100) / 100 };
  }
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

/**
 * Waits `ms`, printing what it waits for and the time left every `everyS` seconds, so that a CI
 * log never looks hung.
 */
export async function waitWithProgress(
  ms: number,
  what: string,
  progress: (line: string) => void,
  everyS = 5,
): Promise<void> {
  if (ms <= 0) return;
  const end = Date.now() + ms;
  progress(`[load] waiting ${(ms / 1000).toFixed(1)} s: ${what}`);
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) break;
    await sleep(Math.min(left, everyS * 1000));
    const still = end - Date.now();
    if (still > 0) progress(`[load] waiting: ${what}, ${(still / 1000).toFixed(0)} s left`);
  }
}

/** `${baseUrl}/inventory` etc.: joins a base address and a path without doubling slashes. */
export function join(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}
