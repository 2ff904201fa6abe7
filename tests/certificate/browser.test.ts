import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium } from '@playwright/test';
import { test, expect } from '../test.ts';
import { writeCertificate } from '../../certify/certificate/index.ts';
import { failingReport } from './reports.ts';

/** Debian's chromium (`apt-get install chromium`); the test fails, never skips, without it. */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

const LOAD = {
  checks: {
    capacity: {
      status: 'pass',
      figures: { load: { label: 'capacity (list)', latencyMs: { p50: 4, p90: 16, p99: 47, max: 121, mean: 7 } } },
    },
    overload: {
      status: 'pass',
      figures: {
        bursts: [{ label: 'burst', latencyMs: { p50: 900, p90: 1500, p99: 1598, max: 1599, mean: 1000 } }],
        windows: [
          { successes: 60, limit: 60 },
          { successes: 60, limit: 60 },
        ],
      },
    },
  },
};

test('certificate.html: in headless Chromium the verdict and a failing requirement are visible without scrolling', async ({}, testInfo) => {
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'certificate-html-'));
  fs.writeFileSync(path.join(dir, 'load.json'), JSON.stringify(LOAD));
  const { htmlFile } = writeCertificate({ report: failingReport(), reportsDir: dir, env: {} });

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ARGS });
  try {
    // A laptop screen: what a release manager sees first.
    const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
    await page.goto(`file://${htmlFile}`);
    const shot = testInfo.outputPath('certificate.png');
    const png = await page.screenshot({ path: shot });
    await testInfo.attach('certificate.png', { body: png, contentType: 'image/png' });

    const verdict = page.getByTestId('verdict');
    await expect(verdict).toHaveText('FAIL');
    await expect(verdict).toBeInViewport({ ratio: 1 });
    const failing = page.getByTestId('failing-requirement');
    await expect(failing).toHaveCount(2);
    await expect(failing.first()).toContainText('AUTH-02');
    await expect(failing.first()).toContainText('expected 401, observed 200');
    await expect(failing.first()).toBeInViewport({ ratio: 1 });
    expect(await page.evaluate(() => window.scrollY)).toBe(0);

    // Further down: the load charts, drawn as inline SVG.
    await page.locator('#load').scrollIntoViewIfNeeded();
    await expect(page.locator('#load svg')).toHaveCount(3);
    await expect(page.locator('#load svg').first()).toBeVisible();
    await testInfo.attach('certificate-full.png', { body: await page.screenshot({ fullPage: true }), contentType: 'image/png' });
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
