'use strict';
/**
 * V8's code cache for Playwright's own modules, in the Playwright processes the tool starts: loaded
 * with `node --require` through `NODE_OPTIONS` (core/playwright-env.ts `playwrightEnv`).
 *
 * Every phase, listing and merge of a run starts Playwright's runner and workers anew, and each of
 * them compiles Playwright's bundles again (`coreBundle.js`, `utilsBundle.js`, `babelBundle.js`,
 * `expect.js`: about 10 MB of JavaScript). Measured on Node 20 (2 cores): loading `playwright-core`'s
 * `coreBundle.js` took 0.60 CPU-s, and 0.41 with the code an earlier process compiled; `expect.js`
 * 0.70 and 0.40. Node 22 does this itself (`module.enableCompileCache`); Node 20 has no such thing.
 *
 * What it caches: CommonJS modules of the packages `playwright` and `playwright-core` of MIN_BYTES
 * or more that hold no dynamic `import()`, or whose text is one REVIEWED, whose imports the tool's
 * runs never reach. Nothing else is touched: every other module compiles as node does, and nothing
 * is installed under a policy (`--experimental-policy`), whose integrity checks node makes itself.
 *
 * Where: `inventory-conformance-code-cache-<uid>` in the OS temp dir (core/private-folder.cjs: this
 * user's, 0700, on a path nobody else can change): code from the cache is run as it is, so nobody
 * else's file may ever be taken for it. An entry is read only when it is a regular file of this
 * user's that no one else may write (opened without following a link), and its payload is used only
 * when its SHA-256, written before it, matches: V8 checks no more than a header of its own, and runs
 * damaged code (measured: a few flipped bits crashed V8, hung, or ran other code).
 *
 * An entry is named by the module's path (V8 keeps the path that compiled the code, which stack
 * traces name), its text (SHA-256), node's module wrapper, and node's version and architecture: a
 * module changed in any way has a new name. V8 also checks its own version and the flags the code
 * was compiled with, and rejects data that does not match. A rejected or missing entry is written
 * when the process exits, with the code compiled by then (functions compiled lazily included), into
 * a new file of a random name, synced, then renamed into place, so that no process reads half an
 * entry. Entries older than UNUSED_MS are removed when one is written.
 *
 * Any error (a folder that is not private, a full disk, a bad entry) falls back to node's own
 * compile, without a word: the cache can make a process start on less CPU; it never changes what
 * runs, nor what the process prints.
 */
const Module = require('node:module');
const vm = require('node:vm');
const fs = require('node:fs');
const path = require('node:path');
const crypto = require('node:crypto');
const { privateFolder } = require('./private-folder.cjs');

/** Smaller modules compile in less time than reading an entry takes. */
const MIN_BYTES = 16 * 1024;
/** An entry written this long ago is removed when another is written (one still in use is written again). */
const UNUSED_MS = 7 * 24 * 60 * 60 * 1000;
/** What an entry starts with, before the SHA-256 of its payload. */
const MAGIC = Buffer.from('ICC1');
const HEADER_BYTES = MAGIC.length + 32;
/** A dynamic import, with or without spaces and comments before its parenthesis. */
const IMPORT_CALL = /\bimport\s*(?:\/\*[\s\S]*?\*\/\s*)*\(/;
/**
 * Modules holding a dynamic import that are cached all the same, by their path in `node_modules`
 * and the SHA-256 of their text (Playwright 1.65.1), each site read: on Node 20 a module compiled
 * here (`vm.Script`) has no loader for a dynamic import (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING; the
 * loader node offers for it, `USE_MAIN_CONTEXT_DEFAULT_LOADER`, is lost with a cache and warns on
 * stderr), so a module is cached only when none of its imports can run in the tool's Playwright
 * processes, and only while `when` holds, if it has one. Another text (another version of
 * Playwright) is not cached until it is read again.
 */
const REVIEWED = {
  // `new Function('return import("vite")')`: the trace viewer and UI mode, which the tool never opens.
  'playwright-core/lib/coreBundle.js': {
    sha256: '874451b4e7acf90cda4330be42db2259c9e5036c22150f18016f04768434234c',
  },
  // `import("kerberos")`: Negotiate proxy authentication (the tool gives Playwright no proxy); one
  // in a comment; `import("node:crypto")` only where node has no global `crypto`.
  'playwright-core/lib/utilsBundle.js': {
    sha256: '897440163be29ea4c73c6203ce2fc244aebb2916839d37b8591a94b72d929a0a',
    when: () => globalThis.crypto !== undefined,
  },
  // Jest's `importModule`: Jest's own configuration files, which Playwright's `expect` never reads.
  'playwright/lib/matchers/expect.js': {
    sha256: '295d682462a9abe96db1905ec5f5f84c0997eaee1beb143f0b650af2b08d9400',
  },
  // Babel's `import_` loads ESM configuration files and plugins named as strings: Playwright's
  // transform gives Babel `configFile: false`, `babelrc: false` and its plugins as objects. The
  // others are messages and calls of a method named `import`.
  'playwright/lib/transform/babelBundle.js': {
    sha256: '116fba88c95abd3c21cafbe67ef0e7b34e106d4a47eaa5ce7709bff82a125867',
  },
};

/** What this process did, for the tests: modules read from the cache, compiled without an entry, entries rejected; the modules cached. */
const stats = { hits: 0, misses: 0, rejected: 0, folder: undefined, modules: [] };
globalThis[Symbol.for('inventory-conformance.code-cache')] = stats;

const sha256 = (data) => crypto.createHash('sha256').update(data).digest();

/** The entry's name of the module at `filename`, or undefined when it is not cached. */
function entryName(filename, content) {
  if (content.length < MIN_BYTES) return undefined;
  const inPackages = filename.split(path.sep).join('/').split('/node_modules/').at(-1);
  if (!/^playwright(-core)?\//.test(inPackages)) return undefined;
  const text = sha256(content).toString('hex');
  const reviewed = REVIEWED[inPackages];
  if (IMPORT_CALL.test(content) && !(reviewed && reviewed.sha256 === text && (reviewed.when === undefined || reviewed.when())))
    return undefined;
  const where = [process.version, process.arch, filename, Module.wrapper[0], Module.wrapper[1], text].join('\0');
  return `${sha256(where).toString('hex').slice(0, 40)}.v8`;
}

/** The payload of the entry at `file`: undefined when there is none, or it is not this user's regular file, or its checksum fails. */
function readEntry(file) {
  let fd;
  try {
    fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK);
  } catch {
    return undefined;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.uid !== process.getuid() || (stat.mode & 0o022) !== 0) return { bad: true };
    const entry = fs.readFileSync(fd);
    const payload = entry.subarray(HEADER_BYTES);
    const intact = entry.length > HEADER_BYTES && entry.subarray(0, MAGIC.length).equals(MAGIC);
    return intact && sha256(payload).equals(entry.subarray(MAGIC.length, HEADER_BYTES)) ? { payload } : { bad: true };
  } finally {
    fs.closeSync(fd);
  }
}

/** Writes `payload` as the entry at `file`: a new file of a random name, synced, renamed into place. */
function writeEntry(file, payload) {
  const temporary = `${file}.${crypto.randomBytes(8).toString('hex')}.tmp`;
  let fd;
  try {
    fd = fs.openSync(temporary, 'wx', 0o600);
    fs.writeSync(fd, Buffer.concat([MAGIC, sha256(payload), payload]));
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(temporary, file);
  } catch {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(temporary, { force: true });
  }
}

/** The `require` node gives a module (lib/internal/modules/helpers.js `makeRequireFunction`). */
function requireOf(mod) {
  const must = (request) => {
    if (typeof request !== 'string') {
      const error = new TypeError(`The "request" argument must be of type string. Received ${typeof request}`);
      error.code = 'ERR_INVALID_ARG_TYPE';
      throw error;
    }
  };
  const require = (id) => mod.require(id);
  const resolve = (request, options) => {
    must(request);
    return Module._resolveFilename(request, mod, false, options);
  };
  resolve.paths = (request) => {
    must(request);
    return Module._resolveLookupPaths(request, mod);
  };
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

/** Scripts compiled without an accepted entry, written when the process exits. */
const pending = [];

/** Removes the entries, and temporary files, written more than UNUSED_MS ago. */
function prune(folder) {
  const now = Date.now();
  for (const name of fs.readdirSync(folder)) {
    try {
      const file = path.join(folder, name);
      if (now - fs.lstatSync(file).mtimeMs > UNUSED_MS) fs.rmSync(file, { force: true });
    } catch {
      // another process removed it
    }
  }
}

/** Compiles `content` with the entry at `file` when there is a sound one; remembers the script to write when not. */
function compileCached(content, filename, file) {
  const entry = readEntry(file);
  const cachedData = entry?.payload;
  const script = new vm.Script(Module.wrap(content), { filename, cachedData });
  stats.modules.push(filename);
  if (cachedData && !script.cachedDataRejected) stats.hits++;
  else {
    stats[entry ? 'rejected' : 'misses']++;
    pending.push({ script, file });
  }
  return script.runInThisContext({ displayErrors: true });
}

/** Node's policy checks a module's integrity in its own compile: under one, every module compiles there. */
const underPolicy = () => [...process.execArgv, process.env.NODE_OPTIONS || ''].some((a) => a.includes('--experimental-policy'));

function install() {
  if (Number(process.versions.node.split('.')[0]) < 20 || typeof process.getuid !== 'function' || underPolicy()) return;
  const folder = privateFolder('inventory-conformance-code-cache');
  if (!folder) return;
  stats.folder = folder;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function compileWithCache(content, filename, format, ...rest) {
    let wrapper;
    try {
      const name = format === undefined || format === 'commonjs' ? entryName(filename, content) : undefined;
      if (name !== undefined) wrapper = compileCached(content, filename, path.join(folder, name));
    } catch {
      wrapper = undefined;
    }
    if (wrapper === undefined) return compile.call(this, content, filename, format, ...rest);
    return wrapper.call(this.exports, this.exports, requireOf(this), this, filename, path.dirname(filename));
  };
  process.once('exit', () => {
    if (pending.length === 0) return;
    try {
      for (const { script, file } of pending.splice(0)) writeEntry(file, script.createCachedData());
      prune(folder);
    } catch {
      // the next process compiles anew
    }
  });
}

try {
  install();
} catch {
  // node compiles every module itself
}
