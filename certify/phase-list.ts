/**
 * The phases of a certify run, derived from the Playwright config's projects (the one home of the
 * phase list, `playwright.config.ts`): a new project becomes a phase without editing certify.
 */
import config, { type PhaseMetadata } from '../playwright.config.ts';

/** A phase: the name of one Playwright project of the conformance config. */
export type Phase = string;

const projects = (config.projects ?? []).map((p) => ({ name: p.name ?? '', metadata: (p.metadata ?? {}) as Partial<PhaseMetadata> }));

/** Every phase, in run order. */
export const PHASES: readonly Phase[] = projects.map((p) => p.name);

/** The phases a profile runs, in run order (`readonly`: only those whose project says `metadata.readonly`). */
export function phasesOfProfile(profile: string): Phase[] {
  return projects.filter((p) => profile !== 'readonly' || p.metadata.readonly === true).map((p) => p.name);
}

/**
 * The phases that must have ended before `phase` starts (`metadata.after`), among `running`; none
 * when the run has the key the phase works on alone (`metadata.aloneWith`, among `keysGiven`).
 */
export function phasesBefore(phase: Phase, running: readonly Phase[] = PHASES, keysGiven: readonly string[] = []): Phase[] {
  const metadata = projects.find((p) => p.name === phase)?.metadata ?? {};
  if (metadata.aloneWith && keysGiven.includes(metadata.aloneWith)) return [];
  return (metadata.after ?? []).filter((p) => running.includes(p));
}

/** Whether `phase` starts first (`metadata.startFirst`). */
export function startsFirst(phase: Phase): boolean {
  return projects.find((x) => x.name === phase)?.metadata.startFirst === true;
}

/**
 * Whether `phase` starts only once a `metadata.startFirst` phase that starts with it has sent its
 * first request (or a short while has passed, `START_FIRST_MAX_MS`): the phases of a run start at
 * once, and on a small runner their processes starting take the cores for seconds, while a phase
 * timed by windows only loses time until its first request. A phase with phases to wait for
 * (`phasesBefore`) starts after them anyway.
 */
export function yieldsAtStart(phase: Phase, running: readonly Phase[] = PHASES, keysGiven: readonly string[] = []): boolean {
  const startsAtOnce = (p: Phase) => phasesBefore(p, running, keysGiven).length === 0;
  const first = (p: Phase) => projects.find((x) => x.name === p)?.metadata.startFirst === true;
  return !first(phase) && startsAtOnce(phase) && running.some((p) => p !== phase && first(p) && startsAtOnce(p));
}

/** The longest a phase that yields at start waits for the first request of the phases it yields to. */
export const START_FIRST_MAX_MS = 3_000;
