/**
 * The requirements ledger and the conformance suites stay in sync both ways
 * (`suites/requirements.yaml`, `core/ledger.ts`).
 */
import { test, expect } from '../test.ts';
import { createHash } from 'node:crypto';
import fs, { readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  checkLedger,
  checkLedgerSync,
  ledgerSpec,
  listSuites as listing,
  loadLedger,
  parseLedger,
  phasesByRequirement,
  quotesNotVerbatim,
  requirementsOf,
  SOURCE_FILES,
  titleId,
  type ListedTest,
} from '../../core/ledger.ts';

const ledgerText = readFileSync(new URL('../../suites/requirements.yaml', import.meta.url), 'utf8');

function listSuites(): ListedTest[] {
  const { tests, errors } = listing();
  expect(errors, 'the suites load without errors').toEqual([]);
  return tests;
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
    expect(
      checkLedgerSync(
        ledger(),
        ok.filter((t) => !t.title.startsWith('AUTH-03 ')),
      ),
    ).toEqual(['AUTH-03: no test title starts with it (add a test or an excluded: reason)']);
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

/** The source files of `spec` and `rules` quotes; a missing one fails, naming it. */
function sourceText(file: string): string {
  expect(fs.existsSync(file), `${file} (the source the ledger quotes) exists`).toBe(true);
  return fs.readFileSync(file, 'utf8');
}

test('every spec quote is verbatim in the spec, every rules quote in spec/http-rules.md', () => {
  const entries = requirementsOf(ledgerText);
  const sources = { spec: sourceText(SOURCE_FILES.spec), rules: sourceText(SOURCE_FILES.rules) };
  expect(quotesNotVerbatim(entries, sources), 'quotes not found verbatim (whitespace-normalised) in their source').toEqual([]);
  expect(entries.filter((e) => e.source === 'rules').map((e) => e.id)).toEqual(expect.arrayContaining(['AUTH-07', 'RL-11']));
  expect(
    entries.filter((e) => e.source === 'project').map((e) => e.id),
    "the project's own rules are marked",
  ).toEqual(expect.arrayContaining(['LOAD-01']));
  // The check itself fails on a paraphrase, a quote from the wrong source and a word changed.
  const spoiled = [
    { ...entries.find((e) => e.id === 'AUTH-03')!, quote: 'A missing or invalid key yields a 401.' },
    { ...entries.find((e) => e.id === 'RL-11')!, source: 'spec' as const },
    { ...entries.find((e) => e.id === 'AUTH-07')!, quote: 'The token itself is case-insensitive.' },
  ];
  expect(quotesNotVerbatim(spoiled, sources)).toEqual([
    { id: 'AUTH-03', source: 'spec' },
    { id: 'RL-11', source: 'spec' },
    { id: 'AUTH-07', source: 'rules' },
  ]);
  // Wrapping differs from the source: whitespace is normalised.
  expect(
    quotesNotVerbatim(
      [{ ...entries.find((e) => e.id === 'AUTH-03')!, quote: 'A missing or invalid\n   key yields 401 with an Error body.' }],
      sources,
    ),
  ).toEqual([]);
});

/** Groups of ids whose quotes are the same text (whitespace-normalised): each requirement quotes its own statement. */
function sharedQuotes(entries: readonly { id: string; quote: string }[]): string[][] {
  const byQuote = new Map<string, string[]>();
  for (const e of entries) {
    const key = e.quote.replace(/\s+/g, ' ').trim();
    byQuote.set(key, [...(byQuote.get(key) ?? []), e.id]);
  }
  return [...byQuote.values()].filter((ids) => ids.length > 1);
}

test('no two requirements share a quote, and every quote stays verbatim in its source', () => {
  const entries = requirementsOf(ledgerText);
  expect(sharedQuotes(entries), 'requirements quoting the same statement').toEqual([]);
  const sources = { spec: sourceText(SOURCE_FILES.spec), rules: sourceText(SOURCE_FILES.rules) };
  expect(quotesNotVerbatim(entries, sources)).toEqual([]);
  // The check fails on a copied quote, whatever its wrapping.
  const auth03 = entries.find((e) => e.id === 'AUTH-03')!;
  const copied = entries.map((e) => (e.id === 'AUTH-12' ? { ...e, quote: auth03.quote.replace(/ /g, '\n  ') } : e));
  expect(sharedQuotes(copied)).toEqual([['AUTH-03', 'AUTH-12']]);
  for (const [a, b] of [
    ['AUTH-03', 'AUTH-12'],
    ['UPD-02', 'GEN-07'],
    ['ERR-01', 'GEN-08'],
    ['RL-01', 'GEN-04'],
    ['RL-06', 'LOAD-02'],
  ]) {
    expect(entries.find((e) => e.id === a)!.quote, `${a} and ${b} quote different statements`).not.toBe(
      entries.find((e) => e.id === b)!.quote,
    );
  }
});

test('the ledger records the spec it quotes: spec.file names the spec and spec.sha256 is its digest', () => {
  const spec = ledgerSpec(ledgerText);
  expect(path.basename(SOURCE_FILES.spec), 'spec.file names the spec the quotes are checked against').toBe(spec.file);
  sourceText(SOURCE_FILES.spec); // fails, naming the file, when the spec is not beside the repository
  const digest = createHash('sha256').update(fs.readFileSync(SOURCE_FILES.spec)).digest('hex');
  expect(
    spec.sha256,
    `spec.sha256 in suites/requirements.yaml is the SHA-256 of ${SOURCE_FILES.spec} (update it, and the quotes, when the spec changes)`,
  ).toBe(digest);
  // The record is read strictly: a missing or malformed one, or an unknown top-level key, throws.
  const withSpec = (lines: string) => ledgerText.replace(/^spec:\n(?: {2}.*\n)+/m, lines);
  expect(() => ledgerSpec(withSpec(''))).toThrow(/no `spec:` record/);
  expect(() => ledgerSpec(withSpec(`spec:\n  file: inventory-service.md\n  sha256: ${digest.slice(1)}\n`))).toThrow(/64 lowercase hex/);
  expect(() => ledgerSpec(withSpec(`spec:\n  file: inventory-service.md\n  sha256: ${digest}\n  version: 1\n`))).toThrow(
    /unknown field\(s\): version/,
  );
  expect(() => parseLedger(`specs: {}\n${ledgerText}`)).toThrow(/unknown top-level key\(s\): specs/);
  expect(withSpec('')).not.toMatch(/^spec:/m);
});

test('loadLedger (certify): the quote becomes a one-line title; source, excluded and experimental are read; any problem throws', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-'));
  try {
    const file = path.join(dir, 'requirements.yaml');
    fs.writeFileSync(
      file,
      `requirements:
  - id: INV-06
    section: What the service does
    quote: "Two deployments exist: production and staging."
    level: must
    excluded: Not observable from one base address.
  - id: UPD-01
    section: Endpoints > 2. Update stock level (experimental)
    quote: "200 | The updated InventoryItem"
    level: must
    experimental: true
  - id: LOAD-01
    section: Project rules
    source: project
    quote: >-
      Nothing is lost
      under concurrency.
    level: should
`,
    );
    expect(loadLedger(file)).toEqual([
      {
        id: 'INV-06',
        section: 'What the service does',
        title: 'Two deployments exist: production and staging.',
        level: 'must',
        source: 'spec',
        excluded: 'Not observable from one base address.',
      },
      {
        id: 'UPD-01',
        section: 'Endpoints > 2. Update stock level (experimental)',
        title: '200 | The updated InventoryItem',
        level: 'must',
        source: 'spec',
        experimental: true,
      },
      { id: 'LOAD-01', section: 'Project rules', title: 'Nothing is lost under concurrency.', level: 'should', source: 'project' },
    ]);
    const bad: Array<[string, RegExp]> = [
      ['requirements:\n  - { id: X-01, section: s, quote: q, level: SHOULD }\n', /X-01: level "SHOULD" is not must, should or may/],
      ['requirements:\n  - { section: s, quote: q, level: must }\n', /entry 0: id undefined is not AREA-NN/],
      [
        'requirements:\n  - { id: A-01, section: s, quote: q, level: must }\n  - { id: A-01, section: s, quote: q, level: must }\n',
        /A-01: duplicate id/,
      ],
      ['requirements:\n  - { id: A-01, section: s, title: t, level: must }\n', /A-01: quote missing or empty; A-01: unknown field title/],
      ['- { id: A-01, section: s, quote: q, level: must }\n', /no `requirements:` list/],
    ];
    for (const [text, error] of bad) {
      fs.writeFileSync(file, text);
      expect(() => loadLedger(file), text).toThrow(error);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  expect(loadLedger().length).toBe(requirementsOf(ledgerText).length);
});

test('one title-id rule: the id a title starts with, followed by a space, a colon or the end', () => {
  expect(titleId('AUTH-02 invalid key yields 401 with an Error body')).toBe('AUTH-02');
  expect(titleId('HTTP-01: Date on every response')).toBe('HTTP-01');
  expect(titleId('  RL-10 a burst')).toBe('RL-10');
  expect(titleId('LOAD-02')).toBe('LOAD-02');
  for (const t of ['auth works', 'AUTH invalid', 'AUTH-2 one digit', 'AUTH-002 three digits', 'AUTH-02x glued', 'see AUTH-02'])
    expect(titleId(t), t).toBeUndefined();
});

test('the phase of a requirement is where its tests live (the projects of the root Playwright config)', () => {
  const { tests, projects, errors } = listing();
  expect(errors).toEqual([]);
  expect(projects.slice(0, 3)).toEqual(['functional', 'rate-limit', 'load']);
  const phases = phasesByRequirement(tests, projects);
  expect(phases.get('RL-05')).toEqual(['rate-limit']);
  expect(phases.get('LOAD-02')).toEqual(['rate-limit']);
  expect(phases.get('LOAD-01')).toEqual(['load']);
  expect(phases.get('GEN-06')).toEqual(['generated']);
  expect(phases.get('AUTH-03')).toEqual(['functional']);
  // Pure: a test in two projects, and a requirement annotation, give both phases in config order.
  const synthetic = phasesByRequirement(
    [
      { title: 'RL-01 x', projects: ['load', 'functional'], annotations: [] },
      { title: 'LOAD-02 y', projects: ['load'], annotations: [{ type: 'requirement', description: 'RL-05' }] },
      { title: 'RL-05 z', projects: ['rate-limit'], annotations: [] },
    ],
    ['functional', 'rate-limit', 'load'],
  );
  expect(Object.fromEntries(synthetic)).toEqual({ 'RL-01': ['functional', 'load'], 'LOAD-02': ['load'], 'RL-05': ['rate-limit', 'load'] });
});
