/**
 * Step "start the run-wide pacer": one coordinator per run, so nothing is sent on a key while a 429 on it is pending
 * (spec, Limits: "Repeated requests after a 429 may cause a temporary ban"); key labels only (suites/pacing/README.md).
 */
import {
  startPacerCoordinator,
  type CoordinatorOptions,
  type MessageReport,
  type PacerCoordinator,
  type RunHold,
} from '../../suites/pacing/coordinator.ts';
import type { PacingSummary } from '../verdict.ts';

export interface RunPacer {
  /** The environment every phase gets: `CONFORMANCE_PACER_URL`. */
  env: { CONFORMANCE_PACER_URL: string };
  /** Closes the coordinator and returns what it saw, per key. */
  close(): Promise<PacingSummary[]>;
  /** After `close`: until when (local clock, ms) a 429 or a hold the run met asks that nothing be sent on some key (0: none pending). */
  pendingUntilMs(): number;
  /** After `close`: the messages the run queued, by check, and those the budget (MAX_MESSAGES) kept back. */
  messages?(): MessageReport | undefined;
  /** Requests granted, 429s seen and waits so far, all keys together (the progress lines). */
  progress(): { requests: number; refused: number; waits: number };
}

/** One key's line of the coordinator's report, as the conformance report shows it; `holds`: the run-wide holds its 429s caused. */
export function pacingSummary(
  k: {
    label: string;
    granted: number;
    waits?: number;
    longestWaitMs: number;
    refused: number;
    earlyGrants: number;
    suspectedBans: number;
    closed?: string;
    anotherClient?: string;
    untrusted?: string;
  },
  holds: readonly RunHold[] = [],
): PacingSummary {
  const notes = [
    ...holds.filter((h) => h.label === k.label).map((h) => `${h.reason} (${Math.ceil(h.heldForMs / 1000)} s)`),
    ...(k.closed ? [k.closed] : []),
    ...(k.untrusted ? [`sent one request at a time: ${k.untrusted}`] : []),
  ];
  return {
    key: k.label,
    requests: k.granted,
    ...(k.waits !== undefined ? { waits: k.waits } : {}),
    longestWaitS: Math.round(k.longestWaitMs / 100) / 10,
    refused: k.refused,
    earlyRequests: k.earlyGrants,
    suspectedBan: k.suspectedBans > 0,
    ...(notes.length ? { notes } : {}),
    ...(k.anotherClient ? { anotherClient: k.anotherClient } : {}),
  };
}

/**
 * Starts the run's one coordinator with the run's settings (`MAX_RETRY_AFTER_S`: the longest wait;
 * `WORKERS` + 1: the reserve of paced requests); `start` is injectable for tests.
 */
export async function startRunPacer(
  settings: { maxRetryAfterS: number; workers: number; maxMessages?: number } & Pick<CoordinatorOptions, 'initialHolds' | 'onRefusal'>,
  start: (o: CoordinatorOptions) => Promise<PacerCoordinator> = startPacerCoordinator,
): Promise<RunPacer> {
  const coordinator = await start({
    maxWaitMs: settings.maxRetryAfterS * 1000,
    reserve: settings.workers + 1,
    ...(settings.initialHolds?.length ? { initialHolds: settings.initialHolds } : {}),
    ...(settings.onRefusal ? { onRefusal: settings.onRefusal } : {}),
    ...(settings.maxMessages !== undefined ? { maxMessages: settings.maxMessages } : {}),
  });
  let closed: PacingSummary[] | undefined;
  let messages: MessageReport | undefined;
  let pendingUntilMs = 0;
  return {
    env: { CONFORMANCE_PACER_URL: coordinator.url },
    pendingUntilMs: () => pendingUntilMs,
    messages: () => messages,
    progress: () =>
      coordinator.report().keys.reduce(
        (t, k) => ({
          requests: t.requests + k.granted,
          refused: t.refused + k.refused,
          waits: t.waits + ((k as { waits?: number }).waits ?? 0),
        }),
        { requests: 0, refused: 0, waits: 0 },
      ),
    async close() {
      if (closed) return closed;
      const report = coordinator.report();
      messages = report.messages;
      pendingUntilMs = Math.max(0, ...report.keys.map((k) => k.blockedUntilMs ?? 0));
      await coordinator.close();
      closed = report.keys.map((k) => pacingSummary(k as Parameters<typeof pacingSummary>[0], report.holds ?? []));
      return closed;
    },
  };
}
