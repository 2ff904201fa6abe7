'use strict';
/**
 * V8's code cache for Playwright's own modules, in the Playwright processes the tool starts: loaded
 * with `node --require` through `NODE_OPTIONS` (core/playwright-env.ts `playwrightEnv`).
 *
 * Every phase, listing and merge of a run starts Playwright's runner and workers anew, and each of
 * them compiles Playwright's bundles again (`coreBundle.js`, `utilsBundle.js`, `babelBundle.js`,
 * `expect.js`: about 10 MB of JavaScript). Measured on Node 20 (2 cores): loading `playwright-core`'s `coreBundle.js`
 * took 0.60 CPU-s, and 0.41 with the code an earlier process compiled; `expect.js` 0.70 and 0.40.
 * Node 22 does this itself (`module.enableCompileCache`); Node 20 has no such thing.
 *
 * What it caches: modules of the packages `playwright` and `playwright-core` of MIN_BYTES or more
 * that hold no dynamic `import()`, or only imports that the tool's runs never reach (REVIEWED).
 * Nothing else is touched: every other module compiles as node does.
 *
 * Where: `inventory-conformance-code-cache-<uid>` in the OS temp dir, used only when it is a folder
 * of this user's that nobody else may read or write (mode 0700, not a link): code from a cache is
 * run as it is, so nobody else's file may ever be taken for it. An entry is named by the module's
 * text (SHA-256) and node's version and architecture: the same Playwright in another clone or
 * project shares its entries, and a module changed in any way has a new name (V8 itself checks
 * only the text's length). V8 also checks its own version and the flags the code was compiled
 * with, and rejects data that does not match; a rejected or missing entry is
 * written when the process exits, with the code compiled by then (functions compiled lazily
 * included), under a temporary name renamed into place, so that two processes never read half an
 * entry. Entries older than UNUSED_MS are removed when one is written.
 *
 * Any error (a folder that is not private, a full disk, a bad entry) falls back to node's own
 * compile: the cache can make a process start on less CPU; it never changes what runs.
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
/**
 * Modules whose text holds `import(` that are cached all the same: by their path in `node_modules`,
 * how many times the text holds it, and when. A module from V8's cache has no loader for a dynamic
 * import on Node 20 (it fails with ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING), so a module is cached
 * only when none of its imports can run in the tool's Playwright processes: each site below was
 * read in Playwright 1.65.1. Another count (another version of Playwright) and it is not cached.
 */
const REVIEWED = {
  // `new Function('return import("vite")')`: the trace viewer and UI mode, which the tool never opens.
  'playwright-core/lib/coreBundle.js': { imports: 1, when: () => true },
  // `import("kerberos")`: Negotiate proxy authentication (the tool gives Playwright no proxy); one
  // in a comment; `import("node:crypto")` only where node has no global `crypto`.
  'playwright-core/lib/utilsBundle.js': { imports: 3, when: () => globalThis.crypto !== undefined },
  // Jest's `importModule`: Jest's own configuration files, which Playwright's `expect` never reads.
  'playwright/lib/matchers/expect.js': { imports: 1, when: () => true },
  // Babel's `import_` loads ESM configuration files and plugins named as strings: Playwright's
  // transform gives Babel `configFile: false`, `babelrc: false` and its plugins as objects. The
  // other sixteen are messages and a method named `import`.
  'playwright/lib/transform/babelBundle.js': { imports: 17, when: () => true },
};

/** What this process did, for the tests: modules read from the cache, compiled without an entry, entries rejected; the modules cached. */
const stats = { hits: 0, misses: 0, rejected: 0, folder: undefined, modules: [] };
globalThis[Symbol.for('inventory-conformance.code-cache')] = stats;

/** The entry's name of the module at `filename`, or undefined when it is not cached. */
function entryName(filename, content) {
  if (content.length < MIN_BYTES) return undefined;
  const inPackages = filename.split(path.sep).join('/').split('/node_modules/').at(-1);
  if (!/^playwright(-core)?\//.test(inPackages)) return undefined;
  const imports = occurrences(content, 'import(');
  const reviewed = REVIEWED[inPackages];
  if (imports > 0 && !(reviewed && reviewed.imports === imports && reviewed.when())) return undefined;
  const identity = crypto.createHash('sha256').update(content).digest('hex');
  const where = [process.version, process.arch, identity].join('\0');
  return `${crypto.createHash('sha256').update(where).digest('hex').slice(0, 40)}.v8`;
}

function occurrences(text, part) {
  let count = 0;
  for (let at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length)) count++;
  return count;
}

/** The `require` node gives a module (lib/internal/modules/helpers.js `makeRequireFunction`). */
function requireOf(mod) {
  const require = (id) => mod.require(id);
  const resolve = (request, options) => Module._resolveFilename(request, mod, false, options);
  resolve.paths = (request) => Module._resolveLookupPaths(request, mod);
  require.resolve = resolve;
  require.main = process.mainModule;
  require.extensions = Module._extensions;
  require.cache = Module._cache;
  return require;
}

/** Scripts compiled without an accepted entry, written when the process exits. */
const pending = [];

function writeEntries(folder) {
  for (const { script, file } of pending.splice(0)) {
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      fs.writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
      fs.renameSync(temporary, file);
    } catch {
      fs.rmSync(temporary, { force: true });
    }
  }
  prune(folder);
}

/** Removes the entries, and temporary files, written more than UNUSED_MS ago. */
function prune(folder) {
  const now = Date.now();
  for (const name of fs.readdirSync(folder)) {
    try {
      const file = path.join(folder, name);
      if (now - fs.statSync(file).mtimeMs > UNUSED_MS) fs.rmSync(file, { force: true });
    } catch {
      // another process removed it
    }
  }
}

/** Compiles `content` with the entry at `file` when there is one; remembers the script to write when not. */
function compileCached(content, filename, file) {
  let cachedData;
  try {
    cachedData = fs.readFileSync(file);
  } catch {
    // no entry yet
  }
  const script = new vm.Script(Module.wrap(content), { filename, cachedData });
  stats.modules.push(filename);
  if (cachedData && !script.cachedDataRejected) stats.hits++;
  else {
    stats[cachedData ? 'rejected' : 'misses']++;
    pending.push({ script, file });
  }
  return script.runInThisContext({ displayErrors: true });
}

function install() {
  const folder = privateFolder('inventory-conformance-code-cache');
  if (!folder) return;
  stats.folder = folder;
  const compile = Module.prototype._compile;
  Module.prototype._compile = function compileWithCache(content, filename, ...rest) {
    let wrapper;
    try {
      const name = entryName(filename, content);
      if (name !== undefined) wrapper = compileCached(content, filename, path.join(folder, name));
    } catch {
      wrapper = undefined;
    }
    if (wrapper === undefined) return compile.call(this, content, filename, ...rest);
    return wrapper.call(this.exports, this.exports, requireOf(this), this, filename, path.dirname(filename));
  };
  process.once('exit', () => {
    try {
      if (pending.length > 0) writeEntries(folder);
    } catch {
      // the next process compiles anew
    }
  });
}

install();
