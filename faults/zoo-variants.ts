import { headers, type FaultHooks, type ProxyResponse } from './proxy.ts';
import { isMessages, mapJson } from './lib.ts';
import { zooStore, type LimiterKind } from './limiters/index.ts';
import type { Variant } from './variant.ts';

/**
 * The limiter zoo as conformant variants: the reference server with the limiter of another kind
 * (`faults/limiters/`), each emitting the three headers and a truthful `Retry-After`. Two of them
 * also close every connection and run on a clock tens of seconds away from the runner's, the
 * conditions of a real deployment that a quiet test machine never shows.
 *
 * Spec: Limits ("requests per minute"; Reset "a Unix timestamp of the moment the limit resets"):
 * any algorithm that admits at most the plan's number and says so in the headers is conformant.
 */

/** `Retry-After` as an IMF-fixdate from the response's own `Date` (plus one second: `Date` is truncated), RFC 9110 §10.2.3. */
function retryAfterDate(res: ProxyResponse): ProxyResponse {
  const v = headers.get(res.headers, 'retry-after');
  const date = Date.parse(headers.get(res.headers, 'date') ?? '');
  if (res.status !== 429 || v === undefined || !/^\d+$/.test(v.trim()) || Number.isNaN(date)) return res;
  return { ...res, headers: headers.set(res.headers, 'Retry-After', new Date(date + (Number(v) + 1) * 1000).toUTCString()) };
}

/**
 * A server whose clock is `offsetMs` away from the runner's: `Date` and a message's `createdAt`
 * read that clock, as the limiter's windows, Reset and Retry-After do (the store gets the same
 * offset); a `Retry-After` is then sent as an HTTP-date of that clock.
 */
export function skewedClock(offsetMs: number): FaultHooks {
  return {
    response(res, req) {
      const date = Date.parse(headers.get(res.headers, 'date') ?? '');
      let out = Number.isNaN(date) ? res : { ...res, headers: headers.set(res.headers, 'Date', new Date(date + offsetMs).toUTCString()) };
      if (isMessages(req) && out.status === 201) {
        out = mapJson(out, (b) =>
          typeof b?.createdAt === 'string' ? { ...b, createdAt: new Date(Date.parse(b.createdAt) + offsetMs).toISOString() } : b,
        );
      }
      return retryAfterDate(out);
    },
  };
}

const ALGORITHM_CHOICE: Readonly<Record<LimiterKind, string>> = {
  'fixed-clock': "a fixed window aligned to the clock: Reset is the window's end, the same for every key",
  'fixed-first': "a fixed window that opens at a key's first request: Reset is that key's own window end",
  'sliding-log': 'a sliding log: Remaining counts the last window length, Reset is when the oldest logged request leaves (one slot frees)',
  'sliding-counter':
    "a sliding-window counter weighing the previous window: Reset is the current window's end, and Remaining right after it can be well below Limit",
  'token-bucket':
    "a token bucket refilled once a second: Reset is when the bucket is full again, about one second's refill is admitted at a time after the limit",
  gcra: 'GCRA: Reset is when the theoretical arrival time returns to now, Retry-After exactly when one cell is free',
};
const OPEN = '(the spec says only "requests per minute" and that Reset is the moment the limit resets)';

interface ZooOptions {
  /** The server's clock minus the runner's (ms). */
  skewMs?: number;
  connectionClose?: boolean;
  /** Run only these certify phases (the matrix's time); default all. */
  phases?: string[];
}

function zooVariant(kind: LimiterKind, options: ZooOptions = {}): Variant {
  const { skewMs, connectionClose, phases } = options;
  const extras = [
    ...(connectionClose
      ? ['`Connection: close` on every response (RFC 9112 §9.6: the client opens a new connection for the next request)']
      : []),
    ...(skewMs
      ? [
          `a server clock ${Math.abs(skewMs / 1000)} s ${skewMs > 0 ? 'ahead of' : 'behind'} the runner's: Date, Reset, Retry-After (an HTTP-date) and createdAt all read it (RFC 9110 §6.6.1 asks for a clock, not the client's)`,
        ]
      : []),
  ];
  const name = `limiter-${kind}${connectionClose ? '-close' : ''}${skewMs ? `-${skewMs > 0 ? 'ahead' : 'behind'}-${Math.abs(skewMs / 1000)}s` : ''}`;
  return {
    name,
    description:
      `The reference server with ${ALGORITHM_CHOICE[kind].split(':')[0]} as its limiter (faults/limiters/${kind}.ts)${extras.length ? `, ${extras.map((e) => e.split(' (')[0]).join(', ')}` : ''}.` +
      (phases
        ? ` Only the ${phases.join(' and ')} phases run: the 429 sequence and the bursts are where the algorithm decides a verdict beyond its header values.`
        : ''),
    choices: [`${ALGORITHM_CHOICE[kind]} ${OPEN}`, ...extras],
    store: () => zooStore(kind, { clockOffsetMs: skewMs ?? 0 }),
    ...(skewMs ? { proxy: () => skewedClock(skewMs) } : {}),
    ...(connectionClose ? { connectionClose: true } : {}),
    ...(phases ? { phases } : {}),
  };
}

/**
 * The phases whose verdicts a limiter decides beyond its header values: the 429 sequence and the
 * bursts (rate-limit), the load beside them (load). Every kind passed a full certify when it was
 * added; in the matrix the two full runs below cover the functional and generated phases.
 */
const LIMITER_PHASES = ['rate-limit', 'load'];

/**
 * The zoo in the matrix: every kind once; the clock-aligned fixed window (the reference server's
 * own kind) and the sliding log also close every connection and run on a skewed clock, one ahead
 * and one behind, through every phase; the other kinds through the phases a limiter decides. So
 * the matrix holds every condition without certifying all combinations.
 */
export const zooVariants: Variant[] = [
  zooVariant('fixed-clock', { connectionClose: true, skewMs: 45_000 }),
  zooVariant('fixed-first', { phases: LIMITER_PHASES }),
  zooVariant('sliding-log', { connectionClose: true, skewMs: -35_000 }),
  zooVariant('sliding-counter', { phases: LIMITER_PHASES }),
  zooVariant('token-bucket', { phases: LIMITER_PHASES }),
  zooVariant('gcra', { phases: LIMITER_PHASES }),
];
