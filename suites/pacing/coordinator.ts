/**
 * The run's one owner of rate-limit state (spec, Limits rules 3-5; Errors, 429): a small HTTP
 * server on 127.0.0.1 that every Playwright worker, phase and load check asks before it sends on
 * a key, and tells about every response. certify starts one per run; `playwright.config.ts`'s
 * global setup starts one when `CONFORMANCE_PACER_URL` is unset.
 *
 * It serves four services, each with its own state and tests: pacing (`pacing-service.ts`: key
 * grants, leases, run-wide holds), pet leases (`pet-leases.ts`), once-per-run values
 * (`once-per-run.ts`) and the message budget (`message-budget.ts`). Only key labels (`<API_KEY>`, `<RATE_LIMIT_KEY>`, `<LOAD_KEY>`,
 * `<anonymous>`) and the rate-limit headers of responses cross it, never a key. Protocol: JSON
 * over POST on each service's routes; `GET /report` → `PacingReport`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readSettings } from '../../settings/index.ts';
import type { KeyReport, PacerOptions } from './pacer.ts';
import { pacingService, type InitialHold, type RunHold } from './pacing-service.ts';
import { petLeases, type PetReport } from './pet-leases.ts';
import { oncePerRun } from './once-per-run.ts';
import { messageBudget, type MessageReport } from './message-budget.ts';
import type { Route, Service } from './service.ts';

export type { PetReport } from './pet-leases.ts';
export type { InitialHold, RunHold } from './pacing-service.ts';
export type { MessageReport } from './message-budget.ts';

export interface CoordinatorOptions {
  /** Longest wait before a grant is answered not-certified (default the setting `MAX_RETRY_AFTER_S`). */
  maxWaitMs?: number;
  /** Requests `paced` grants keep in hand on each key (default the setting `WORKERS` + 1). */
  reserve?: number;
  /** A lease not observed nor released within this time ends by itself (default 120 s; the client sets its own). */
  leaseTtlMs?: number;
  /** Further pacer options (margins, fallback rate). */
  pacer?: Omit<PacerOptions, 'label' | 'maxWaitMs' | 'reserve'>;
  /** Most messages the run may queue (default the setting `MAX_MESSAGES`). */
  maxMessages?: number;
  /** The clock (tests). */
  now?: () => number;
  /** Holds the run starts with: 429s an earlier run met whose Retry-After has not passed (certify's journal). */
  initialHolds?: readonly InitialHold[];
  /** Told of every 429 before its sender is answered (certify journals it: the next run waits for it too). */
  onRefusal?: (r: Refusal) => void;
}

/** A 429 as the coordinator saw it: the key's label (never a key), its Retry-After and Date, until when the key is held. */
export interface Refusal {
  label: string;
  retryAfter: string | null;
  date: string | null;
  receivedAtMs: number;
  /** Until when (local clock) nothing is granted on the key. */
  untilMs: number;
  /** The 429 holds every key of the run (its key's Remaining did not predict it). */
  all: boolean;
  /** The first answer on the key once an earlier 429's wait had passed was this 429: the key looks banned. */
  afterWait: boolean;
}

export interface PacingReport {
  keys: KeyReport[];
  pets: PetReport;
  /** Every hold of all the run's keys, with the 429 that caused it and why (empty when none). */
  holds?: RunHold[];
  /** The messages the run queued, by check, and those the budget kept from being sent. */
  messages?: MessageReport;
}

export interface PacerCoordinator {
  /** `http://127.0.0.1:<port>`: the value of `CONFORMANCE_PACER_URL`. */
  url: string;
  close(): Promise<void>;
  report(): PacingReport;
}

const MAX_BODY = 4 * 1024 * 1024;

/** Serves `routes` over HTTP: a POSTed JSON body in, one JSON answer out (held until the route answers). */
function serve(routes: Record<string, Route>, report: () => object): http.Server {
  return http.createServer((req, res) => {
    const send = (code: number, body: object) => {
      if (res.writableEnded) return;
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method === 'GET' && req.url === '/report') return send(200, report());
    const route = req.method === 'POST' ? routes[req.url ?? ''] : undefined;
    if (!route) return send(404, { error: 'not found' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY) req.destroy();
      else chunks.push(c);
    });
    req.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        route(
          body,
          (a) => send(200, a),
          (f) =>
            res.on('close', () => {
              if (!res.writableEnded) f();
            }),
        );
      } catch (e) {
        send(400, { error: (e as Error).message });
      }
    });
  });
}

/** Starts the coordinator on 127.0.0.1, port 0. */
export async function startPacerCoordinator(options: CoordinatorOptions = {}): Promise<PacerCoordinator> {
  const now = options.now ?? (() => Date.now());
  // The settings module's one rule (and default) for each variable; a bad value holds its default.
  const settings = readSettings().values;
  const leaseTtlMs = options.leaseTtlMs ?? 120_000;
  const pacing = pacingService({
    maxWaitMs: options.maxWaitMs ?? settings.MAX_RETRY_AFTER_S * 1000,
    reserve: options.reserve ?? settings.WORKERS + 1,
    leaseTtlMs,
    ...(options.pacer ? { pacer: options.pacer } : {}),
    ...(options.initialHolds ? { initialHolds: options.initialHolds } : {}),
    now,
  });
  if (options.onRefusal) pacing.routes = tellingRefusals(pacing.routes, options.onRefusal, now);
  const pets = petLeases({ leaseTtlMs, now });
  const once = oncePerRun({ leaseTtlMs, now });
  const messages = messageBudget({ limit: options.maxMessages ?? settings.MAX_MESSAGES });
  const services: Service<unknown>[] = [pacing, pets, once, messages];

  // Leases, pets and once-claims of a process that died end by themselves.
  const sweeper = setInterval(() => services.forEach((s) => s.sweep()), 1000);
  sweeper.unref();
  const report = (): PacingReport => ({ ...pacing.report(), pets: pets.report(), messages: messages.report() });
  const server = serve(Object.assign({}, ...services.map((s) => s.routes)), report);
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    report,
    async close() {
      clearInterval(sweeper);
      services.forEach((s) => s.close());
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * The pacing routes, telling `onRefusal` of every 429 reported to `/observe`, before its sender is
 * answered: a lease's label is learnt from its `/acquire` answer. Only labels and headers pass.
 */
function tellingRefusals(routes: Record<string, Route>, onRefusal: (r: Refusal) => void, now: () => number): Record<string, Route> {
  const labels = new Map<string, string>();
  /** Per label: until when its last 429 held it, whether it stated how long (Retry-After), and whether an answer other than 429 came since. */
  const last = new Map<string, { untilMs: number; stated: boolean; answered: boolean }>();
  const acquire = routes['/acquire']!;
  const observe = routes['/observe']!;
  const release = routes['/release']!;
  return {
    ...routes,
    '/acquire': (b, answer, onGone) =>
      acquire(
        b,
        (a) => {
          const lease = (a as { lease?: unknown }).lease;
          if (typeof lease === 'string') {
            if (labels.size >= 100_000) labels.delete(labels.keys().next().value!);
            labels.set(lease, String(b.label));
          }
          answer(a);
        },
        onGone,
      ),
    '/observe': (b, answer, onGone) => {
      const label = labels.get(String(b.lease));
      if (label === undefined) return observe(b, answer, onGone);
      const seen = last.get(label);
      if (Number(b.status) !== 429) {
        if (seen) seen.answered = true;
        return observe(b, answer, onGone);
      }
      const header = (name: string): string | null => {
        const pair = Array.isArray(b.headers) ? (b.headers as unknown[][]).find(([n]) => String(n).toLowerCase() === name) : undefined;
        return pair ? String(pair[1]).slice(0, 200) : null;
      };
      const receivedAtMs = Number(b.receivedAtMs) || now();
      observe(
        b,
        (a) => {
          const r = a as { heldUntilMs?: number; blockedForMs?: number; holdAll?: { untilMs: number } };
          const untilMs = Math.max(r.heldUntilMs ?? 0, receivedAtMs + (r.blockedForMs ?? 0), r.holdAll?.untilMs ?? 0);
          // After a fixed hold of the run's own (no Retry-After) the server promised nothing: no ban is read into its next 429.
          const afterWait = seen?.stated === true && !seen.answered && receivedAtMs >= seen.untilMs;
          last.set(label, { untilMs, stated: header('retry-after') !== null, answered: false });
          try {
            onRefusal({
              label,
              retryAfter: header('retry-after'),
              date: header('date'),
              receivedAtMs,
              untilMs,
              all: !!r.holdAll,
              afterWait,
            });
          } finally {
            answer(a);
          }
        },
        onGone,
      );
    },
    '/release': (b, answer, onGone) => {
      labels.delete(String(b.lease));
      release(b, answer, onGone);
    },
  };
}
