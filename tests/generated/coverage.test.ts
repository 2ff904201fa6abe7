/**
 * The coverage cases (suites/generated/coverage.ts): derived from the document alone, the same
 * cases in the same order on every call (no seed), every location of every operation, each
 * class the generated phase promises; the budget takes them in a fixed priority order and names
 * what it leaves out; `--list-cases` lists them without sending anything.
 */
import { test, expect } from '../test.ts';
import fc from 'fast-check';
import { segmentMayBeValid } from '../../suites/generated/keywords.ts';
import { openapiDocument } from '../../schemas/index.ts';
import { operationsOf, type Operation } from '../../suites/generated/document.ts';
import { classesOf, fillPath } from '../../suites/generated/classes.ts';
import { coverageCases, countByLocation, LOCATIONS, planCoverage, type CoverageCase } from '../../suites/generated/coverage.ts';
import { defaultBudget, planGenerated } from '../../suites/generated/budget.ts';
import { listCoverageCases } from '../../suites/generated/list-cases.ts';
import { judge } from '../../suites/generated/judge.ts';
import { curlCommand, decodeToken, encodeToken } from '../../suites/generated/replay.ts';
import { readGeneratedSettings } from '../../settings/generated.ts';

const ops = operationsOf(openapiDocument());
const byId = (id: string): Operation => ops.find((o) => o.id === id)!;
const all = () => Object.fromEntries(ops.map((op) => [op.id, coverageCases(op, ops)]));
const names = (id: string) => coverageCases(byId(id), ops).map((c) => c.name);

test('the coverage cases are the same, in the same order, on every call (no seed enters them)', () => {
  const strip = (cs: CoverageCase[]) => cs.map((c) => ({ ...c, request: { ...c.request } }));
  const first = ops.map((op) => strip(coverageCases(op, ops)));
  const second = ops.map((op) => strip(coverageCases(op, ops)));
  expect(JSON.stringify(second)).toBe(JSON.stringify(first));
  for (const op of ops) {
    const n = names(op.id);
    expect(new Set(n).size, `${op.id}: case names are unique (replay tokens name them)`).toBe(n.length);
  }
});

const REQUIRED: Array<{ op: string; cases: RegExp[] }> = [
  {
    op: 'updateInventory',
    cases: [
      /^body \/quantity: type null$/,
      /^body \/quantity: type boolean true$/,
      /^body \/quantity: type boolean false$/,
      /^body \/quantity: type fraction 2\.5$/,
      /^body \/quantity: type string/,
      /^body \/quantity: type array/,
      /^body \/quantity: type object/,
      /^body \(body\): type null$/,
      /^body \/quantity: boundary 9223372036854775807$/,
      /^body \/quantity: boundary -9223372036854775808$/,
      /^body \/quantity: boundary 9223372036854775806$/,
      /^body \/quantity: boundary -1$/,
      /^body \/quantity: beyond int64 9223372036854775808$/,
      /^body \/quantity: form fraction$/,
      /^body \/quantity: form exponent$/,
      /^body \/quantity: form -0$/,
      /^body \(body\): empty body$/,
      /^body \(body\): empty object$/,
      /^body \(body\): an unknown member$/,
      /^body \(body\): a duplicate member$/,
      /^body \(body\): a deeply nested unknown member$/,
      /^body \(body\): a body at 64 KiB$/,
      /^body \(body\): a body over 64 KiB \(100 KB\)$/,
      /^path petId written as truncated-percent$/,
      /^path petId written as not-hex-percent$/,
      /^path petId written as invalid-utf8-percent$/,
      /^path petId written as encoded-slash$/,
      /^path petId written as trailing-slash$/,
      /^path petId written as empty$/,
      /^path petId written as very-long$/,
      /^path petId written as leading-zeros$/,
      /^header Authorization: a 300-character token$/,
      /^header Authorization: a 5 000-character token$/,
      /^header Authorization: characters outside token68$/,
      /^header Authorization: the scheme in lower case$/,
      /^header Authorization: three spaces after the scheme$/,
      /^header Authorization: two credentials in one field$/,
      /^header Content-Type: "application\/json; charset=utf-8"$/,
      /^header Content-Type: "Application\/JSON"$/,
      /^header Content-Type: "application\/jsonp"$/,
      /^method HEAD \/inventory\/\{petId\}$/,
      /^method OPTIONS \/inventory\/\{petId\}$/,
      /^method PROPFIND /,
      /^query /,
    ],
  },
  {
    op: 'POST /messages',
    cases: [
      /^body \/message: type null$/,
      /^body \/message: type boolean true$/,
      /^body \/message: type integer 7$/,
      /^string \/message: a 5 000-character string$/,
      /^string \/message: a string of 60 000 characters$/,
      /^string \/message: the empty string$/,
      /^string \/message: CJK text$/,
      /^string \/message: control characters$/,
      /^string \/message: invalid UTF-8 bytes$/,
      /^string \/message: a lone surrogate escape$/,
      /^method HEAD \/messages$/,
    ],
  },
];

for (const { op, cases } of REQUIRED) {
  test(`${op}: the coverage holds every class of input the phase promises`, () => {
    const n = names(op);
    for (const re of cases)
      expect(
        n.some((x) => re.test(x)),
        `${op}: a case matching ${re}`,
      ).toBe(true);
  });
}

test('HEAD, OPTIONS and query strings reach every path of the document; headers every operation', () => {
  const cs = Object.values(all()).flat();
  for (const path of new Set(ops.map((o) => o.path))) {
    expect(
      cs.some((c) => c.name === `method HEAD ${path}`),
      `HEAD ${path}`,
    ).toBe(true);
    expect(
      cs.some((c) => c.name === `method OPTIONS ${path}`),
      `OPTIONS ${path}`,
    ).toBe(true);
  }
  for (const op of ops) {
    const counts = countByLocation(coverageCases(op, ops));
    expect(counts.query, `${op.id} query`).toBeGreaterThan(0);
    expect(counts.header, `${op.id} header`).toBeGreaterThan(0);
  }
});

test('broken percent-encoding and a boolean quantity are written on the wire as their names say', () => {
  const pick = (op: string, name: string) => coverageCases(byId(op), ops).find((c) => c.name === name)!.request;
  const values = { petId: '42' };
  expect(fillPath(pick('updateInventory', 'path petId written as truncated-percent').path, values)).toBe('/inventory/42%4');
  expect(fillPath(pick('updateInventory', 'path petId written as invalid-utf8-percent').path, values)).toBe('/inventory/42%C3%28');
  expect(pick('updateInventory', 'body /quantity: type boolean true')).toMatchObject({ body: '{"quantity":true}', expect: 'negative' });
  expect(pick('POST /messages', 'body /message: type null')).toMatchObject({ body: '{"message":null}', expect: 'negative' });
  const long = pick('listInventory', 'header Authorization: a 300-character token');
  expect(long.noKey).toBe(true);
  expect(long.headers.authorization).toBe(`Bearer ${'t'.repeat(300)}`);
  expect(pick('listInventory', 'method HEAD /inventory')).toMatchObject({ method: 'HEAD', expect: 'odd' });
});

test('the budget takes the cases in a fixed priority order: a prefix of one order, every location first', () => {
  const cases = all();
  const groups = LOCATIONS.flatMap((l) =>
    Object.values(cases)
      .filter((cs) => cs.some((c) => c.location === l))
      .map(() => l),
  );
  const small = planCoverage(cases, groups.length);
  for (const op of ops)
    for (const l of LOCATIONS) {
      const has = cases[op.id]!.some((c) => c.location === l);
      expect(small.selected[op.id]!.filter((c) => c.location === l).length, `${op.id} ${l}`).toBe(has ? 1 : 0);
    }
  const chosen = (n: number) =>
    Object.values(planCoverage(cases, n).selected)
      .flat()
      .map((c) => `${c.op} ${c.name}`);
  for (const n of [0, 10, 57, 200]) {
    const a = new Set(chosen(n));
    expect(chosen(n + 1).filter((x) => !a.has(x)).length, `room ${n} + 1 adds one case`).toBe(n < small.total ? 1 : 0);
  }
  const none = planCoverage(cases, 0);
  expect(Object.values(none.left).flat().length).toBe(none.total);
});

test('the default budget is two windows of the plan less the other phases, at least one window; unknown plans count as free', () => {
  expect(defaultBudget('free').budget).toBe(60);
  expect(defaultBudget('pro').budget).toBe(400);
  expect(defaultBudget('business').budget).toBe(1800);
  expect(defaultBudget(undefined).budget).toBe(60);
  expect(defaultBudget('enterprise').budget).toBe(60);
  expect(readGeneratedSettings({ API_PLAN: 'pro' }).budget).toBe(400);
  expect(readGeneratedSettings({ API_PLAN: 'pro', GENERATED_BUDGET: '80' })).toMatchObject({ budget: 80, budgetBasis: 'GENERATED_BUDGET' });
});

test('on a pro or business key every coverage case fits; on a free key the rest is left out by name, and shares add up to the budget', () => {
  const cases = all();
  const needs = ops.map((op) => ({ id: op.id, classes: classesOf(op, ops).length, overhead: op.pathParameters.length ? 1 : 0 }));
  const listing = Object.fromEntries(ops.map((op) => [op.id, op.pathParameters.length ? 1 : 0]));
  const business = planGenerated(1800, needs, listing, cases, 3);
  expect(business.coverage.used).toBe(business.coverage.total);
  // A pro key's budget (two windows less the other phases): the coverage cases come before the larger stateful and concurrency shares.
  const pro = planGenerated(400, needs, listing, cases, 3);
  expect(pro.coverage.used, 'every coverage case fits a pro key').toBe(pro.coverage.total);
  expect(pro.stateful).toBeGreaterThanOrEqual(8);
  expect(pro.concurrency).toBeGreaterThanOrEqual(8);
  const free = planGenerated(60, needs, listing, cases, 3);
  expect(free.coverage.used).toBeGreaterThan(0);
  expect(Object.values(free.coverage.left).flat().length).toBe(free.coverage.total - free.coverage.used);
  for (const [plan, total] of [
    [business, 1800],
    [pro, 400],
    [free, 60],
  ] as const) {
    expect(Object.values(plan.operations).reduce((a, b) => a + b, 0) + plan.stateful + plan.concurrency).toBe(total);
  }
});

test('--list-cases lists every case per operation and location and marks what a free key leaves out', () => {
  const text = listCoverageCases({ API_PLAN: 'free' });
  const total = Object.values(all()).flat().length;
  expect(text).toContain(`${total} coverage cases in all`);
  expect(text).toMatch(
    /updateInventory \(PATCH \/inventory\/\{petId\}\): \d+ cases — body \d+, string 0, path \d+, header \d+, method \d+, query \d+/,
  );
  expect(text).toContain('[not within the budget]');
  expect(listCoverageCases({ API_PLAN: 'business' })).not.toContain('[not within the budget]');
});

test('an extension method may be refused with 501 (RFC 9110 §15.6.2); any other 5xx is a GEN-01 failure', () => {
  const op = byId('listInventory');
  const propfind = coverageCases(op, ops).find((c) => c.name === 'method PROPFIND /inventory')!.request;
  const res = (status: number) => ({
    kind: 'response' as const,
    response: { method: 'PROPFIND', status, headers: {}, json: { code: 'x', message: 'x', status }, text: '', missingRateLimit: [] },
  });
  expect(judge(op, propfind, res(501), false).filter((f) => f.id === 'GEN-01')).toEqual([]);
  expect(judge(op, propfind, res(500), false).map((f) => f.id)).toContain('GEN-01');
});

test('a curl line writes the key as $API_KEY inside an Authorization template and sends bytes that are not UTF-8 through printf', () => {
  const line = curlCommand({
    method: 'POST',
    url: 'http://h/m',
    headers: {},
    authTemplate: 'Bearer {key}, Bearer {key}',
    contentType: 'application/json',
    body: Buffer.from('{"message":"\u00c3("}', 'latin1'),
  });
  expect(line).toContain('"Authorization: Bearer $API_KEY, Bearer $API_KEY"');
  expect(line).toMatch(/^printf '\{"message":"\\303\("?/);
});

test('a coverage replay token names the operation and the case, and finds that one case again', () => {
  const op = byId('updateInventory');
  const token = encodeToken({ check: 'coverage', op: op.id, cls: 'path petId written as truncated-percent', seed: 0 });
  const back = decodeToken(token);
  expect(back).toEqual({ check: 'coverage', op: 'updateInventory', cls: 'path petId written as truncated-percent', seed: 0 });
  expect(coverageCases(op, ops).filter((c) => c.name === back.cls)).toHaveLength(1);
});

test('a path-keyword violation never writes a segment that denotes a valid id ("5" breaks `type` as JSON, not in a path)', () => {
  const op = byId('updateInventory');
  const schema = op.pathParameters[0]!.schema;
  expect(segmentMayBeValid(schema, '5')).toBe(true);
  expect(segmentMayBeValid(schema, '9223372036854775808')).toBe(false);
  for (const c of coverageCases(op, ops).filter((x) => x.location === 'path' && !x.name.includes('written as'))) {
    expect(segmentMayBeValid(schema, decodeURIComponent(c.request.path.split('/').pop()!)), c.name).toBe(false);
  }
  for (const cls of classesOf(op, ops).filter((c) => c.kind === 'path-keyword')) {
    for (const req of fc.sample(cls.arbitrary, { seed: 3, numRuns: 60 })) {
      expect(segmentMayBeValid(schema, decodeURIComponent(req.path.split('/').pop()!)), `${cls.name}: ${req.path}`).toBe(false);
    }
  }
});
