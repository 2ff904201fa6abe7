/**
 * Step "list what is left out": the phases the profile does not run are listed (`playwright test
 * --list`), never run, and each of their checks becomes a not-certified record with the reason,
 * so the report names everything the run did not certify.
 */
import { testsFromJsonReport, toNotRun } from '../../core/playwright-report.ts';
import type { TestRecord } from '../verdict.ts';

export interface LeftOut {
  notRun: TestRecord[];
  /** One console line per phase left out. */
  lines: string[];
  runErrors: string[];
}

/** Lists the checks of `phases` (left out by `profile`) as not certified; `list` runs the listing (undefined: it failed). */
export async function listLeftOut(
  phases: readonly string[],
  profile: string,
  list: (phases: readonly string[]) => Promise<unknown | undefined>,
): Promise<LeftOut> {
  const out: LeftOut = { notRun: [], lines: [], runErrors: [] };
  if (!phases.length) return out;
  const listing = await list(phases);
  const listed = listing ? testsFromJsonReport(listing) : [];
  for (const phase of phases) {
    const reason = `CONFORMANCE_PROFILE=${profile} does not run the ${phase} phase`;
    const tests = listed.filter((x) => x.project === phase).map((t) => toNotRun(t, reason));
    out.notRun.push(...tests);
    out.lines.push(
      `▷ phase ${phase} not run (profile ${profile}): ${tests.length} check${tests.length === 1 ? '' : 's'} listed as not certified\n`,
    );
  }
  if (!listing)
    out.runErrors.push(`could not list the checks of the phases not run (${phases.join(', ')}); they are missing from the report`);
  return out;
}
