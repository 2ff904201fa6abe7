/**
 * A certificate without internals: sections are the spec's sections and the HTTP rules by RFC
 * clause, no issue number or path outside the repository appears, quotes read as sentences and
 * table rows (never `a | b | c` fragments), the band is amber when a baseline accepted failures,
 * and the overload chart draws the windows its bursts ran in. Rendered from the real ledger and
 * looked at in headless Chromium.
 */
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { test, expect } from './scratch.ts';
import { chartedWindows } from '../../certify/certificate/build.ts';
import { writeCertificate } from '../../certify/certificate/index.ts';
import { quoteSentence, rowCells, tableHeaderOf } from '../../certify/certificate/quotes.ts';
import { computeVerdict, type TestRecord, type VerdictInput } from '../../certify/verdict.ts';
import { readGateInputs } from '../../certify/steps/judge.ts';
import { loadLedger } from '../../core/ledger.ts';
import { SPEC_FILE } from '../../core/paths.ts';

const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** What a certificate must never show: issue numbers, the harness's notes, paths outside the repository. */
const INTERNAL = [/\bissues?\s*#?\d+/i, /shared\/notes/, /\.\.\//, /\/work\//, /notes\/http-rules/];

/** Every requirement of the real ledger: ERR-03 and AUTH-12 fail, the rest passes. */
function fullReport(gate: VerdictInput['gate'] = {}) {
  const ledger = loadLedger();
  const tests: TestRecord[] = ledger
    .filter((r) => !r.excluded)
    .map((r) => ({
      title: `${r.id} checked`,
      project: 'functional',
      tags: [],
      outcome: ['ERR-03', 'AUTH-12'].includes(r.id) ? 'failed' : 'passed',
      errors: ['ERR-03', 'AUTH-12'].includes(r.id) ? [`${r.id}: GET /v1/inventory → 401: expected status an integer, observed "401"`] : [],
      annotations: [],
      requests: 1,
    }));
  return computeVerdict({
    ledger,
    tests,
    profile: 'full',
    target: { kind: 'external', baseUrl: 'https://staging.example.com/v1' },
    generatedAt: '2026-11-24T12:00:00.000Z',
    gate,
  });
}

test('quotes from a table of the spec read as a row under its header, and as a sentence', () => {
  const spec = fs.readFileSync(SPEC_FILE, 'utf8');
  const cases: [string, string[] | undefined, string][] = [
    [
      'status | integer | yes | The HTTP status code',
      ['Field', 'Type', 'Required', 'Meaning'],
      'Field: status; Type: integer; Required: yes; Meaning: The HTTP status code',
    ],
    [
      '200 | JSON array of InventoryItem: current stock levels for all pets',
      ['Item', 'Value'],
      '200: JSON array of InventoryItem: current stock levels for all pets',
    ],
    [
      '| Free | 60 | 1,000 |',
      ['Plan', 'Requests per minute', 'Requests per day'],
      'Plan: Free; Requests per minute: 60; Requests per day: 1,000',
    ],
    ['A missing or invalid key yields 401 with an Error body.', undefined, 'A missing or invalid key yields 401 with an Error body.'],
  ];
  for (const [quote, header, sentence] of cases) {
    expect(tableHeaderOf(quote, [spec]), quote).toEqual(header);
    expect(quoteSentence(quote, header), quote).toBe(sentence);
  }
  expect(rowCells('a sentence with no cells')).toBeUndefined();
  expect(quoteSentence('a | b')).toBe('a — b');
});

test("the overload chart draws the windows its bursts ran in, not the probes' or the recovery's", () => {
  const windows = [
    { reset: '10', successes: 60, limit: 60 },
    { reset: '20', successes: 1, limit: 60 },
  ];
  expect(chartedWindows(windows, [{ resets: ['10'] }])).toEqual([{ label: 'burst 1', successes: 60, limit: 60 }]);
  // Figures without the bursts' windows (an older load.json): every window, as before.
  expect(chartedWindows(windows, undefined).map((w) => w.label)).toEqual(['window 1', 'window 2']);
});

test('certificate.html names spec sections and RFC clauses, no internal pointer, readable quotes, amber over accepted failures (Chromium)', async ({
  scratch,
}, testInfo) => {
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
  const dir = scratch('reports');
  fs.mkdirSync(dir, { recursive: true });
  const load = {
    checks: {
      overload: {
        status: 'pass',
        figures: {
          bursts: [{ resets: ['10'] }],
          windows: [
            { reset: '10', successes: 60, limit: 60 },
            { reset: '20', successes: 1, limit: 60 },
            { reset: '30', successes: 1, limit: 60 },
          ],
        },
      },
    },
  };
  fs.writeFileSync(path.join(dir, 'load.json'), JSON.stringify(load));
  const baseline = scratch('baseline.yaml');
  fs.writeFileSync(baseline, 'knownFailures:\n  - ERR-03\n  - AUTH-12\n');
  const gate = readGateInputs({ CONFORMANCE_BASELINE: baseline });
  expect(gate.errors).toEqual([]);
  const { htmlFile, certificate } = writeCertificate({ report: fullReport(gate.inputs.options), reportsDir: dir });
  expect(certificate.results.gate.result).toBe('pass');
  expect(certificate.results.requirements.find((r) => r.id === 'ERR-03')?.quoteHeader).toEqual(['Field', 'Type', 'Required', 'Meaning']);

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`file://${htmlFile}`);
    const png = await page.screenshot({ path: testInfo.outputPath('certificate.png'), fullPage: true });
    await testInfo.attach('certificate.png', { body: png, contentType: 'image/png' });
    await page.locator('details').evaluateAll((ds) => ds.forEach((d) => d.setAttribute('open', '')));
    const text = await page.locator('body').innerText();
    for (const pattern of INTERNAL) expect(text, `the certificate shows ${pattern}`).not.toMatch(pattern);
    expect(text, 'no quote is shown as a markdown table fragment').not.toMatch(/\S \| \S/);

    const sections = await page.locator('#matrix h3').allInnerTexts();
    expect(sections).toEqual([
      'What the service does',
      'Resources and their fields',
      'States and transitions',
      'Endpoints',
      'Authentication',
      'Events',
      'Errors',
      'Limits',
      'Versioning',
      'HTTP rules, by RFC clause',
      "Project rules (this harness's own, not spec conformance)",
    ]);
    await expect(page.locator('#req-ERR-03 table.quote th')).toHaveText(['Field', 'Type', 'Required', 'Meaning']);
    await expect(page.locator('#req-ERR-03 table.quote td')).toHaveText(['status', 'integer', 'yes', 'The HTTP status code']);
    await expect(page.locator('#req-AUTH-05 td').nth(0)).toContainText('RFC 9110 §11.1');

    // Known failures accepted: amber, not green.
    const band = page.locator('header.verdict');
    await expect(page.getByTestId('verdict')).toHaveText('PASS (with known failures)');
    const color = await band.evaluate((el) => getComputedStyle(el).backgroundColor);
    expect(color).toBe('rgb(168, 100, 0)');
    // One burst configured: one window drawn.
    await expect(page.locator('#load svg[aria-label^="successes per window"] rect')).toHaveCount(1);
  } finally {
    await browser.close();
  }
});
