'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

/**
 * The tool's private folder `<name>-<uid>` in the OS temp dir (`tmp`), made 0700 when missing: where
 * it keeps what it runs later (a clone's transpiled tree, V8's code cache). Undefined when it cannot
 * be made, or when it is a link, not a folder, another user's, or open to others: nobody else's
 * file may ever be run as this user's harness.
 */
function privateFolder(name, tmp = os.tmpdir()) {
  const uid = typeof process.getuid === 'function' ? process.getuid() : undefined;
  const dir = path.join(tmp, `${name}-${uid ?? 'user'}`);
  try {
    fs.mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if (error?.code !== 'EEXIST') return undefined;
  }
  try {
    const stat = fs.lstatSync(dir);
    if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o077) !== 0) return undefined;
    return dir;
  } catch {
    return undefined;
  }
}

module.exports = { privateFolder };
