/**
 * The phases run in one Playwright run (certify/steps/run-phases.ts): overlapping phases each write
 * into their own output folder, every phase ends with its report, and the same run writes the HTML
 * report, `junit.xml` and `results.json` when asked (no merge of reports afterwards).
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import path from 'node:path';
import config from '../../playwright.config.ts';
import { phaseOutputDir, REPO_ROOT } from '../../core/paths.ts';
import { runAllPhases } from '../../certify/steps/run-phases.ts';
import { runInBackground } from '../background.ts';

// Runs of several phases at once: at a lower priority than the tests that judge timing (tests/background.ts).
test.beforeAll(runInBackground);

test('the conformance config gives each project (phase) its own output folder, as certify does', () => {
  const reportsDir = path.resolve(process.env.REPORTS_DIR ?? 'reports');
  for (const p of config.projects ?? []) expect(path.resolve(p.outputDir ?? ''), p.name).toBe(phaseOutputDir(reportsDir, p.name ?? ''));
});

/**
 * A scratch conformance config: four phases, each with a worker of its own, whose tests keep
 * writing into their output folders. Its tests live in a folder of their own, apart from the reports
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
export default defineConfig({
  testDir: './suite',
  testMatch: 'write.spec.ts',
  workers: 4,
  projects: [0, 1, 2, 3].map((i) => ({ name: 'phase' + i, workers: 1, outputDir: 'out/phase' + i })),
});
`,
  );
  return file;
}

test('phases run together in one run, all end with their report; with reports asked, the same run writes html, junit.xml and results.json', async () => {
  test.setTimeout(480_000); // a deadline against a hang, not a speed bound: a busy runner stretches the phases
  const dir = fs.mkdtempSync(path.join(REPO_ROOT, 'test-results', 'overlap-run-'));
  try {
    const configFile = scratchConfig(dir);
    for (const round of [1, 2]) {
      const reportsDir = path.join(dir, `reports-${round}`);
      const run = {
        config: { phaseTimeoutS: 200 } as Parameters<typeof runAllPhases>[0]['config'],
        phases: ['phase0', 'phase1', 'phase2', 'phase3'],
        configFile,
        reportsDir,
        workDir: path.join(reportsDir, '.certify'),
        redactionsDir: path.join(reportsDir, '.certify', 'redactions'),
        // The second round writes no reports (certify's `verdictOnly`).
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
      for (const f of ['html/index.html', 'junit.xml', 'results.json'])
        expect(fs.existsSync(path.join(reportsDir, f)), `round ${round}: ${f}`).toBe(round === 1);
      const results = fs.readdirSync(path.join(run.workDir, 'phases')).filter((f) => f.endsWith('.json'));
      expect(results.sort()).toEqual([...run.phases.map((p) => `${p}.json`), 'run.json'].sort());
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
