/**
 * Overlapping phases never share an output: each phase empties only its own Playwright output
 * folder when it starts, and writes its own blob and redaction log. Before, every phase ran with
 * one `--output` folder, so a phase starting late emptied the folder under a phase still writing,
 * and a conformant server could end with "phase ended without a report" (exit 5).
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import path from 'node:path';
import config from '../../playwright.config.ts';
import { phaseOutputDir, REPO_ROOT } from '../../core/paths.ts';
import { PHASES } from '../../certify/phase-list.ts';
import { runAllPhases } from '../../certify/steps/run-phases.ts';
import { phaseFiles } from '../../certify/steps/prepare.ts';
import { runInBackground } from '../background.ts';

// Runs of several phases at once: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

const nested = (a: string, b: string) => {
  const rel = path.relative(a, b);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

test('every phase has an output folder, a blob and a redaction log of its own, none inside another', () => {
  const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'test-results', 'overlap-files-'));
  try {
    const run = {
      reportsDir: dir,
      blobDir: path.join(dir, 'blob'),
      redactionsDir: path.join(dir, '.certify', 'redactions'),
      resultsDir: path.join(dir, '.certify', 'results'),
    };
    const files = PHASES.map((p) => phaseFiles(run, p));
    for (const [i, a] of files.entries()) {
      expect(fs.statSync(a.outputDir).isDirectory(), `${PHASES[i]}: its output folder exists before it starts`).toBe(true);
      for (const [j, b] of files.entries()) {
        if (i === j) continue;
        expect(nested(a.outputDir, b.outputDir), `${PHASES[i]} and ${PHASES[j]} share an output folder`).toBe(false);
        expect(a.blobFile).not.toBe(b.blobFile);
        expect(a.redactionsFile).not.toBe(b.redactionsFile);
        expect(a.jsonFile).not.toBe(b.jsonFile);
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('the conformance config gives each project (phase) its own output folder, as certify does', () => {
  const reportsDir = path.resolve(process.env.REPORTS_DIR ?? 'reports');
  for (const p of config.projects ?? []) expect(path.resolve(p.outputDir ?? ''), p.name).toBe(phaseOutputDir(reportsDir, p.name ?? ''));
});

/**
 * A scratch conformance config: four phases whose tests keep writing into their output folders;
 * phase k starts k × 600 ms late. Its tests live in a folder of their own, apart from the reports
 * (as `suites/` and `reports/` are): a runner looking for test files must not walk the folders
 * other phases are emptying and filling.
 */
function scratchConfig(dir: string): string {
  fs.mkdirSync(path.join(dir, 'suite'));
  fs.writeFileSync(
    path.join(dir, 'suite', 'write.spec.ts'),
    `import { test } from '@playwright/test';
import fs from 'node:fs';
for (const n of [1, 2]) {
  test('writes ' + n, async ({}, testInfo) => {
    const until = Date.now() + 2500;
    for (let i = 0; Date.now() < until; i++) {
      const file = testInfo.outputPath('part-' + (i % 50), 'f-' + i + '.txt');
      fs.mkdirSync(file.slice(0, file.lastIndexOf('/')), { recursive: true });
      fs.writeFileSync(file, 'x'.repeat(512));
      if (i % 20 === 0) await new Promise((r) => setTimeout(r, 5));
    }
  });
}
`,
  );
  const file = path.join(dir, 'overlap.config.ts');
  fs.writeFileSync(
    file,
    `import { defineConfig } from '@playwright/test';
const arg = process.argv.find((a) => a.startsWith('--project='));
const k = arg ? Number(arg.slice(-1)) : 0;
// Start-up skew: a late phase empties its output folder while the earlier ones write.
if (k) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, k * 600);
export default defineConfig({
  testDir: './suite',
  testMatch: 'write.spec.ts',
  workers: 1,
  projects: [0, 1, 2, 3].map((i) => ({ name: 'phase' + i })),
});
`,
  );
  return file;
}

test('phases started together, one late, all end with their report: no phase empties what another writes; without a merge, no blob', async () => {
  test.setTimeout(480_000); // a deadline against a hang, not a speed bound: a busy runner stretches the phases
  const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'test-results', 'overlap-run-'));
  try {
    const configFile = scratchConfig(dir);
    for (const round of [1, 2]) {
      const reportsDir = path.join(dir, `reports-${round}`);
      const run = {
        config: { phaseTimeoutS: 60 } as Parameters<typeof runAllPhases>[0]['config'],
        phases: ['phase0', 'phase1', 'phase2', 'phase3'],
        configFile,
        reportsDir,
        blobDir: path.join(reportsDir, 'blob'),
        redactionsDir: path.join(reportsDir, '.certify', 'redactions'),
        resultsDir: path.join(reportsDir, '.certify', 'results'),
        // The second round merges no reports (certify's `verdictOnly`): its phases write no blob.
        mergeReports: round === 1,
      };
      let said = '';
      const out = await runAllPhases(
        run,
        { ...process.env, REPORTS_DIR: reportsDir },
        { secrets: [], redact: (s) => s, say: (s) => (said += s) },
        () => ({ requests: 0, refused: 0, waits: 0 }),
      );
      expect(out.runErrors, `round ${round}:\n${said}`).toEqual([]);
      expect(
        out.results.map((r) => [r.phase, r.exitCode, r.reportWritten]),
        `round ${round}:\n${said}`,
      ).toEqual(run.phases.map((p) => [p, 0, true]));
      const blobs = fs.existsSync(run.blobDir) ? fs.readdirSync(run.blobDir) : [];
      expect(blobs.sort(), `round ${round}`).toEqual(round === 1 ? run.phases.map((p) => `${p}.zip`) : []);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
