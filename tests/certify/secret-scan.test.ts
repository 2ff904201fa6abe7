import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import AdmZip from 'adm-zip';
import { describeFinding, scanBuffer, scanPaths } from '../../certify/secret-scan.ts';
import { placeholderOf, redactText, secretNeedles, secretsFromEnv, secretsOf, type Secret } from '../../core/secrets.ts';

const KEY = 'ik_test_5f0c9e2a7b31d4c8e6a9f1b2';
const KEY_WITH_SPECIALS = 'k3y/with+special=chars&more';
const secrets: Secret[] = [
  { name: 'API_KEY', value: KEY },
  { name: 'RATE_LIMIT_KEY', value: KEY_WITH_SPECIALS },
];
const needles = secretNeedles(secrets);

function findingsIn(content: string | Buffer) {
  return scanBuffer(Buffer.isBuffer(content) ? content : Buffer.from(content), needles, 'file.txt').findings;
}

function zipOf(entries: Record<string, string | Buffer>): Buffer {
  const zip = new AdmZip();
  for (const [name, content] of Object.entries(entries)) zip.addFile(name, Buffer.isBuffer(content) ? content : Buffer.from(content));
  return zip.toBuffer();
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

const PLANTED: { what: string; content: () => string | Buffer; variable: string; encoding: RegExp }[] = [
  { what: 'raw key', content: () => `{"authorization":"Bearer ${KEY}"}`, variable: 'API_KEY', encoding: /^raw$/ },
  {
    what: 'URL-encoded key',
    content: () => `GET /x?key=${encodeURIComponent(KEY_WITH_SPECIALS)}`,
    variable: 'RATE_LIMIT_KEY',
    encoding: /url-encoded/i,
  },
  {
    what: 'form-encoded "Bearer <key>"',
    content: () => `auth=Bearer+${encodeURIComponent(KEY_WITH_SPECIALS)}`,
    variable: 'RATE_LIMIT_KEY',
    encoding: /encoded/,
  },
  {
    what: 'JSON-escaped key',
    content: () => JSON.stringify({ k: KEY_WITH_SPECIALS }).replace(/\//g, '\\/'),
    variable: 'RATE_LIMIT_KEY',
    encoding: /JSON-escaped/,
  },
  { what: 'base64 of the key', content: () => `data: ${b64(KEY)}`, variable: 'API_KEY', encoding: /^base64$/ },
  { what: 'base64 of "Bearer <key>"', content: () => `header ${b64(`Bearer ${KEY}`)}`, variable: 'API_KEY', encoding: /base64/ },
  { what: 'base64 of a text containing the key at offset 1', content: () => b64(`x${KEY}yz`), variable: 'API_KEY', encoding: /base64/ },
  {
    what: 'base64 of a text containing "Bearer <key>" at offset 2',
    content: () => b64(`{"Authorization":"Bearer ${KEY}"}`),
    variable: 'API_KEY',
    encoding: /base64/,
  },
  {
    what: 'base64url of the key',
    content: () => Buffer.from(`?${KEY_WITH_SPECIALS}`).toString('base64url'),
    variable: 'RATE_LIMIT_KEY',
    encoding: /base64/,
  },
  {
    what: 'key with its first character \\u-escaped',
    content: () => `{"status":"\\u0069${KEY.slice(1)}"}`,
    variable: 'API_KEY',
    encoding: /JSON-escaped/,
  },
  {
    what: '\\u-escaped key inside a JSON string',
    content: () => JSON.stringify({ m: `{"status":"\\u0069${KEY.slice(1)}"}` }),
    variable: 'API_KEY',
    encoding: /JSON-escaped/,
  },
  {
    what: 'key as HTML character references',
    content: () => [...KEY].map((c) => `&#x${c.charCodeAt(0).toString(16)};`).join(''),
    variable: 'API_KEY',
    encoding: /HTML-escaped/,
  },
  { what: 'key with its letter case changed', content: () => `bearer ${KEY.toUpperCase()}`, variable: 'API_KEY', encoding: /case changed/ },
  { what: 'key inside a zip', content: () => zipOf({ 'report.json': `{"h":"Bearer ${KEY}"}` }), variable: 'API_KEY', encoding: /raw/ },
  {
    what: 'key inside a zip inside a zip',
    content: () => zipOf({ 'inner.zip': zipOf({ 'trace.trace': `authorization: Bearer ${KEY}` }) }),
    variable: 'API_KEY',
    encoding: /raw/,
  },
  { what: 'key inside a gzip', content: () => zlib.gzipSync(`Bearer ${KEY}`), variable: 'API_KEY', encoding: /raw/ },
  {
    what: "key inside an HTML report's embedded base64 zip",
    content: () =>
      `<!DOCTYPE html><html><body><script>app()</script>\n<template id="playwrightReportBase64">data:application/zip;base64,${zipOf({ 'abc.json': `{"errors":["Authorization: Bearer ${KEY}"]}` }).toString('base64')}</template>`,
    variable: 'API_KEY',
    encoding: /raw/,
  },
];

for (const p of PLANTED) {
  test(`secret scan finds a planted ${p.what}`, () => {
    const findings = findingsIn(p.content());
    expect(findings.length, `${p.what}: expected a finding, observed none`).toBeGreaterThan(0);
    expect(
      findings.some((f) => f.variable === p.variable && p.encoding.test(f.encoding)),
      JSON.stringify(findings),
    ).toBe(true);
    for (const f of findings) expect(describeFinding(f).includes(KEY), 'a finding shows no key').toBe(false);
  });
}

test('secret scan names the archive entry, never the key', () => {
  const [finding] = findingsIn(zipOf({ 'data/abc.md': `Bearer ${KEY}` }));
  expect(finding.entry).toEqual(['data/abc.md']);
  const line = describeFinding(finding);
  expect(line).toBe('file.txt › data/abc.md: API_KEY (raw)');
  const html = `<template id="playwrightReportBase64">data:application/zip;base64,${zipOf({ 'r.json': KEY }).toString('base64')}</template>`;
  expect(describeFinding(findingsIn(html)[0])).toBe('file.txt › <embedded base64 zip #1> › r.json: API_KEY (raw)');
});

test('secret scan reports nothing for text near the key but not containing it', () => {
  const clean = [
    `Authorization: Bearer <API_KEY>`,
    `Bearer ${KEY.slice(0, 12)}…`,
    b64('Bearer <API_KEY>'),
    zipOf({ 'a.json': '{"ok":true}', 'b.md': 'Authorization: [redacted API_KEY]' }).toString('base64'),
  ].join('\n');
  expect(findingsIn(clean)).toEqual([]);
  expect(findingsIn(zipOf({ 'a.json': '{"ok":true}' }))).toEqual([]);
});

test('secret scan of a directory: a clean tree has no findings; a planted key is named by file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'scan-'));
  try {
    fs.mkdirSync(path.join(dir, 'html', 'data'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'conformance.json'), JSON.stringify({ verdict: 'pass', evidence: 'Authorization: Bearer <API_KEY>' }));
    fs.writeFileSync(
      path.join(dir, 'html', 'index.html'),
      `<template id="playwrightReportBase64">data:application/zip;base64,${zipOf({ 'r.json': '{}' }).toString('base64')}</template>`,
    );
    fs.writeFileSync(path.join(dir, 'blob.zip'), zipOf({ 'report.jsonl': '{"method":"onBegin"}' }));
    const clean = scanPaths([dir], secrets, dir);
    expect(clean.filesScanned).toBe(3);
    expect(clean.findings).toEqual([]);
    expect(clean.unscannable).toEqual([]);

    fs.writeFileSync(path.join(dir, 'html', 'data', 'x.md'), `# Error\nAuthorization: Bearer ${KEY}\n`);
    const dirty = scanPaths([dir], secrets, dir);
    expect(dirty.findings.map(describeFinding)).toEqual([`${path.join('html', 'data', 'x.md')}: API_KEY (raw)`]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('secret scan: a corrupt zip file cannot be vouched for and is reported', () => {
  const corrupt = Buffer.concat([Buffer.from([0x50, 0x4b, 0x03, 0x04]), Buffer.alloc(40, 7)]);
  const result = scanBuffer(corrupt, needles, 'broken.zip');
  expect(result.unscannable).toHaveLength(1);
  expect(describeFinding(result.unscannable[0])).toContain('broken.zip: could not be scanned');
});

test('redaction replaces every form with a placeholder naming the variable', () => {
  const text = `a Bearer ${KEY} b ${b64(`Bearer ${KEY}`)} c ${encodeURIComponent(KEY_WITH_SPECIALS)} d ${KEY.toUpperCase()}`;
  const { text: out, count } = redactText(text, needles);
  expect(count).toBe(4);
  expect(out).toContain('<API_KEY>');
  expect(out).toContain('<RATE_LIMIT_KEY>');
  expect(findingsIn(out)).toEqual([]);
});

test('secrets come from API_KEY, RATE_LIMIT_KEY and LOAD_KEY only, empty ones ignored', () => {
  expect(secretsFromEnv({ API_KEY: 'a1', RATE_LIMIT_KEY: '', LOAD_KEY: 'l1', OTHER: 'x' })).toEqual([
    { name: 'API_KEY', value: 'a1' },
    { name: 'LOAD_KEY', value: 'l1' },
  ]);
});

test('secretsOf: one helper for an environment and a settings object; empty and repeated values left out', () => {
  const env = { API_KEY: KEY, RATE_LIMIT_KEY: KEY, LOAD_KEY: '' };
  expect(secretsOf(env).map((s) => s.name)).toEqual(['API_KEY']);
  expect(secretsOf({ apiKey: KEY, loadKey: KEY_WITH_SPECIALS }).map((s) => s.name)).toEqual(['API_KEY', 'LOAD_KEY']);
  expect(secretsFromEnv({ RATE_LIMIT_KEY: KEY_WITH_SPECIALS }).map((s) => s.name)).toEqual(['RATE_LIMIT_KEY']);
  expect(placeholderOf('LOAD_KEY')).toBe('<LOAD_KEY>');
});
