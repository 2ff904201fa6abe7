/**
 * Cost of certify's orchestration, measured side by side with a baseline (DEVELOPERS.md: ratios,
 * never a timed test). No test runs in either: both select nothing with `--grep`, so what is
 * measured is the fixed cost of running the suites at all.
 *
 * - baseline: one `playwright test` process over all three projects (what a plain run costs; it
 *   could not keep the phases in order, nor run later phases after a failure);
 * - certify: one process per phase (redacting reporter + list + blob), then `merge-reports` into
 *   HTML, JUnit and JSON.
 *
 * Usage: `tsx certify/bench.ts [rounds]` (default 3). Prints medians and the ratio.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { mergeReports, runPhase, runPlaywright, REPO_ROOT } from './phases.ts';
import { PHASES } from './env.ts';

const NOTHING = '--grep=@@certify-bench-selects-nothing@@';
const config = path.join(REPO_ROOT, 'playwright.config.ts');
const identity = (s: string) => s;

async function baseline(dir: string): Promise<number> {
  const t = Date.now();
  await runPlaywright(
    ['test', '--config', config, NOTHING, '--pass-with-no-tests', '--reporter=list', `--output=${dir}/out`],
    { ...process.env },
    identity,
  );
  return Date.now() - t;
}

async function orchestrated(dir: string): Promise<{ total: number; phases: number; merge: number }> {
  const t = Date.now();
  for (const phase of PHASES) {
    await runPhase(
      {
        phase,
        configFile: config,
        env: { ...process.env },
        blobFile: path.join(dir, 'blob', `${phase}.zip`),
        outputDir: path.join(dir, 'out'),
        timeoutS: 120,
        write: () => {},
        extraArgs: [NOTHING],
      },
      identity,
    );
  }
  const phases = Date.now() - t;
  await mergeReports(path.join(dir, 'blob'), dir, { ...process.env }, identity);
  return { total: Date.now() - t, phases, merge: Date.now() - t - phases };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

const rounds = Math.max(1, Number(process.argv[2]) || 3);
const base: number[] = [];
const orch: { total: number; phases: number; merge: number }[] = [];
for (let i = 0; i < rounds; i++) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'certify-bench-'));
  try {
    base.push(await baseline(dir));
    orch.push(await orchestrated(dir));
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log(
    `round ${i + 1}: baseline ${s(base[i]!)} | certify ${s(orch[i]!.total)} (phases ${s(orch[i]!.phases)}, merge ${s(orch[i]!.merge)})`,
  );
}
const b = median(base);
const o = median(orch.map((x) => x.total));
console.log(`\nmedian of ${rounds}: baseline ${s(b)}  certify ${s(o)}  ratio ${(o / b).toFixed(2)}  overhead ${s(o - b)} per run`);
console.log(
  `load average: ${os
    .loadavg()
    .map((x) => x.toFixed(1))
    .join(' ')} (${os.cpus().length} cores)`,
);
