import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect, chromium } from '@playwright/test';
import { writeCertificate } from '../../certify/certificate/index.ts';
import { failingReport } from './reports.ts';

/** Debian's chromium (`apt-get install chromium`); the test fails, never skips, without it. */
const CHROMIUM = '/usr/bin/chromium';
const ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

test('certificate.html: in headless Chromium the verdict and a failing requirement are visible without scrolling', async ({}, testInfo) => {
  expect(fs.existsSync(CHROMIUM), `${CHROMIUM} is missing: apt-get install chromium`).toBe(true);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'certificate-html-'));
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
  } finally {
    await browser.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
