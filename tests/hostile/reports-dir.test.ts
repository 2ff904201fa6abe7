/**
 * Hostile reports folders: the run writes only in a folder it owns and never costs a user a file.
 * Each refused folder gives exit 2 with a clear line within seconds, before any request, and every
 * file in it (and behind it) stays byte-identical; no key reaches stdout. A secret scan over a
 * user's files reports what it finds and changes nothing.
 */
import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import AdmZip from 'adm-zip';
import { runCertify } from '../../certify/run.ts';
import { scanSecrets } from '../../certify/steps/scan-secrets.ts';
import { REPO_ROOT } from '../../core/paths.ts';
import { findNeedle, secretNeedles } from '../../core/secrets.ts';
import { startHostileTarget } from './target.ts';

const KEY = 'ik_hostile_dir_3e4f5a6b7c8d9e0f';
const NEEDLES = secretNeedles([{ name: 'API_KEY', value: KEY }]);

/** A fake home with a user's files, some of which hold the key (as a user's `.env` would), and what an earlier run left there. */
function fakeHome(): { root: string; home: string } {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-dir-')));
  const home = path.join(root, 'home');
  fs.mkdirSync(home);
  writeUserFiles(home);
  for (const d of ['html', 'load', 'test-results']) {
    fs.mkdirSync(path.join(home, d));
    fs.writeFileSync(path.join(home, d, 'mine.txt'), `user file in ${d}`);
  }
  fs.writeFileSync(path.join(home, 'junit.xml'), '<testsuites/>');
  return { root, home };
}

function writeUserFiles(dir: string): void {
  fs.writeFileSync(path.join(dir, '.env'), `API_KEY=${KEY}\n`);
  fs.writeFileSync(path.join(dir, 'notes.txt'), `my key: ${KEY}\n`);
  const zip = new AdmZip();
  zip.addFile('secrets.txt', Buffer.from(KEY));
  fs.writeFileSync(path.join(dir, 'backup.zip'), zip.toBuffer());
  fs.writeFileSync(path.join(dir, 'photo.gz'), zlib.gzipSync(Buffer.from(`exif ${KEY}`)));
}

/** Every file under `dir` (links not followed) with its bytes. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    const p = path.join(entry.parentPath, entry.name);
    const stat = fs.lstatSync(p);
    out.set(
      path.relative(dir, p),
      stat.isSymbolicLink() ? `link → ${fs.readlinkSync(p)}` : stat.isFile() ? fs.readFileSync(p).toString('base64') : 'dir',
    );
  }
  return out;
}

/** Refused folders: how each is made, the HOME the run sees, and what the message says. */
const REFUSED: Array<{ name: string; make: (s: ReturnType<typeof fakeHome>) => string; home?: boolean; problem: RegExp }> = [
  {
    name: 'REPORTS_DIR as a symbolic link to the home folder',
    make: (s) => {
      fs.symlinkSync(s.home, path.join(s.root, 'reports'));
      return path.join(s.root, 'reports');
    },
    home: true,
    problem: /REPORTS_DIR .*reports is a symbolic link/,
  },
  { name: 'REPORTS_DIR as the home folder', make: (s) => s.home, home: true, problem: /not .*\(the home folder\)/ },
  { name: 'REPORTS_DIR as a folder holding the home folder', make: (s) => s.root, home: true, problem: /it holds the home folder/ },
  {
    name: "REPORTS_DIR as a folder with the user's .env, notes.txt, backup.zip and photo.gz",
    make: (s) => {
      const dir = path.join(s.root, 'work');
      fs.mkdirSync(dir);
      writeUserFiles(dir);
      return dir;
    },
    problem: /holds files this run did not write \(\.env, backup\.zip, notes\.txt, photo\.gz\)/,
  },
  { name: 'REPORTS_DIR as the repository root', make: () => REPO_ROOT, problem: /\(the repository root\)/ },
];

for (const c of REFUSED) {
  test(`${c.name} is refused: exit 2 before any request, every file byte-identical, no key on stdout`, async () => {
    const s = fakeHome();
    const target = await startHostileTarget({ keys: { API_KEY: KEY }, limit: 10, windowMs: 60_000 });
    const savedHome = process.env.HOME;
    try {
      const dir = c.make(s);
      // The repository root: its top-level entries (its files are other tests' workplace too).
      const top = () =>
        dir === REPO_ROOT
          ? fs
              .readdirSync(REPO_ROOT)
              .filter((n) => n !== 'test-results')
              .sort()
          : [];
      const before = [snapshot(s.root), top()];
      if (c.home) process.env.HOME = s.home;
      let output = '';
      const started = Date.now();
      const { exitCode: code } = await runCertify({
        env: { PATH: process.env.PATH, HOME: s.home, BASE_URL: target.baseUrl, API_KEY: KEY, REPORTS_DIR: dir },
        write: (t) => (output += t),
        onlyPhases: ['functional'],
      });
      expect(code, output).toBe(2);
      expect(Date.now() - started).toBeLessThan(5000);
      expect(output).toMatch(c.problem);
      expect(
        NEEDLES.flatMap((n) => findNeedle(output, n)),
        'no key on stdout',
      ).toEqual([]);
      expect(target.counts().requests, 'nothing was sent').toEqual({});
      expect([snapshot(s.root), top()], 'every file byte-identical').toEqual(before);
    } finally {
      process.env.HOME = savedHome;
      await target.close();
      fs.rmSync(s.root, { recursive: true, force: true });
    }
  });
}

test("the secret scan over a user's files reports every key it finds and changes nothing", () => {
  const s = fakeHome();
  try {
    const before = snapshot(s.home);
    const scan = scanSecrets([s.home], [{ name: 'API_KEY', value: KEY }], s.home);
    expect([...new Set(scan.leftAlone)].sort()).toEqual(['.env', 'backup.zip', 'notes.txt', 'photo.gz']);
    expect(scan.scrubbed).toEqual([]);
    expect(scan.removed).toEqual([]);
    expect(scan.findings.every((f) => f.endsWith('not written by this run: left as it is'))).toBe(true);
    expect(scan.findings.some((f) => f.startsWith('backup.zip › secrets.txt'))).toBe(true);
    expect(scan.findings.join('\n').includes(KEY)).toBe(false);
    expect(snapshot(s.home)).toEqual(before);
  } finally {
    fs.rmSync(s.root, { recursive: true, force: true });
  }
});
