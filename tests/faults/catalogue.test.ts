import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { test, expect } from '../test.ts';
import { CATALOGUE_FILES, faults } from '../../faults/catalogue/index.ts';
import { variants, httpDate } from '../../faults/variants.ts';
import { REPO_ROOT } from '../../faults/harness.ts';
import {
  caseHolds,
  inconclusiveIds,
  listedSuiteTests,
  matrixCases,
  MATRIX_ENV,
  phasesFor,
  testsFor,
  testsOption,
} from '../../faults/matrix.ts';
import { compiledFiles, SOURCE_TREE } from '../../faults/tree.ts';
import { titleFilter } from '../../certify/steps/prepare.ts';
import type { ListedTest } from '../../core/ledger.ts';
import { PHASES } from '../../certify/env.ts';
import { parseHttpDate } from '../../suites/lib/http-date.ts';

interface LedgerEntry {
  id: string;
  level: string;
  excluded?: string;
}
const ledger = (parse(fs.readFileSync(path.join(REPO_ROOT, 'suites', 'requirements.yaml'), 'utf8')) as { requirements: LedgerEntry[] })
  .requirements;

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
  AUTH: 'auth',
  ERR: 'errors',
  INV: 'inventory',
  UPD: 'inventory',
  MSG: 'messages',
  RL: 'rate-limit',
  HTTP: 'http',
  VER: 'versioning',
  LOAD: 'load',
};

test('one catalogue file per area: every file of faults/catalogue/ is collected, and the file decides the area', () => {
  const dir = path.join(REPO_ROOT, 'faults', 'catalogue');
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.ts') && f !== 'index.ts');
  expect([...CATALOGUE_FILES].sort()).toEqual(files.sort());
  for (const area of Object.values(AREA_OF_PREFIX))
    expect(
      faults.some((f) => f.area === area),
      `faults/catalogue/${area}.ts has faults`,
    ).toBe(true);
  for (const f of faults) {
    expect(CATALOGUE_FILES, `${f.name}: area ${f.area} is a catalogue file`).toContain(`${f.area}.ts`);
    expect(fs.readFileSync(path.join(dir, `${f.area}.ts`), 'utf8'), `${f.name} is defined in ${f.area}.ts`).toContain(`name: '${f.name}'`);
    // In the spec-section files, a fault sits with the requirement it breaks first.
    const area = AREA_OF_PREFIX[f.expect[0]!.split('-')[0]!];
    if (area && Object.values(AREA_OF_PREFIX).includes(f.area))
      expect(f.area, `${f.name} (${f.expect[0]}) belongs in faults/catalogue/${area}.ts`).toBe(area);
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
    expect(!!(v.proxy || v.store || v.upstream), v.name).toBe(true);
    // A variant limited to some phases says why those are the ones its choices can affect.
    if (v.phases) {
      for (const p of v.phases) expect(PHASES as readonly string[], `${v.name}: phase ${p}`).toContain(p);
      for (const p of v.phases) expect(v.description, `${v.name}: the description names its phase ${p}`).toContain(p);
    }
  }
});

test('a conformant deployment of three instances on Redis is a variant of the matrix, on the rate-limit and load phases', () => {
  const c = matrixCases().find((x) => x.id === 'variant:multi-instance-redis');
  expect(c, 'variant multi-instance-redis in the default matrix').toBeDefined();
  expect(c!.phases).toEqual(['rate-limit', 'load']);
  expect(typeof c!.upstream, 'started as a whole deployment').toBe('function');
  expect(
    matrixCases().find((x) => x.id === 'fault:multi-instance-per-process-limiter')?.upstream,
    'its broken twin is a fault',
  ).toBeDefined();
});

test('inconclusiveIds: a fault runs again only when every expected id it missed came out not certified', () => {
  const fault = { kind: 'fault' as const, expect: ['RL-08', 'RL-09'] };
  type Run = Parameters<typeof inconclusiveIds>[1];
  const run: Run = { verdict: 'fail', failing: [], caught: [], unevidenced: [], problems: [], notCertified: {} };
  const rows: [string, Partial<Run>, string[]][] = [
    ['both not certified', { notCertified: { 'RL-08': 'busy runner', 'RL-09': 'busy runner' } }, ['RL-08', 'RL-09']],
    ['one caught, the other not certified', { caught: ['RL-08'], notCertified: { 'RL-09': 'busy runner' } }, ['RL-09']],
    ['one missed outright (passed)', { notCertified: { 'RL-09': 'busy runner' } }, []],
    ['both caught', { caught: ['RL-08', 'RL-09'] }, []],
    ['no report', { verdict: 'missing', notCertified: { 'RL-08': 'x', 'RL-09': 'x' } }, []],
  ];
  const got = rows.map(([what, o]) => [what, inconclusiveIds(fault, { ...run, ...o })]);
  expect(got).toEqual(rows.map(([what, , want]) => [what, want]));
  expect(inconclusiveIds({ kind: 'variant', expect: [] }, { ...run, notCertified: { 'RL-08': 'x' } })).toEqual([]);
});

test('caseHolds: a variant limited to phases holds when nothing its phases judged failed, and every requirement of its phases has a result', () => {
  const known = new Map([
    ['RL-05', ['rate-limit']],
    ['LOAD-02', ['load']],
    ['AUTH-03', ['functional']],
    ['RL-01', ['functional', 'load']],
  ]);
  const variant = { kind: 'variant' as const, expect: [], phases: ['rate-limit', 'load'] };
  const clean = { verdict: 'fail' as const, failing: [], caught: [], unevidenced: ['AUTH-03'], problems: [] };
  expect(caseHolds(variant, clean, known), 'left-out phases have no test result').toBe(true);
  expect(caseHolds(variant, { ...clean, failing: ['LOAD-02'] }, known), 'a requirement of its phases failed').toBe(false);
  expect(
    caseHolds(variant, { ...clean, unevidenced: ['AUTH-03', 'RL-05'] }, known),
    'a requirement of its phases has no result (a phase did not report)',
  ).toBe(false);
  expect(
    caseHolds(variant, { ...clean, unevidenced: ['RL-01'] }, known),
    'a requirement also tested in one of its phases has no result',
  ).toBe(false);
  expect(caseHolds(variant, { ...clean, problems: ['phase load timed out'] }, known), 'a run problem').toBe(false);
  expect(caseHolds(variant, { ...clean, verdict: 'missing' }, known), 'no report').toBe(false);
  // Every phase: certify's own verdict. A fault: fail with every expected id.
  expect(caseHolds({ kind: 'variant', expect: [] }, clean, known)).toBe(false);
  expect(caseHolds({ kind: 'variant', expect: [] }, { ...clean, verdict: 'pass', unevidenced: [] }, known)).toBe(true);
  const fault = { kind: 'fault' as const, expect: ['LOAD-02'], phases: ['load'] };
  expect(caseHolds(fault, { ...clean, failing: ['LOAD-02'], caught: ['LOAD-02'] }, known)).toBe(true);
  expect(caseHolds(fault, { ...clean, failing: ['RL-05'], caught: ['RL-05'] }, known)).toBe(false);
  expect(
    caseHolds(fault, { ...clean, failing: ['LOAD-02', 'RL-05'], caught: ['RL-05'] }, known),
    'failing only because a stop left its tests without a result: not a catch',
  ).toBe(false);
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
  const known = new Map([
    ['RL-05', ['rate-limit']],
    ['LOAD-02', ['load']],
    ['AUTH-03', ['functional']],
    ['RL-01', ['functional', 'load']],
  ]);
  const order = ['functional', 'rate-limit', 'load', 'generated'];
  expect(phasesFor(['LOAD-02', 'AUTH-03'], known, order)).toEqual(['functional', 'load']);
  expect(phasesFor(['RL-01'], known, order)).toEqual(['functional', 'load']);
  expect(phasesFor(['RL-05', 'RL-05'], known, order)).toEqual(['rate-limit']);
  expect(phasesFor(['NOPE-01'], known, order)).toEqual([]);
  // Against the real suites: every fault of the catalogue runs at least one phase.
  for (const f of faults) expect(phasesFor(f.expect).length, `${f.name}: the phases of ${f.expect.join(', ')}`).toBeGreaterThan(0);
});

test('a fault in the functional, generated or rate-limit phase runs only the tests of its expected ids, by location and title, and stops at its first failure when it has one id; a load fault runs its phases whole', () => {
  const tests = [
    { title: 'AUTH-03 an unknown key yields 401', file: 'auth/bearer.spec.ts', line: 34, projects: ['functional'], annotations: [] },
    { title: 'AUTH-03 no header yields 401', file: 'auth/bearer.spec.ts', line: 34, projects: ['functional'], annotations: [] },
    {
      title: 'ERR-01 the body is an Error',
      file: 'errors/error-body.spec.ts',
      line: 17,
      projects: ['functional'],
      annotations: [{ type: 'requirement', description: 'ERR-02' }],
    },
    { title: 'GEN-01 every case', file: 'generated/cases.spec.ts', line: 53, projects: ['generated'], annotations: [] },
    { title: 'GEN-02 every case answered', file: 'generated/cases.spec.ts', line: 53, projects: ['generated'], annotations: [] },
    {
      title: 'RL-05 the request past the limit',
      file: 'rate-limit/retry-after.spec.ts',
      line: 50,
      projects: ['rate-limit'],
      annotations: [],
    },
    { title: 'LOAD-01 the capacity run', file: 'load/capacity.spec.ts', line: 40, projects: ['load'], annotations: [] },
  ];
  expect(testsFor(['AUTH-03'], ['functional'], tests), 'one location for the tests of one loop').toEqual(['auth/bearer.spec.ts:34']);
  expect(testsFor(['ERR-02'], ['functional'], tests), 'a requirement named in an annotation').toEqual(['errors/error-body.spec.ts:17']);
  expect(testsFor(['AUTH-03', 'GEN-01'], ['functional', 'generated'], tests)).toEqual([
    'auth/bearer.spec.ts:34',
    'generated/cases.spec.ts:53',
  ]);
  expect(testsOption(['GEN-01'], ['generated'], tests).titles, "a loop's location holds tests of other ids: titles select").toEqual([
    'GEN-01 every case',
  ]);
  expect(testsFor(['RL-05'], ['rate-limit'], tests), 'the rate-limit phase judges records made once per run').toEqual([
    'rate-limit/retry-after.spec.ts:50',
  ]);
  expect(testsFor(['LOAD-01'], ['load'], tests), 'the load phase runs whole').toBeUndefined();
  expect(
    testsFor(['AUTH-03', 'LOAD-01'], ['functional', 'load'], tests),
    'a fault with the load phase runs all its phases whole',
  ).toBeUndefined();
  expect(testsOption(['AUTH-03'], ['functional'], tests)).toEqual({
    tests: ['auth/bearer.spec.ts:34'],
    titles: ['AUTH-03 an unknown key yields 401', 'AUTH-03 no header yields 401'],
    maxFailures: 1,
  });
  expect(testsOption(['AUTH-03', 'GEN-01'], ['functional', 'generated'], tests), 'two ids: every test runs').not.toHaveProperty(
    'maxFailures',
  );
  expect(testsOption(['LOAD-01'], ['load'], tests)).toEqual({});
  // Against the real suites: every fault outside the load phase names tests, each a file:line of suites/.
  for (const c of matrixCases().filter((m) => m.kind === 'fault' && m.phases?.every((p) => p !== 'load'))) {
    expect(c.tests?.length, `${c.name}: the tests of ${c.expect.join(', ')}`).toBeGreaterThan(0);
    for (const t of c.tests ?? []) expect(fs.existsSync(path.join(REPO_ROOT, 'suites', t.replace(/:\d+$/, ''))), t).toBe(true);
  }
});

test("a fault's tests are the same whether selected by location and title or, as on a compiled tree, by file and title", () => {
  const listed = listedSuiteTests();
  const key = (t: ListedTest) => `${t.file}:${t.line} ${t.title}`;
  let compared = 0;
  for (const c of matrixCases().filter((m) => m.tests?.length)) {
    const grep = new RegExp(titleFilter(c.titles ?? []).slice(1, -1));
    const byTitle = listed.filter((t) => (c.titles ? grep.test(t.title) : true));
    const byLocation = byTitle.filter((t) => c.tests!.includes(`${t.file}:${t.line}`)).map(key);
    const files = c.tests!.map((l) => l.replace(/:\d+$/, ''));
    const byFile = byTitle.filter((t) => files.includes(t.file ?? '')).map(key);
    expect(byFile, `${c.name}: the tests of its files with its titles`).toEqual(byLocation);
    expect(SOURCE_TREE.onlyTests(c.tests!), 'the sources keep the locations').toEqual(c.tests);
    expect(compiledFiles(c.tests!), 'a compiled tree takes the files').toEqual([
      ...new Set(files.map((f) => f.replace(/\.ts$/, '.[jt]s'))),
    ]);
    compared++;
  }
  expect(compared, 'faults that name their tests').toBeGreaterThan(40);
  expect(compiledFiles(['auth/bearer.spec.ts:34', 'auth/bearer.spec.ts:80', 'errors/error-body.spec.ts:17'])).toEqual([
    'auth/bearer.spec.[jt]s',
    'errors/error-body.spec.[jt]s',
  ]);
});

test('the baseline and the conformant variants run with the request deadline and generated budget a user gets; faults with shorter ones', () => {
  for (const c of matrixCases(true)) {
    const env = { ...MATRIX_ENV, ...c.env };
    if (c.kind === 'fault') expect(Number(env.REQUEST_TIMEOUT_MS), `${c.id}: a bounded deadline`).toBeLessThanOrEqual(8000);
    else {
      expect(env.REQUEST_TIMEOUT_MS, `${c.id}: the default REQUEST_TIMEOUT_MS`).toBeUndefined();
      expect(env.GENERATED_BUDGET, `${c.id}: the default GENERATED_BUDGET`).toBeUndefined();
    }
  }
});
