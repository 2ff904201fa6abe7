import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type Page } from '@playwright/test';
import { test, expect } from '../test.ts';
import { loadLedger } from '../../core/ledger.ts';
import { finding } from '../../core/finding.ts';
import { writeCertificate } from '../../certify/certificate/index.ts';
import { renderMarkdown } from '../../certify/markdown.ts';
import { computeVerdict, type TestRecord } from '../../certify/verdict.ts';
import { emptyRepair } from '../../suites/journal/repair.ts';

/**
 * The certificate's first screen (1280×800, Debian's Chromium) is what a reader acts on: the
 * verdict, the gate's reasons and the failures, not a list of every message the run posted. Shown
 * with the real ledger (its exclusions included) and a run that posted 164 messages, as a full run
 * of the bundled reference server does.
 */

const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run'];
const FAILED = ['AUTH-03', 'ERR-01', 'UPD-04', 'MSG-02', 'GEN-08'];

function record(id: string, failed: boolean): TestRecord {
  const f = finding({
    id,
    level: 'fail',
    message: `GET /v1/inventory/987654321 → 404 (${id})`,
    expected: 'an Error body with code, message and status',
    observed: '"code" is missing',
    curl: `curl -sS -i -X GET 'https://staging.example.com/v1/inventory/987654321' -H "Authorization: Bearer $API_KEY"`,
  });
  return {
    title: `${id} a check of ${id}`,
    project: id.startsWith('GEN') ? 'generated' : 'functional',
    tags: [],
    outcome: failed ? 'failed' : 'passed',
    errors: failed ? [`Error: ${id}: expected an Error body`] : [],
    annotations: [],
    requests: 2,
    ...(failed ? { findings: [f] } : {}),
  };
}

/** A full run's report on the real ledger: every requirement passes but `failed`, one should-level one warns; 164 messages posted. */
function runReport(failed: readonly string[]) {
  const ledger = loadLedger();
  const warned = ledger.find((r) => r.level === 'should' && !r.excluded)!.id;
  const tests = ledger.filter((r) => !r.excluded).map((r) => record(r.id, failed.includes(r.id)));
  tests
    .find((t) => t.title.startsWith(`${warned} `))!
    .annotations.push({ type: 'warning', description: `${warned}: a should-level finding` });
  const report = computeVerdict({
    ledger,
    tests,
    profile: 'full',
    target: { kind: 'external', baseUrl: 'https://staging.example.com/v1', apiUrl: 'https://staging.example.com/quickstart' },
    generatedAt: '2026-12-01T23:00:00.000Z',
  });
  const messages = Array.from({ length: 164 }, (_, i) => ({
    address: 'https://staging.example.com/quickstart',
    at: `2026-12-01T23:00:${String(i % 60).padStart(2, '0')}.000Z`,
    by: i < 150 ? 'generated GEN-01' : `functional MSG-0${(i % 6) + 1}`,
    file: 'journal.jsonl',
  }));
  report.journal = { file: 'journal.jsonl', repair: emptyRepair(), end: { ...emptyRepair(), messages }, requests: 1 };
  return report;
}

/** The list items and table rows a reader sees without scrolling (not those behind a closed `<details>`). */
function visibleItems(page: Page): Promise<number> {
  return page.evaluate(
    () =>
      [...document.querySelectorAll('li, tr')].filter((e) => {
        const r = e.getBoundingClientRect();
        return r.height > 0 && r.width > 0 && r.top < window.innerHeight && r.bottom > 0;
      }).length,
  );
}

for (const kind of ['pass', 'fail'] as const) {
  test(`certificate.html (${kind}): the first screen in Chromium shows the verdict and at most 12 list items or table rows`, async ({}, testInfo) => {
    expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'certificate-first-screen-'));
    const report = runReport(kind === 'fail' ? FAILED : []);
    const { htmlFile } = writeCertificate({ report, reportsDir: dir, env: {} });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      await page.goto(`file://${htmlFile}`);
      await testInfo.attach(`first-screen-${kind}.png`, { body: await page.screenshot(), contentType: 'image/png' });
      const verdict = page.getByTestId('verdict');
      await expect(verdict).toHaveText(kind === 'pass' ? 'PASS' : 'FAIL');
      await expect(verdict).toBeInViewport({ ratio: 1 });
      expect(await visibleItems(page), 'list items and table rows on the first screen').toBeLessThanOrEqual(12);
      if (kind === 'fail') {
        const first = page.getByTestId('failing-requirement').first();
        await expect(first).toContainText(/^(AUTH-03|ERR-01|UPD-04|MSG-02|GEN-08) \(must\)/);
        await expect(first).toContainText('expected an Error body with code, message and status');
        await expect(first).toContainText('observed "code" is missing');
        await expect(first.locator('pre.curl')).toBeInViewport();
      }
      // The messages are counted by check; each is behind one click, as are the ledger's exclusions.
      await expect(page.locator('#left-on-target')).toContainText('164 messages posted: GEN-01 150, MSG-01 3');
      await expect(page.locator('#left-on-target details')).not.toHaveAttribute('open');
      const excluded = loadLedger().filter((r) => r.excluded).length;
      await expect(page.locator('#summary')).toContainText(`${excluded} out of scope`);
      await expect(page.locator('#out-of-scope summary')).toBeAttached();
      await expect(page.locator('#out-of-scope li')).toHaveCount(excluded);
      await expect(page.locator('#out-of-scope li').first()).toBeHidden();
    } finally {
      await browser.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}

test('conformance.md opens with the verdict and the failures; the messages posted are counted, not listed; out of scope behind one click', () => {
  const md = renderMarkdown(runReport(FAILED));
  const at = (s: string) => {
    const i = md.indexOf(s);
    expect(i, `conformance.md holds ${s}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  expect(at('**Gate: ❌ FAIL**')).toBeLessThan(at('## Failures (5)'));
  expect(at('## Failures (5)')).toBeLessThan(at('## Warnings'));
  expect(at('## Warnings')).toBeLessThan(at('## The run'));
  expect(at('## The run')).toBeLessThan(at('## What the run left on the target'));
  expect(at('## What the run left on the target')).toBeLessThan(at('## All requirements by spec section'));
  expect(at('## All requirements by spec section')).toBeLessThan(at('## Out of scope'));
  expect(md).toContain('164 messages posted: GEN-01 150, MSG-01 3');
  expect(md).not.toContain('2026-12-01T23:00:01.000Z');
  expect(md.slice(at('## Out of scope'))).toMatch(/^## Out of scope \(\d+\)\n\n<details><summary>/);
  expect(md).toContain('- expected: an Error body with code, message and status');
  expect(md).toContain("curl -sS -i -X GET 'https://staging.example.com/v1/inventory/987654321'");
  // The head is short: the gate and its reasons, the target, profile and counts.
  expect(md.split('## Failures')[0]!.split('\n').length).toBeLessThan(20);
});
