/**
 * Step "preflight": one request without a key before any phase (spec, Authentication rule 3: "A missing or invalid
 * key yields 401 with an Error body"); unreachable, unverified TLS, a redirect or no such 401: exit 3 (README.md).
 */
import { EXIT, signalExit } from '../../core/exit-codes.ts';
import { send, TransportError } from '../../core/transport.ts';

/** The exit status of a run stopped by the preflight (the CLI's `unreachable`, core/exit-codes.ts). */
export const PREFLIGHT_EXIT = EXIT.unreachable;

/** The exit status of a run stopped by a signal before anything was judged: 128 + the signal's number (130 SIGINT, 143 SIGTERM). */
export function interruptedExit(signal?: AbortSignal): number {
  return signalExit(signal?.reason === 'SIGTERM' ? 'SIGTERM' : 'SIGINT');
}

/** `interrupted`: a signal (SIGINT, SIGTERM) stopped it; nothing was judged. */
export type PreflightResult = { ok: true; lines: string[] } | { ok: false; line: string; interrupted?: true };

interface Answer {
  status: number;
  location?: string;
  body: string;
}

/** An address as it may be printed: scheme, host, port and path, never userinfo or query. */
export function printable(raw: string): string {
  try {
    const u = new URL(raw);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(an unparsable address)';
  }
}

/** Most body bytes the preflight reads: an Error body is small; an endless body is cut here. */
const MAX_PREFLIGHT_BODY = 65_536;

/**
 * One GET without a key, through the one outbound client (core/transport.ts): `deadlineMs` is wall
 * clock to the end of the body, TLS verification is set explicitly (`insecure` is the user's
 * opt-in), a redirect is an answer (never followed), and a body beyond MAX_PREFLIGHT_BODY is cut
 * (the status is known; what follows is not needed to judge it). A connection of its own.
 */
async function getOnce(url: string, deadlineMs: number, ca?: string | Buffer, insecure = false, signal?: AbortSignal): Promise<Answer> {
  const r = await send(
    { url: new URL(url), method: 'GET', headers: { Accept: 'application/json' } },
    {
      deadlineMs,
      tls: { ...(ca ? { ca } : {}), insecure },
      agent: false,
      maxBodyBytes: MAX_PREFLIGHT_BODY,
      overflow: 'truncate',
      ...(signal ? { signal } : {}),
    },
  );
  const location = r.headers.location;
  return { status: r.status, ...(location ? { location } : {}), body: r.body };
}

/** Why a request failed, in one phrase. */
function failure(error: NodeJS.ErrnoException, url: string): string {
  const code = error.code ?? '';
  const where = printable(url);
  if (error instanceof TransportError && error.kind === 'tls') {
    return `TLS certificate of ${new URL(url).host} not verified (${code}); no key was sent. Trust a private CA with NODE_EXTRA_CA_CERTS=<ca.pem>`;
  }
  const what: Record<string, string> = {
    ECONNREFUSED: 'connection refused',
    ENOTFOUND: 'host not found (DNS)',
    EAI_AGAIN: 'host not found (DNS, temporary)',
    ETIMEDOUT: 'no complete answer in time',
    ECONNRESET: 'connection reset',
    EHOSTUNREACH: 'host unreachable',
    ENETUNREACH: 'network unreachable',
  };
  return `target unreachable: GET ${where}: ${what[code] ?? error.message}${code ? ` (${code})` : ''}`;
}

function isJson(body: string): boolean {
  try {
    const v = JSON.parse(body);
    return v !== null && typeof v === 'object';
  } catch {
    return false;
  }
}

/**
 * Checks that the target is there and answers like the Inventory Service, sending no key. Each of
 * its requests has a wall-clock deadline of `timeoutMs`; `signal` stops it at once.
 * `ca`: an extra trusted CA (tests; users set NODE_EXTRA_CA_CERTS). `insecure`: the user's explicit
 * opt-in (`INSECURE_TLS`) to an unverified certificate; the lines then say so.
 */
export async function preflight(
  target: { baseUrl: string; apiUrl?: string },
  options: { timeoutMs?: number; ca?: string | Buffer; insecure?: boolean; signal?: AbortSignal } = {},
): Promise<PreflightResult> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const get = (url: string) => getOnce(url, timeoutMs, options.ca, options.insecure, options.signal);
  const stopped = () =>
    options.signal?.aborted
      ? ({ ok: false, interrupted: true, line: 'stopped by a signal during the preflight; no key was sent' } as const)
      : undefined;
  const inventory = `${target.baseUrl}/inventory`;
  let answer: Answer;
  try {
    answer = await get(inventory);
  } catch (error) {
    return stopped() ?? { ok: false, line: failure(error as NodeJS.ErrnoException, inventory) };
  }
  if (answer.status >= 300 && answer.status < 400) {
    return {
      ok: false,
      line: `BASE_URL redirects: GET ${printable(inventory)} answered ${answer.status}${answer.location ? ` to ${printable(new URL(answer.location, inventory).href)}` : ''}; no key is sent to a redirect target: set BASE_URL to the final address`,
    };
  }
  if (answer.status !== 401 || !isJson(answer.body)) {
    const got = answer.status === 401 ? '401 without a JSON body' : `${answer.status}`;
    const hint = answer.status === 404 ? ' (is BASE_URL the inventory base address, ending in /v1?)' : '';
    return {
      ok: false,
      line: `target does not answer like the Inventory Service: GET ${printable(inventory)} without a key answered ${got}, expected 401 with an Error body${hint}`,
    };
  }
  const lines = [`preflight: GET ${printable(inventory)} without a key answered 401 with an Error body`];
  if (options.insecure && inventory.startsWith('https:')) {
    lines.push("note: INSECURE_TLS is set: the target's TLS certificate is not verified; the report says so");
  }
  if (target.apiUrl) {
    const messages = `${target.apiUrl}/messages`;
    try {
      const a = await get(messages);
      if (a.status >= 300 && a.status < 400) {
        return {
          ok: false,
          line: `API_URL redirects: GET ${printable(messages)} answered ${a.status}; no key is sent to a redirect target: set API_URL to the final address`,
        };
      }
      lines.push(`preflight: GET ${printable(messages)} without a key answered ${a.status}`);
    } catch (error) {
      const interrupted = stopped();
      if (interrupted) return interrupted;
      const line = failure(error as NodeJS.ErrnoException, messages);
      // A key must never reach an unverified peer; an unreachable quickstart only fails its own checks.
      if (!line.startsWith('target unreachable')) return { ok: false, line: `API_URL: ${line}` };
      lines.push(`note: ${line.replace('target unreachable', 'API_URL unreachable')}; the messages checks will fail, naming it`);
    }
  }
  return { ok: true, lines };
}
