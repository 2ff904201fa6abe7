/**
 * Settings of the load phase (suites/load/README.md): the open model's rate and duration, the
 * explicit opt-ins (saturation, unverified TLS), the user's own thresholds (no default: the spec
 * sets no latency or error rate) and the caps that bound what a load check may spend on a real key.
 */
import { defineGroup, setting } from './define.ts';

export const LOAD_SETTINGS = defineGroup('load', 'Load phase', [
  setting({
    name: 'LOAD_RATE',
    kind: 'number',
    min: 0,
    minExclusive: true,
    max: 10_000,
    default: 100,
    unit: 'requests per second',
    help: 'Arrival rate of a capacity run (open model: requests start at this rate, whatever the answers); the two runs at once send twice it on LOAD_KEY.',
  }),
  setting({
    name: 'LOAD_DURATION_S',
    kind: 'number',
    min: 0,
    minExclusive: true,
    max: 3600,
    default: 5,
    unit: 'seconds',
    help: 'Seconds of load per capacity run (two runs in the full profile, LOAD_RATE × LOAD_DURATION_S requests each, at once when LOAD_KEY has room for both).',
  }),
  setting({
    name: 'LOAD_CONNECTIONS',
    kind: 'integer',
    min: 1,
    max: 1000,
    default: 32,
    help: 'Most requests of a capacity run in flight at once (an arrival finding all busy is dropped and counted); with LOAD_SATURATE, the connections that saturate.',
  }),
  setting({
    name: 'LOAD_SATURATE',
    kind: 'boolean',
    default: false,
    help: 'Opt-in: saturate the target (closed model, LOAD_CONNECTIONS sending back to back for LOAD_DURATION_S, at most LOAD_MAX_REQUESTS) instead of the open model.',
  }),
  setting({
    name: 'LOAD_P99_MS',
    kind: 'number',
    min: 0,
    minExclusive: true,
    unit: 'milliseconds',
    help: "Your gate, not the spec's: p99 latency of a capacity run must stay below it (LOAD-04); a breach that the latencies with the harness's own holds taken out do not show is not certified. Also the other key's latency during the burst (warning). Unset: not judged.",
  }),
  setting({
    name: 'LOAD_MAX_ERROR_RATE',
    kind: 'number',
    min: 0,
    max: 1,
    help: "Your gate, not the spec's: share of failed requests (non-2xx, no answer) of a capacity run must stay at or below it (LOAD-04). Unset: not judged.",
  }),
  setting({ name: 'LOAD_MAX_REQUESTS', kind: 'integer', min: 1, default: 20_000, help: 'Hard cap on the requests of one capacity run.' }),
  setting({
    name: 'LOAD_TIMEOUT_S',
    kind: 'integer',
    min: 1,
    max: 120,
    default: 10,
    unit: 'seconds',
    help: 'A load request not answered completely within this fails LOAD-01.',
  }),
  setting({
    name: 'LOAD_BURST_WINDOWS',
    kind: 'integer',
    min: 1,
    max: 10,
    default: 2,
    help: "Windows the overload burst (Remaining + 1 concurrent requests at the start of a fresh window) is sent in: the first opens when the 429 sequence's Retry-After ends, each further one at the next fresh window (up to a whole window later: a minute on one-minute windows).",
  }),
  setting({
    name: 'LOAD_BURST_MAX',
    kind: 'integer',
    min: 2,
    default: 1001,
    help: 'Largest burst (Remaining + 1) the overload check sends; a larger limit is not certified, naming this variable.',
  }),
  setting({
    name: 'LOAD_BURST_CONNECTIONS',
    kind: 'integer',
    min: 1,
    max: 2000,
    default: 500,
    help: 'Most requests of a burst in flight at once; a larger burst goes in waves of this many, each once the one before is answered, and stops at its first 429.',
  }),
  setting({
    name: 'INSECURE_TLS',
    kind: 'boolean',
    default: false,
    help: "Opt-in: do not verify the target's TLS certificate (preflight, suites, load); the report says so. Private CAs: NODE_EXTRA_CA_CERTS instead. NODE_TLS_REJECT_UNAUTHORIZED=0 is refused.",
  }),
] as const);
