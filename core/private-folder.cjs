'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/**
 * The tool's private folder `<name>-<uid>` in the OS temp dir (`tmp`), made 0700 when missing: where
 * it keeps what it runs later (a clone's transpiled tree, Node's compile cache). Undefined when it cannot
 * be made, or when it is a link, not a folder, another user's or open to others, or when the temp
 * dir's path is one somebody else could change (`safePath`): nobody else's file may ever be run as
 * this user's harness. The path returned is the real one, links resolved.
 */
function privateFolder(name, tmp = os.tmpdir()) {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  try {
    const real = fs.realpathSync(tmp);
    if (uid !== undefined && !safePath(real, uid)) return undefined;
    const dir = path.join(real, `${name}-${uid ?? 'user'}`);
    try {
      fs.mkdirSync(dir, { mode: 0o700 });
    } catch (error) {
      if (error?.code !== 'EEXIST') return undefined;
    }
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

/**
 * Whether no other user can rename or replace anything on the way to `real` (links resolved): every
 * folder from the root down belongs to this user or to root, and one that others may write has the
 * sticky bit (as `/tmp` has), so that only an entry's owner can rename or remove it.
 */
function safePath(real, uid) {
  for (let dir = real; ; dir = path.dirname(dir)) {
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory() || (stat.uid !== uid && stat.uid !== 0)) return false;
    if ((stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0) return false;
    if (path.dirname(dir) === dir) return true;
  }
}

module.exports = { privateFolder };
