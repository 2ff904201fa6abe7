/**
 * The generated documentation of the catalogue does not drift: the fault table of faults/README.md
 * and docs/coverage.md (requirement → tests → faults) are what `npm run coverage` writes.
 */
import fs from 'node:fs';
import { test, expect } from '../test.ts';
import { faults } from '../../faults/catalogue/index.ts';
import {
  COVERAGE_FILE,
  coverageRows,
  currentCoverage,
  FAULTS_README,
  renderCoverage,
  renderFaultTable,
  withFaultTable,
} from '../../faults/docs.ts';

test('faults/README.md carries the fault table generated from faults/catalogue/ (npm run coverage)', () => {
  const readme = fs.readFileSync(FAULTS_README, 'utf8');
  expect(readme, 'faults/README.md is stale: run `npm run coverage`').toBe(withFaultTable(readme, renderFaultTable()));
  // The check fails on a table edited by hand or a fault left out.
  const edited = withFaultTable(readme, renderFaultTable(faults.slice(1)));
  expect(edited).not.toBe(readme);
  expect(() => withFaultTable('no markers', 'x')).toThrow(/lacks the markers/);
  for (const f of faults) expect(readme).toContain(`| \`${f.name}\``);
});

test('docs/coverage.md is the listing requirement → tests → faults of the repository as it is (npm run coverage)', () => {
  expect(fs.existsSync(COVERAGE_FILE), 'docs/coverage.md exists: run `npm run coverage`').toBe(true);
  expect(fs.readFileSync(COVERAGE_FILE, 'utf8'), 'docs/coverage.md is stale: run `npm run coverage`').toBe(currentCoverage());
});

test('the coverage rows: phases and files from the tests, faults from the catalogue, exclusions with their reason', () => {
  const rows = coverageRows(
    [
      { id: 'AUTH-03', section: 'Authentication', title: 't', level: 'must', source: 'spec' },
      { id: 'RL-05', section: 'Limits', title: 't', level: 'must', source: 'spec' },
      { id: 'AUTH-04', section: 'Authentication', title: 't', level: 'must', source: 'spec', excluded: 'outside the API' },
      { id: 'ZZ-01', section: 'x', title: 't', level: 'must', source: 'project' },
    ],
    [
      { title: 'AUTH-03 a', file: 'auth/b.spec.ts', projects: ['functional'], annotations: [] },
      { title: 'AUTH-03 b', file: 'auth/a.spec.ts', projects: ['functional'], annotations: [] },
      { title: 'RL-05 c', file: 'rate-limit/r.spec.ts', projects: ['rate-limit'], annotations: [] },
    ],
    ['functional', 'rate-limit'],
  );
  expect(rows[0]).toMatchObject({ id: 'AUTH-03', phases: ['functional'], files: ['auth/a.spec.ts', 'auth/b.spec.ts'] });
  expect(rows[0]!.faults).toContain('auth-401-as-403');
  expect(rows[1]).toMatchObject({ id: 'RL-05', phases: ['rate-limit'] });
  expect(rows[2]).toMatchObject({ id: 'AUTH-04', excluded: 'outside the API', faults: [] });
  const md = renderCoverage(rows);
  expect(md).toContain('| ZZ-01 | must | project | — | **none** | — |');
  expect(md).toContain('| AUTH-04 | must | spec | — | excluded: outside the API | — |');
});
