/**
 * `npx tsx faults/cli.ts [name ...]`: runs cases of the fault matrix by hand and prints, per case,
 * the verdict, the failing requirement ids and the time. Names are fault or variant names,
 * `baseline`, `all-faults` or `all-variants`; `--list` prints the catalogue. `MATRIX_CONCURRENCY`
 * (default 2) cases run at once. The meta-test (`tests/faults/matrix.test.ts`) runs them all.
 * `--busy` keeps every core busy meanwhile (`faults/busy.ts`): the verdicts must be the same.
 * `--compiled` certifies with a tree compiled from the sources, as the meta-test does
 * (`faults/tree.ts`); default: the sources themselves, in this process.
 * `--minute-window-s <n>` runs the bundled reference server with "per minute" windows of `n`
 * seconds (60: real windows, as a staging deployment has) and certifies with certify's own
 * defaults instead of the matrix's short settings (their MAX_RETRY_AFTER_S is 30 s); each line
 * then gives how long a user's run takes on such windows.
 */
import os from 'node:os';
import { faults } from './catalogue/index.ts';
import { variants } from './variants.ts';
import { cleanup, runCase, type RunCaseOptions } from './harness.ts';
import { caseHolds, matrixCases, MATRIX_ENV } from './matrix.ts';
import { total } from './retry-watch.ts';
import { startBusyLoad } from './busy.ts';
import { compiledTree, SOURCE_TREE } from './tree.ts';
import { readSettings } from '../settings/index.ts';

const busy = process.argv.includes('--busy');
const windowFlag = process.argv.indexOf('--minute-window-s');
const windowS = windowFlag >= 0 ? Number(process.argv[windowFlag + 1]) : undefined;
if (windowS !== undefined && !(Number.isInteger(windowS) && windowS >= 1 && windowS <= 3600)) {
  console.error('--minute-window-s takes a whole number of seconds from 1 to 3600');
  process.exit(2);
}
const args = process.argv
  .slice(2)
  .filter((a, i, all) => a !== '--busy' && a !== '--compiled' && a !== '--minute-window-s' && all[i - 1] !== '--minute-window-s');
if (args.includes('--list')) {
  for (const f of faults) console.log(`fault    ${f.name.padEnd(42)} ${f.area.padEnd(20)} ${f.expect.join(', ')}`);
  for (const v of variants) console.log(`variant  ${v.name.padEnd(42)} ${v.choices.length} choices`);
  process.exit(0);
}
const all = matrixCases(true);
const wanted = all.filter(
  (c) =>
    args.length === 0 ||
    args.includes(c.name) ||
    (args.includes('all-faults') && c.kind === 'fault') ||
    (args.includes('all-variants') && c.kind === 'variant'),
);
const concurrency = Number(process.env.MATRIX_CONCURRENCY) || 2;
const compiled = process.argv.includes('--compiled') ? await compiledTree() : undefined;
const tree = compiled?.tree ?? SOURCE_TREE;
let next = 0;
let caught = 0;

/**
 * `--minute-window-s`: the case's certify with certify's defaults (and the case's own settings) on
 * windows of `windowS`; its time limit allows the 429 sequence's wait and each burst window's, each
 * up to a window, besides a default run's time. A case with its own deployment keeps its windows.
 */
const burstWindows = readSettings(process.env).values.LOAD_BURST_WINDOWS;
function ownWindows(c: (typeof all)[number], windowS: number): RunCaseOptions {
  if (c.upstream) console.log(`note ${c.id}: its own deployment keeps its own windows (--minute-window-s does not apply)`);
  return { tree, minuteWindowMs: windowS * 1000, timeoutMs: ((burstWindows + 4) * windowS + 240) * 1000 };
}
const t0 = Date.now();
async function worker() {
  while (next < wanted.length) {
    const c = wanted[next++]!;
    const out = await runCase(c, windowS === undefined ? { env: MATRIX_ENV, tree } : ownWindows(c, windowS));
    const missing = c.expect.filter((id) => !out.caught.includes(id));
    const ok = caseHolds(c, out);
    if (ok) caught++;
    console.log(
      `${ok ? 'ok  ' : 'MISS'} ${c.id.padEnd(50)} ${(c.phases && c.kind !== 'fault' ? `${out.verdict}*` : out.verdict).padEnd(5)} ${(out.durationMs / 1000).toFixed(1).padStart(5)} s  phases=${c.phases?.join('+') ?? 'all'}  expected [${c.expect.join(', ')}]  failing [${out.failing.join(', ')}]${missing.length ? `  MISSING ${missing.join(', ')}` : ''}  early=${total(out.retry.early)} bans=${total(out.retry.bans)} messages=${out.retry.messagesQueued ?? 0}${c.misleadsRetryAfter ? ' (misleads Retry-After)' : ''}${c.misleadsRemaining ? ' (misleads Remaining: bans tolerated)' : ''}${c.kind !== 'fault' ? `  not certified [${Object.keys(out.notCertified).join(', ')}]` : ''}`,
    );
    if (c.kind !== 'fault')
      for (const [id, why] of Object.entries(out.notCertified))
        console.log(`        ${id} not certified: ${why.replace(/^not certified: /i, '').slice(0, 300)}`);
    for (const seen of out.otherClients) console.log(`        pacing saw another client: ${seen.slice(0, 300)}`);
    if (!ok) {
      for (const id of out.failing) console.log(`        ${id}: ${out.reasons[id]}`);
      // A fault missed: what the run could not tell says why its requirement did not fail.
      if (c.kind === 'fault')
        for (const [id, why] of Object.entries(out.notCertified))
          console.log(`        ${id} not certified: ${why.replace(/^not certified: /i, '').slice(0, 600)}`);
      if (out.unevidenced.length && c.kind !== 'fault') console.log(`        without a test result: ${out.unevidenced.join(', ')}`);
      if (out.problems.length) console.log(`        run problems: ${out.problems.join('; ')}`);
      if (out.verdict === 'missing') console.log(out.tail);
    }
    cleanup(out);
  }
}
const stopBusy = busy ? startBusyLoad() : undefined;
if (busy) console.log(`a busy loop on each of ${os.availableParallelism()} cores meanwhile`);
try {
  await Promise.all(Array.from({ length: concurrency }, worker));
} finally {
  await stopBusy?.();
  compiled?.remove();
}
console.log(`${caught}/${wanted.length} as expected in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
if (wanted.some((c) => c.phases && c.kind !== 'fault'))
  console.log(
    `* a variant run on some phases only: certify's verdict counts the others as "no test result"; the variant holds when nothing its phases judged failed (caseHolds)`,
  );
