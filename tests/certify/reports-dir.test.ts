/**
 * The reports folder step (certify/steps/reports-dir.ts): the run writes only in a folder it owns
 * (fresh, empty, or marked by an earlier run) and deletes only what its manifest lists; every
 * other folder is refused before a file is touched.
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OWNER_FILE, prepareReportsDir, REPLAY_DIR } from '../../certify/steps/reports-dir.ts';

function sandbox(): { root: string; home: string; repo: string; repoRoot: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'reports-dir-')));
  const home = path.join(root, 'home');
  const repo = path.join(root, 'repo');
  fs.mkdirSync(home);
  fs.mkdirSync(path.join(repo, 'reports'), { recursive: true });
  fs.writeFileSync(path.join(home, 'diary.txt'), 'mine');
  fs.writeFileSync(path.join(repo, 'reports', 'README.md'), 'shipped');
  return { root, home, repo, repoRoot: repo };
}

/** Refused folders: each with how it is made and what the message says. Nothing in them changes. */
const REFUSED: Array<{ name: string; make: (s: ReturnType<typeof sandbox>) => string; problem: RegExp }> = [
  {
    name: 'a symbolic link to the home folder',
    make: (s) => {
      fs.symlinkSync(s.home, path.join(s.root, 'link'));
      return path.join(s.root, 'link');
    },
    problem: /symbolic link/,
  },
  {
    name: 'a symbolic link to an empty folder',
    make: (s) => {
      fs.mkdirSync(path.join(s.root, 'empty'));
      fs.symlinkSync(path.join(s.root, 'empty'), path.join(s.root, 'link'));
      return path.join(s.root, 'link');
    },
    problem: /symbolic link/,
  },
  { name: 'the home folder', make: (s) => s.home, problem: /not .*home.*\(the home folder\)/ },
  { name: 'a folder holding the home folder', make: (s) => s.root, problem: /it holds the home folder/ },
  { name: 'the repository root', make: (s) => s.repo, problem: /the repository root/ },
  { name: 'a file', make: (s) => path.join(s.home, 'diary.txt'), problem: /not a folder/ },
  {
    name: "a folder with the user's own files",
    make: (s) => {
      const d = path.join(s.root, 'mine');
      fs.mkdirSync(d);
      for (const f of ['.env', 'notes.txt', 'backup.zip', 'photo.gz']) fs.writeFileSync(path.join(d, f), f);
      return d;
    },
    problem: /holds files this run did not write \(\.env, backup\.zip, notes\.txt, photo\.gz\)/,
  },
  {
    name: 'a marked folder where a user added a file',
    make: (s) => {
      const d = path.join(s.root, 'marked');
      const first = prepareReportsDir(d, s);
      fs.writeFileSync(path.join(d, 'junit.xml'), 'ours');
      if (first.ok) first.finish();
      fs.writeFileSync(path.join(d, 'html-notes.txt'), 'user');
      return d;
    },
    problem: /did not write \(html-notes\.txt\)/,
  },
];

for (const c of REFUSED) {
  test(`reports folder: ${c.name} is refused and left as it was`, () => {
    const s = sandbox();
    try {
      const dir = c.make(s);
      const before = fs.readdirSync(s.root, { recursive: true }).map(String).sort();
      const prepared = prepareReportsDir(dir, s);
      expect(prepared.ok).toBe(false);
      expect(prepared.ok ? '' : prepared.problem).toMatch(c.problem);
      expect(fs.readdirSync(s.root, { recursive: true }).map(String).sort()).toEqual(before);
    } finally {
      fs.rmSync(s.root, { recursive: true, force: true });
    }
  });
}

test('reports folder: a fresh folder is created and marked; the next run deletes only what the manifest lists', () => {
  const s = sandbox();
  try {
    const dir = path.join(s.root, 'out', 'reports');
    const first = prepareReportsDir(dir, s);
    expect(first.ok).toBe(true);
    fs.mkdirSync(path.join(dir, 'html', 'data'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'html', 'data', 'x.zip'), 'z');
    fs.writeFileSync(path.join(dir, 'conformance.json'), '{}');
    if (first.ok) {
      expect(first.owns(path.join(dir, 'conformance.json'))).toBe(true);
      expect(first.owns(path.join(dir, OWNER_FILE))).toBe(false);
      expect(first.owns(path.join(s.home, 'diary.txt'))).toBe(false);
      first.finish();
    }
    const second = prepareReportsDir(dir, s);
    expect(second.ok).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([OWNER_FILE]);
  } finally {
    fs.rmSync(s.root, { recursive: true, force: true });
  }
});

test("reports folder: the repository's reports/ keeps its README; an unfinished run's entries are its own; an empty user folder stays", () => {
  const s = sandbox();
  try {
    const dir = path.join(s.repo, 'reports');
    const first = prepareReportsDir(dir, s);
    expect(first.ok).toBe(true);
    if (first.ok) expect(first.owns(path.join(dir, 'README.md'))).toBe(false);
    // The run stopped before finish(): everything under its entries is its own.
    fs.mkdirSync(path.join(dir, 'test-results', 'a'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'test-results', 'a', 'trace.zip'), 't');
    fs.mkdirSync(path.join(dir, 'photos'));
    expect(prepareReportsDir(dir, s).ok).toBe(true);
    expect(fs.readdirSync(dir).sort()).toEqual([OWNER_FILE, 'README.md', 'photos']);
    expect(fs.readFileSync(path.join(dir, 'README.md'), 'utf8')).toBe('shipped');
  } finally {
    fs.rmSync(s.root, { recursive: true, force: true });
  }
});

test("reports folder: an unmarked folder holding only the run's own names (an earlier version, a plain Playwright run) is taken as the run's", () => {
  const s = sandbox();
  try {
    const dir = path.join(s.root, 'old');
    fs.mkdirSync(path.join(dir, 'html'), { recursive: true });
    fs.writeFileSync(path.join(dir, 'html', 'index.html'), 'x');
    fs.writeFileSync(path.join(dir, 'pacing.json'), '{}');
    expect(prepareReportsDir(dir, s).ok).toBe(true);
    expect(fs.readdirSync(dir)).toEqual([OWNER_FILE]);
  } finally {
    fs.rmSync(s.root, { recursive: true, force: true });
  }
});

test("reports folder: a replay folder inside a finished run's folder is judged by its own manifest; a user file in it still refuses the folder", () => {
  const s = sandbox();
  try {
    const dir = path.join(s.root, 'reports');
    const run = prepareReportsDir(dir, s);
    if (!run.ok) throw new Error(run.problem);
    fs.writeFileSync(path.join(dir, 'conformance.json'), '{}');
    run.finish();
    // A replay after the run: its own folder, its own manifest, unknown to the run's.
    const replay = prepareReportsDir(path.join(dir, REPLAY_DIR), s);
    if (!replay.ok) throw new Error(replay.problem);
    fs.writeFileSync(path.join(dir, REPLAY_DIR, 'conformance.json'), '{}');
    replay.finish();
    const next = prepareReportsDir(dir, s);
    expect(next.ok, next.ok ? '' : next.problem).toBe(true);
    expect(fs.existsSync(path.join(dir, REPLAY_DIR, 'conformance.json')), "the replay's file is the run's to delete").toBe(false);
    // The same, with a file of the user's inside the replay folder: refused, nothing touched.
    const again = prepareReportsDir(path.join(dir, REPLAY_DIR), s);
    if (!again.ok) throw new Error(again.problem);
    again.finish();
    fs.writeFileSync(path.join(dir, REPLAY_DIR, 'mine.txt'), 'user');
    const refused = prepareReportsDir(dir, s);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? '' : refused.problem).toMatch(/did not write \(replay\/mine\.txt\)/);
    expect(fs.readFileSync(path.join(dir, REPLAY_DIR, 'mine.txt'), 'utf8')).toBe('user');
  } finally {
    fs.rmSync(s.root, { recursive: true, force: true });
  }
});
