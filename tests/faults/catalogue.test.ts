import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { test, expect } from '@playwright/test';
import { CATALOGUE_FILES, faults } from '../../faults/catalogue/index.ts';
import { variants, httpDate } from '../../faults/variants.ts';
import { REPO_ROOT } from '../../faults/harness.ts';
import { phasesFor } from '../../faults/matrix.ts';
import { parseHttpDate } from '../../suites/lib/http-date.ts';

interface LedgerEntry { id: string; level: string; excluded?: string }
const ledger = (parse(fs.readFileSync(path.join(REPO_ROOT, 'suites', 'requirements.yaml'), 'utf8')) as { requirements: LedgerEntry[] }).requirements;

test('the catalogue has at least 30 faults with unique kebab-case names, a description and an injection', () => {
  expect(faults.length).toBeGreaterThanOrEqual(30);
  const names = faults.map((f) => f.name);
  expect(new Set(names).size, `duplicate names: ${names.filter((n, i) => names.indexOf(n) !== i).join(', ')}`).toBe(names.length);
  for (const f of faults) {
    expect(f.name, f.name).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
    expect(f.description.length, `${f.name}: description`).toBeGreaterThan(20);
    expect(f.expect.length, `${f.name}: expected ids`).toBeGreaterThan(0);
    expect(!!(f.proxy || f.store || f.upstream), `${f.name}: needs proxy hooks, a store or an upstream`).toBe(true);
  }
});

/** The area of a ledger id's prefix: the catalogue file its faults live in. */
const AREA_OF_PREFIX: Record<string, string> = {
  AUTH: 'auth', ERR: 'errors', INV: 'inventory', UPD: 'inventory', MSG: 'messages', RL: 'rate-limit', HTTP: 'http', VER: 'versioning', LOAD: 'load',
};

test('one catalogue file per area: every file of faults/catalogue/ is collected, and the file decides the area', () => {
  const dir = path.join(REPO_ROOT, 'faults', 'catalogue');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
  expect([...CATALOGUE_FILES].sort()).toEqual(files.sort());
  for (const area of Object.values(AREA_OF_PREFIX)) expect(faults.some((f) => f.area === area), `faults/catalogue/${area}.ts has faults`).toBe(true);
  for (const f of faults) {
    expect(CATALOGUE_FILES, `${f.name}: area ${f.area} is a catalogue file`).toContain(`${f.area}.ts`);
    expect(fs.readFileSync(path.join(dir, `${f.area}.ts`), 'utf8'), `${f.name} is defined in ${f.area}.ts`).toContain(`name: '${f.name}'`);
    // In the spec-section files, a fault sits with the requirement it breaks first.
    const area = AREA_OF_PREFIX[f.expect[0]!.split('-')[0]!];
    if (area && Object.values(AREA_OF_PREFIX).includes(f.area)) expect(f.area, `${f.name} (${f.expect[0]}) belongs in faults/catalogue/${area}.ts`).toBe(area);
  }
});

test('every id a fault expects is a must-level, testable requirement of the ledger', () => {
  const byId = new Map(ledger.map((r) => [r.id, r]));
  const used = new Set(faults.flatMap((f) => f.expect));
  for (const id of used) {
    const r = byId.get(id);
    expect(r, `${id} is not in suites/requirements.yaml`).toBeDefined();
    expect(r!.level, `${id}: a fault must break a must-level requirement (should/may only warn)`).toBe('must');
    expect(r!.excluded, `${id} is excluded from testing`).toBeUndefined();
  }
});

test('every must-level, testable requirement is the target of a fault in the default matrix (each check is shown to fail)', () => {
  const targeted = new Set(faults.filter((f) => !f.extended).flatMap((f) => f.expect));
  const untargeted = ledger.filter((r) => r.level === 'must' && !r.excluded && !targeted.has(r.id)).map((r) => r.id);
  expect(untargeted, `must-level requirements no fault of the default matrix proves caught: ${untargeted.join(', ')}`).toEqual([]);
});

test('at least two conformant variants, each stating its choices', () => {
  expect(variants.length).toBeGreaterThanOrEqual(2);
  for (const v of variants) {
    expect(v.choices.length, v.name).toBeGreaterThan(0);
    expect(!!(v.proxy || v.store), v.name).toBe(true);
  }
});

test('variants write Retry-After dates the suites parse, in all three HTTP-date formats', () => {
  const s = Date.UTC(2026, 10, 22, 9, 5, 7) / 1000;
  expect(httpDate(s, 'imf-fixdate')).toBe('Sun, 22 Nov 2026 09:05:07 GMT');
  expect(httpDate(s, 'rfc850')).toBe('Sunday, 22-Nov-26 09:05:07 GMT');
  expect(httpDate(s, 'asctime')).toBe('Sun Nov 22 09:05:07 2026');
  for (const f of ['imf-fixdate', 'rfc850', 'asctime'] as const) expect(parseHttpDate(httpDate(s, f))).toEqual({ ms: s * 1000, format: f });
});

test('faults/README.md lists every fault and every variant', () => {
  const readme = fs.readFileSync(path.join(REPO_ROOT, 'faults', 'README.md'), 'utf8');
  for (const name of [...faults.map((f) => f.name), ...variants.map((v) => v.name)]) {
    expect(readme.includes(`\`${name}\``), `${name} is missing from faults/README.md`).toBe(true);
  }
});

test('a fault runs the phases where the tests of its expected ids live (derived from the suites, not from the ids)', () => {
  const known = new Map([['RL-05', ['rate-limit']], ['LOAD-02', ['load']], ['AUTH-03', ['functional']], ['RL-01', ['functional', 'load']]]);
  const order = ['functional', 'rate-limit', 'load', 'generated'];
  expect(phasesFor(['LOAD-02', 'AUTH-03'], known, order)).toEqual(['functional', 'load']);
  expect(phasesFor(['RL-01'], known, order)).toEqual(['functional', 'load']);
  expect(phasesFor(['RL-05', 'RL-05'], known, order)).toEqual(['rate-limit']);
  expect(phasesFor(['NOPE-01'], known, order)).toEqual([]);
  // Against the real suites: every fault of the catalogue runs at least one phase.
  for (const f of faults) expect(phasesFor(f.expect).length, `${f.name}: the phases of ${f.expect.join(', ')}`).toBeGreaterThan(0);
});
