import { CODE_EXT, NODE_STRIPS_TYPES } from './paths.ts';

/**
 * The environment of a Playwright process the tool starts: the caller's without Playwright's own settings
 * (`PLAYWRIGHT_*`, `PW_*`, the worker index), then the tool's (docs/development.md, "Playwright processes the tool starts").
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

/** No Playwright loader where the code needs none (compiled tree, or a Node that strips types): less CPU per process (docs/development.md). */
const COMPILED: Readonly<Record<string, string>> = { PW_DISABLE_TS_ESM: '1' };

/** Names Playwright reads settings from (reporters, output paths, loader, terminal, worker index). */
const PLAYWRIGHT_SETTING = /^(PLAYWRIGHT_|PW_|PWTEST_|TEST_WORKER_INDEX$|TEST_PARALLEL_INDEX$)/;
