/**
 * Where the harness's own files are: the one home of the repository (or installed package) root
 * and of the files several layers read. Nothing here depends on the working directory: a user may
 * run the harness from anywhere.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The nearest folder at or above `from` that holds the harness's package.json. */
function packageRootOf(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const manifest = path.join(dir, 'package.json');
    if (fs.existsSync(manifest)) {
      try {
        if ((JSON.parse(fs.readFileSync(manifest, 'utf8')) as { name?: string }).name === 'inventory-conformance') return dir;
      } catch {
        // not ours: keep looking upward
      }
    }
    if (path.dirname(dir) === dir) throw new Error(`the harness's package.json was not found above ${from}`);
  }
}

/**
 * The root of the harness's modules: the repository, the installed package's compiled tree
 * (`dist/`, which has its own package.json), or the tree a clone runs from (`cli/tree.mjs`).
 */
export const REPO_ROOT = packageRootOf(path.dirname(fileURLToPath(import.meta.url)));

/**
 * The checkout `root` stands for: the clone a transpiled tree was built from (the tree's
 * `clone-root` file, cli/tree.mjs), else `root` itself. Its git commit goes into the certificate,
 * and a run's reports folder may never be it.
 */
export function projectRootOf(root: string): string {
  try {
    return fs.readFileSync(path.join(root, 'clone-root'), 'utf8').trim() || root;
  } catch {
    return root;
  }
}

/** The repository the harness runs from: `projectRootOf(REPO_ROOT)`. */
export const PROJECT_ROOT = projectRootOf(REPO_ROOT);

/**
 * The extension of the harness's own modules: `.ts` in a clone (run through tsx or Playwright's
 * loader), `.js` in the installed package (compiled at pack time).
 */
export const CODE_EXT = path.extname(fileURLToPath(import.meta.url)) === '.ts' ? '.ts' : '.js';

/** The file of a harness module, `rel` given without its extension (e.g. `reference-server/main`). */
export function codeFile(rel: string): string {
  return path.join(REPO_ROOT, `${rel}${CODE_EXT}`);
}

/** Whether this Node runs TypeScript itself (type stripping: on by default since 22.18 and 23.6). */
export const NODE_STRIPS_TYPES = Boolean((process.features as { typescript?: unknown }).typescript);

/**
 * Node's arguments that run a harness module as a program: the sources need tsx's loader where
 * Node does not strip types itself; the compiled package needs nothing (and has no tsx).
 */
export function nodeArgsFor(file: string): string[] {
  return CODE_EXT === '.ts' && !NODE_STRIPS_TYPES ? ['--import', import.meta.resolve('tsx'), file] : [file];
}

/** The requirements ledger. */
export const LEDGER_FILE = path.join(REPO_ROOT, 'suites', 'requirements.yaml');

/** The Inventory Service specification the ledger quotes (its digest is recorded in the ledger). */
export const SPEC_FILE = path.join(REPO_ROOT, 'spec', 'inventory-service.md');

/** The HTTP rules the ledger quotes (source `rules`). */
export const RULES_FILE = path.join(REPO_ROOT, 'spec', 'http-rules.md');

/** The conformance run's Playwright config (its projects are certify's phases). */
export const ROOT_CONFIG = codeFile('playwright.config');

/** The reports folder when `REPORTS_DIR` is not set, relative to the working directory. */
export const DEFAULT_REPORTS_DIR = 'reports';

/**
 * The Playwright output folder of one phase inside the reports folder. Each phase has its own:
 * Playwright empties its output folder when a run starts, and phases run at the same time, so a
 * shared folder would be emptied under a phase that is writing into it.
 */
export function phaseOutputDir(reportsDir: string, phase: string): string {
  return path.join(reportsDir, 'test-results', phase);
}
