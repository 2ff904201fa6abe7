import { CODE_EXT, NODE_STRIPS_TYPES } from './paths.ts';

/**
 * The environment of a Playwright process the tool starts (a phase, a listing, the merge of the
 * reports): the caller's, without the variables through which Playwright takes settings from its
 * environment, then the tool's own.
 *
 * A user's pipeline may set those variables for its own Playwright projects, and Playwright lets
 * them win over a config: `PLAYWRIGHT_HTML_OUTPUT_DIR`, `PLAYWRIGHT_JUNIT_OUTPUT_FILE` or
 * `PLAYWRIGHT_JSON_OUTPUT_FILE` would send the run's reports over the user's own files (and leave
 * none where the verdict reads them), `PLAYWRIGHT_JSON_OUTPUT_NAME` would take the listing of the
 * suites off standard output, and `PW_TEST_REPORTER` would add the pipeline's own reporter to
 * every phase, writing wherever it writes. A Playwright worker also passes its own (`TEST_WORKER_INDEX`,
 * `TEST_PARALLEL_INDEX`) to a run started inside it. The tool's Playwright runs take settings only
 * from what the tool names: `own`, its arguments and its configs.
 */
export function playwrightEnv(
  env: Readonly<Record<string, string | undefined>>,
  own: Readonly<Record<string, string>> = {},
  codeExt: string = CODE_EXT,
  stripsTypes: boolean = NODE_STRIPS_TYPES,
): Record<string, string | undefined> {
  const kept = Object.entries(env).filter(([name]) => !PLAYWRIGHT_SETTING.test(name));
  return { ...Object.fromEntries(kept), ...(codeExt === '.js' || stripsTypes ? COMPILED : {}), ...own };
}

/**
 * The installed package runs a tree compiled at pack time, and a Node that strips types (22.18,
 * 23.6 and later) loads a clone's sources itself: Playwright then needs no loader of its own, and
 * without one its processes start on less CPU (on Node 20 the loader runs in a thread of its own
 * that every import waits on). Measured on a default run of the compiled tree: 27.5 CPU-s with the
 * loader, 22.5 to 23.9 without; of a clone's sources on Node 24: 50.2 with, 32.4 without.
 */
const COMPILED: Readonly<Record<string, string>> = { PW_DISABLE_TS_ESM: '1' };

/** Names Playwright reads settings from (reporters, output paths, loader, terminal, worker index). */
const PLAYWRIGHT_SETTING = /^(PLAYWRIGHT_|PW_|PWTEST_|TEST_WORKER_INDEX$|TEST_PARALLEL_INDEX$)/;
