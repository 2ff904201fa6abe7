/**
 * What is supported is said once and true: the Node versions .ci/node-versions.json pins (npm test
 * runs on the oldest line, .ci/compat on each of `compat`) are the ones package.json `engines`, the
 * README's Install section, the Action's default Node and the pipeline examples name.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { test, expect } from '../test.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const read = (file: string): string => fs.readFileSync(path.join(ROOT, file), 'utf8');
const pinned = JSON.parse(read('.ci/node-versions.json')) as { oldest: string; compat: string[] };
const major = (version: string): number => Number(version.split('.')[0]);
/** Every tested version: the oldest supported of the machine's line, then those of the compat pass. */
const TESTED = [pinned.oldest, ...pinned.compat];

test('the pinned Node versions are exact, one per line, oldest first; the compat pass runs them', () => {
  for (const v of TESTED) expect(v, 'an exact version x.y.z').toMatch(/^\d+\.\d+\.\d+$/);
  const majors = TESTED.map(major);
  expect(new Set(majors).size, 'one version a line').toBe(majors.length);
  expect(majors, 'oldest first').toEqual([...majors].sort((a, b) => a - b));
  expect(read('.ci/compat'), '.ci/compat reads the pinned file').toContain('.ci/node-versions.json');
  expect(read('.ci/run'), '.ci/run runs the compat pass').toMatch(/^\.ci\/compat\b/m);
});

test("package.json engines allows each tested version's line from that version on, and no other", () => {
  const pkg = JSON.parse(read('package.json')) as { engines: { node: string } };
  expect(pkg.engines.node).toBe(TESTED.map((v) => `^${v}`).join(' || '));
});

test("the README's Install section names every tested version", () => {
  const readme = read('README.md');
  const start = readme.indexOf('\n## Install\n');
  expect(start, 'the README has an Install section').toBeGreaterThan(0);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  for (const v of TESTED) expect(section, `the Install section names Node ${v}`).toContain(v);
  const named = [...section.matchAll(/\bNode(?:\.js)? (\d+)/g)].map((m) => Number(m[1]));
  for (const m of named) expect(TESTED.map(major), `Node ${m} in the Install section is a tested line`).toContain(m);
});

test('the Action runs the newest tested Node by default and its input names the tested versions', () => {
  const action = YAML.parse(read('action.yml')) as { inputs: Record<string, { description: string; default: string }> };
  const input = action.inputs['node-version']!;
  expect(input.default).toBe(pinned.compat.at(-1));
  for (const v of TESTED) expect(input.description, `names ${v}`).toContain(v);
});

test('the pipeline examples run a tested line of Node', () => {
  const examples = ['.github/workflows/certify-staging.example.yml', 'ci/gitlab-ci.example.yml', 'ci/registry/verify-submissions.yml'];
  for (const file of examples) {
    const text = read(file);
    const named = [...text.matchAll(/node-version: ['"]?(\d+)|image: node:(\d+)/g)].map((m) => Number(m[1] ?? m[2]));
    expect(named.length, `${file} names its Node`).toBeGreaterThan(0);
    for (const m of named) expect(pinned.compat.map(major), `${file} runs Node ${m}`).toContain(m);
  }
});
