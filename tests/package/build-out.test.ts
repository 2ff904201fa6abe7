import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test, expect } from '../test.ts';
import { REPO_ROOT } from '../../core/paths.ts';

// `cli/build.mjs --out` builds the compiled tree elsewhere than dist/ (the fault matrix certifies
// with such a tree, faults/tree.ts). The build replaces what it builds into, so a folder that holds
// anything is refused before anything is written or removed.
test('build --out refuses a folder that holds files, leaves it as it was, and exits 2 naming it', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'build-out-'));
  try {
    const mine = path.join(dir, 'notes.txt');
    fs.writeFileSync(mine, 'a user file');
    const r = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--out', dir], { encoding: 'utf8', timeout: 60_000 });
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(`--out needs a folder that does not exist yet or is empty: ${dir} is not`);
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
    expect(fs.readFileSync(mine, 'utf8')).toBe('a user file');
    const none = spawnSync(process.execPath, [path.join(REPO_ROOT, 'cli', 'build.mjs'), '--out'], { encoding: 'utf8', timeout: 60_000 });
    expect(none.status, 'no folder named').toBe(2);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
