import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lineFilter } from '../../certify/phases.ts';
import { mergeLoadReports, runCertify } from '../../certify/run.ts';
import { redactorFor } from '../../core/secrets.ts';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'certify-run-'));
}

test('load.json merges every load/<check>.json by check name; no load folder, no load.json', () => {
  const dir = tempDir();
  try {
    expect(mergeLoadReports(dir, 't')).toBeUndefined();
    fs.mkdirSync(path.join(dir, 'load'));
    fs.writeFileSync(path.join(dir, 'load', 'capacity.json'), JSON.stringify({ requests: 10 }));
    fs.writeFileSync(path.join(dir, 'load', 'overload.json'), JSON.stringify({ admitted: 60 }));
    fs.writeFileSync(path.join(dir, 'load', 'broken.json'), '{');
    const merged = mergeLoadReports(dir, '2026-01-01T00:00:00Z');
    expect(merged?.files).toEqual(['broken.json', 'capacity.json', 'overload.json']);
    expect(merged?.document).toEqual({
      generatedAt: '2026-01-01T00:00:00Z',
      checks: { broken: { error: 'load/broken.json is not valid JSON' }, capacity: { requests: 10 }, overload: { admitted: 60 } },
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('console filter: a key split across output chunks is still redacted', async () => {
  const key = 'ik_console_0123456789abcdef';
  const redact = redactorFor([{ name: 'API_KEY', value: key }]);
  let written = '';
  const filter = lineFilter(redact, (s) => (written += s), 64, 20);
  filter.push('Authorization: Bearer ik_cons');
  await new Promise((r) => setTimeout(r, 50));
  filter.push('ole_0123456789abcdef\nnext line\n');
  filter.push(`partial tail with the key ${key.slice(0, 10)}`);
  filter.push(key.slice(10));
  filter.end();
  expect(written.includes(key), 'the console shows no key').toBe(false);
  expect(written).toContain('Authorization: Bearer <API_KEY>\nnext line\n');
  expect(written).toContain('partial tail with the key <API_KEY>\n');
});

test('console filter: a character split across chunks is not garbled', () => {
  let written = '';
  const filter = lineFilter(
    (s) => s,
    (s) => (written += s),
  );
  const bytes = Buffer.from('  ✓ passed\n');
  filter.push(bytes.subarray(0, 3));
  filter.push(bytes.subarray(3));
  filter.end();
  expect(written).toBe('  ✓ passed\n');
});

test('a key inside BASE_URL or API_URL (userinfo or query) is a usage error that never prints the key', async () => {
  const key = 'ik_live_url_0f1e2d3c4b5a6978';
  const dir = tempDir();
  try {
    for (const env of [
      { BASE_URL: `https://user:${key}@staging.example.com/v1`, API_KEY: key },
      { BASE_URL: `https://staging.example.com/v1?api_key=${key}`, API_KEY: key },
      { BASE_URL: 'https://staging.example.com/v1', API_URL: `https://${key}@staging.example.com/quickstart`, API_KEY: key },
    ]) {
      let out = '';
      const { exitCode: code } = await runCertify({ env: { ...env, REPORTS_DIR: dir }, write: (t) => (out += t) });
      expect(code).toBe(2);
      expect(out).toMatch(/^certify: usage error:\n {2}- (BASE_URL|API_URL) must not (carry credentials|have a query)/);
      expect(out.includes(key), 'the usage error shows no key').toBe(false);
      expect(out.includes(encodeURIComponent(key)), 'nor its URL-encoded form').toBe(false);
    }
    expect(fs.readdirSync(dir), 'nothing was written').toEqual([]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
