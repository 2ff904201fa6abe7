/**
 * The two capacity runs at once (ledger LOAD-01 and LOAD-04), as load tools run scenarios side by
 * side: the mix and the listing, each at `LOAD_RATE` for `LOAD_DURATION_S`, together on LOAD_KEY.
 * A faster run never buys a verdict, so the attempt at once is kept only when it says nothing but
 * evidence:
 * - it goes at once only in the open model (two saturating runs would judge each other), when the
 *   mix runs first (the listing alone never starts the mix), and when one request shows an
 *   `X-RateLimit-Remaining` (Limits rule 1) that covers every request both runs may send, so no
 *   conformant limiter, fixed, sliding, bucket or GCRA, refuses them unless another client spends
 *   the key;
 * - when either run shows anything beyond evidence (a failure, a threshold, a warning, not
 *   certified, or a 429), both are run again in turn, each alone at `LOAD_RATE`, and only those
 *   are judged: what twice the rate caused is never held against the server. A stock the attempt
 *   left changed is kept (the restore ran after the load, and the change is the run's own).
 */
import type { Finding } from '../../core/finding.ts';
import type { OncePerRun } from '../fixtures/run.ts';
import { CAPACITY, headroomOf, runCapacityCheck, type CapacityConfig, type CapacityOutcome, type Headroom } from './capacity-check.ts';

export type Mode = 'list' | 'mix';

/** The once-per-run decision, shared by both capacity tests (serialisable). */
export interface Together {
  /** Both outcomes, when the attempt at once is kept: each test judges its own. */
  kept?: Record<Mode, CapacityOutcome>;
  /** Why the runs went in turn, or what the attempt at once showed: an evidence line. */
  why: string;
  /** Requests of the probe and of an attempt at once that was not kept, per run: counted in the run that goes in turn. */
  spent: Record<Mode, number>;
  /** Findings of the attempt at once that stand whatever the rate: a stock left changed (the mix's). */
  carried: Finding[];
}

export interface TogetherDeps {
  probe: (config: CapacityConfig) => Promise<Headroom>;
  run: (config: CapacityConfig) => Promise<CapacityOutcome>;
}

const DEPS: TogetherDeps = { probe: headroomOf, run: runCapacityCheck };

/** The most requests one capacity run may send: its load, its first request and the restore of its pet. */
export function plannedRequests(c: Pick<CapacityConfig, 'ratePerS' | 'durationS' | 'maxRequests' | 'mode'>): number {
  const load = Math.min(Math.ceil(c.ratePerS * c.durationS), c.maxRequests);
  return load + (c.mode === 'mix' ? 5 : 1);
}

/**
 * Whether both runs may go at once: open model, and the key's Remaining covers both (a reason
 * otherwise). A Remaining of the day or of a bucket covers them as well as the minute's: the room
 * only grows while they run, unless another client spends it.
 */
export function atOnceAllowed(configs: Record<Mode, CapacityConfig>, headroom: Headroom): { ok: boolean; why: string } {
  const need = plannedRequests(configs.mix) + plannedRequests(configs.list);
  if (configs.mix.saturate || configs.list.saturate)
    return { ok: false, why: 'LOAD_SATURATE: two saturating runs at once would judge each other' };
  if (headroom.status === undefined) return { ok: false, why: `the first request on <LOAD_KEY> got no answer (${headroom.error})` };
  if (headroom.status < 200 || headroom.status > 299)
    return { ok: false, why: `the first request on <LOAD_KEY> was answered ${headroom.status}` };
  if (headroom.remaining === undefined)
    return { ok: false, why: 'the first answer on <LOAD_KEY> showed no valid X-RateLimit-Remaining, so the room for both is unknown' };
  if (headroom.remaining < need)
    return { ok: false, why: `<LOAD_KEY> showed X-RateLimit-Remaining ${headroom.remaining}, less than the ${need} both runs may send` };
  return { ok: true, why: `<LOAD_KEY> showed X-RateLimit-Remaining ${headroom.remaining}, room for the ${need} both runs may send` };
}

/**
 * What beyond evidence a run of the attempt showed, in a few words per finding (no load counts too):
 * the attempt is kept only when both runs show nothing.
 */
function beyondEvidence(mode: Mode, o: CapacityOutcome): string[] {
  const out = o.findings.filter((f) => f.level !== 'note').map((f) => `${mode}: ${f.level} ${f.part ?? f.id}`);
  return o.figures.load === null && out.length === 0 ? [`${mode}: no load ran`] : out;
}

const inTurn = (why: string, spent: Record<Mode, number>, carried: Finding[] = []): Together => ({ why, spent, carried });

/** Probes the key, then runs both at once when allowed; keeps them only when both are evidence only. */
export async function runTogether(configs: Record<Mode, CapacityConfig>, deps: TogetherDeps = DEPS): Promise<Together> {
  const headroom = await deps.probe(configs.mix);
  const spent = { mix: headroom.requests, list: 0 };
  const allowed = atOnceAllowed(configs, headroom);
  if (!allowed.ok) return inTurn(`the listing and the mix run in turn: ${allowed.why}`, spent);
  const [mix, list] = await Promise.all([deps.run(configs.mix), deps.run(configs.list)]);
  const beyond = [...beyondEvidence('mix', mix), ...beyondEvidence('list', list)];
  if (beyond.length === 0) {
    const line = `the listing and the mix ran at once (${allowed.why}); both showed evidence only, so each is judged as it ran`;
    mix.figures.requests.setup += headroom.requests;
    mix.figures.requests.total += headroom.requests;
    for (const o of [mix, list]) o.evidence.push(line);
    return { kept: { mix, list }, why: line, spent: { mix: 0, list: 0 }, carried: [] };
  }
  const carried = mix.findings.filter((f) => f.part === CAPACITY.restored && f.level !== 'note');
  return inTurn(
    `the listing and the mix ran at once first (${allowed.why}) and showed ${beyond.join(', ')}; each runs again alone at LOAD_RATE and only that run is judged`,
    { mix: spent.mix + mix.figures.requests.total, list: list.figures.requests.total },
    carried,
  );
}

/** A run that went in turn, with what the attempt at once spent and left. */
function afterAttempt(o: CapacityOutcome, t: Together, mode: Mode): CapacityOutcome {
  const earlier = t.spent[mode];
  o.figures.requests.setup += earlier;
  o.figures.requests.total += earlier;
  o.evidence.unshift(t.why + (earlier ? ` (${earlier} requests of it counted in this run's)` : ''));
  if (mode === 'mix') o.findings.push(...t.carried);
  return o;
}

/**
 * The outcome of one capacity run for this run: the mix decides once whether both go at once
 * (`runTogether`); the listing only reads that decision (run alone when the mix did not come first).
 */
export async function capacityOutcome(
  mode: Mode,
  configOf: (m: Mode) => CapacityConfig,
  once: OncePerRun,
  name: string,
  deps: TogetherDeps = DEPS,
): Promise<CapacityOutcome> {
  const together = await once<Together>(name, () =>
    mode === 'mix'
      ? runTogether({ mix: configOf('mix'), list: configOf('list') }, deps)
      : Promise.resolve(inTurn('the listing runs alone: it came before the mix', { mix: 0, list: 0 })),
  );
  if (together.kept) return together.kept[mode];
  return afterAttempt(await deps.run(configOf(mode)), together, mode);
}
