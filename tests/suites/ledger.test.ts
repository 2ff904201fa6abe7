/**
 * The requirements ledger and the conformance suites stay in sync both ways
 * (`suites/requirements.yaml`, `suites/lib/ledger.ts`).
 */
import { test, expect } from '@playwright/test';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { checkLedger, checkLedgerSync, listedTests, parseLedger, type ListedTest } from '../../suites/lib/ledger.ts';

const root = fileURLToPath(new URL('../../', import.meta.url));
const ledgerText = readFileSync(new URL('../../suites/requirements.yaml', import.meta.url), 'utf8');

function listSuites(): ListedTest[] {
  const out = execFileSync(process.execPath, [`${root}node_modules/@playwright/test/cli.js`, 'test', '--list', '--reporter=json', '-c', 'playwright.config.ts'], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, REPORTS_DIR: 'test-results/ledger-list' },
    maxBuffer: 64 * 1024 * 1024,
  });
  const report = JSON.parse(out.slice(out.indexOf('{')));
  expect(report.errors ?? [], 'the suites load without errors').toEqual([]);
  return listedTests(report);
}

test('the ledger and the conformance suites are in sync both ways', async () => {
  const tests = listSuites();
  expect(tests.length).toBeGreaterThan(50);
  expect(checkLedgerSync(parseLedger(ledgerText), tests)).toEqual([]);
});

test.describe('the sync check fails on', () => {
  const ledger = () => parseLedger(ledgerText) as Record<string, unknown>[];
  const ok: ListedTest[] = (ledger() as { id: string; excluded?: string }[])
    .filter((e) => e.excluded === undefined)
    .map((e) => ({ title: `${e.id} a fact`, annotations: [] }));

  test('a consistent ledger and test list: no problem', () => {
    expect(checkLedgerSync(ledger(), ok)).toEqual([]);
  });

  test('a requirement without a test', () => {
    expect(checkLedgerSync(ledger(), ok.filter((t) => !t.title.startsWith('AUTH-03 ')))).toEqual([
      'AUTH-03: no test title starts with it (add a test or an excluded: reason)',
    ]);
  });

  test('a test with an unknown id, no id, or an excluded id', () => {
    const problems = checkLedgerSync(ledger(), [
      ...ok,
      { title: 'AUTH-99 invented', annotations: [] },
      { title: 'lists the inventory', annotations: [] },
      { title: 'AUTH-10 the ban', annotations: [] },
    ]);
    expect(problems).toEqual([
      'test "AUTH-99 invented": AUTH-99 is not in the ledger',
      'test "lists the inventory": title does not start with a requirement id',
      'test "AUTH-10 the ban": AUTH-10 is excluded in the ledger, yet tested',
    ]);
  });

  test('a requirement annotation naming an unknown id', () => {
    const tests = ok.map((t, i) => (i === 0 ? { ...t, annotations: [{ type: 'requirement', description: 'RL-77' }] } : t));
    expect(checkLedgerSync(ledger(), tests)).toEqual([`test "${ok[0].title}": requirement annotation "RL-77" is not in the ledger`]);
  });

  test('duplicate ids, bad levels, bad ids and missing fields', () => {
    const broken = ledger();
    broken.push({ ...broken[0] });
    broken.push({ id: 'INV-90', section: 'x', quote: 'y', level: 'must-ish' });
    broken.push({ id: 'inv-1', section: '', quote: 'y', level: 'may', excluded: 'n/a' });
    broken.push({ id: 'INV-91', section: 'x', quote: 'y', level: 'may', excluded: 'n/a', colour: 'red' });
    expect(checkLedger(broken)).toEqual([
      `${broken[0].id}: duplicate id`,
      'INV-90: level "must-ish" is not must, should or may',
      'inv-1: id "inv-1" is not AREA-NN',
      'inv-1: section missing or empty',
      'INV-91: unknown field colour',
    ]);
  });

  test('a temporary copy of the ledger with a requirement removed, against the real suites', () => {
    const tests = listSuites();
    const copy = ledger().filter((e) => e.id !== 'MSG-02');
    const problems = checkLedgerSync(copy, tests);
    expect(problems.length).toBeGreaterThan(0);
    expect(problems.every((p) => p.includes('MSG-02 is not in the ledger'))).toBe(true);
  });
});
