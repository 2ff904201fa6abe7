/**
 * The one settings module of the conformance run: every variable certify, the suites, the load
 * checks and the Playwright configs read is defined once in a group file here, read once by
 * `readSettings`, and documented by `renderHelp` (certify's `--help`) and `renderReadmeTable`
 * (the README tables, kept in sync by tests/certify/settings.test.ts).
 *
 * To add a group: create `settings/<group>.ts` exporting a `defineGroup(...)`, then import it
 * below and add it to `GROUPS` (one line each).
 */
import { describeRule, parseValue, type Setting, type SettingGroup, type SettingProblem, type ValueOf } from './define.ts';
import { CLI_SETTINGS } from './cli.ts';
import { GENERATED_SETTINGS } from './generated.ts';
import { LOAD_SETTINGS } from './load.ts';
import { RUN_SETTINGS } from './run.ts';

export type { Setting, SettingGroup, SettingProblem } from './define.ts';
export { PLANS, PROFILES } from './run.ts';

/** Every group, in the order of `--help` and the README. */
export const GROUPS = [RUN_SETTINGS, LOAD_SETTINGS, CLI_SETTINGS, GENERATED_SETTINGS] as const;

type AnySetting = (typeof GROUPS)[number]['settings'][number];

/** Every setting of the run. */
export const SETTINGS: readonly Setting[] = GROUPS.flatMap((g) => g.settings as readonly Setting[]);

/** The names of every setting. */
export type SettingName = AnySetting['name'];

/** The typed values of every setting: a setting with a default is always set. */
export type SettingValues = {
  [S in AnySetting as S['name']]: S['default'] extends undefined ? ValueOf<S['kind']> | undefined : ValueOf<S['kind']>;
};

export interface ReadSettings {
  values: SettingValues;
  /** One per setting whose value breaks its rule (that setting then holds its default). */
  problems: SettingProblem[];
}

type Env = Record<string, string | undefined>;

/** The definition of one setting by name (throws for an unknown name: a programming error). */
export function settingOf(name: SettingName): Setting {
  const s = SETTINGS.find((x) => x.name === name);
  if (!s) throw new Error(`unknown setting ${name}`);
  return s;
}

/**
 * Reads every setting from `env` by its one rule. Empty and blank values count as unset. Never
 * throws; a value that breaks its rule is a problem and the setting falls back to its default.
 */
export function readSettings(env: Env = process.env): ReadSettings {
  const values: Record<string, unknown> = {};
  const problems: SettingProblem[] = [];
  for (const s of SETTINGS) {
    const raw = env[s.name];
    values[s.name] = s.default;
    if (raw === undefined || raw.trim() === '') continue;
    const parsed = parseValue(s, raw);
    if (parsed.ok) values[s.name] = parsed.value;
    else problems.push({ name: s.name, message: parsed.message });
  }
  return { values: values as SettingValues, problems };
}

/** The problems of some settings only (by name), as messages. */
export function problemsOf(problems: readonly SettingProblem[], names: readonly string[]): string[] {
  return problems.filter((p) => names.includes(p.name)).map((p) => p.message);
}

function defaultText(s: Setting): string {
  return s.default === undefined ? '' : String(s.default);
}

function kindText(s: Setting): string {
  if (s.kind === 'enum') return (s.values ?? []).join(' | ');
  if (s.kind === 'secret') return 'key';
  if (s.kind === 'integer' || s.kind === 'number') return describeRule(s).replace(/^an? /, '');
  return s.kind;
}

/** The environment section of a `--help`, one block per group; `flags`: also name each setting's CLI flag. */
export function renderHelp(groups: readonly SettingGroup[] = GROUPS, options: { flags?: boolean } = {}): string {
  const all = groups.flatMap((g) => g.settings as readonly Setting[]);
  const width = Math.max(...all.map((s) => s.name.length)) + 2;
  const lines: string[] = [];
  for (const g of groups) {
    lines.push(`${g.title}:`);
    for (const s of g.settings as readonly Setting[]) {
      const def = defaultText(s);
      const facts = [kindText(s), def ? `default ${def}` : '', options.flags && s.flag ? s.flag : ''].filter(Boolean).join('; ');
      lines.push(`  ${s.name.padEnd(width)}${s.help} (${facts})`);
    }
    lines.push('');
  }
  return lines.join('\n');
}

/** A Markdown table of some groups' settings, for the READMEs (between `<!-- settings:<group> -->` markers). */
export function renderReadmeTable(groups: readonly SettingGroup[] = GROUPS): string {
  const rows = ['| variable | value | default | meaning |', '|---|---|---|---|'];
  for (const g of groups) {
    for (const s of g.settings as readonly Setting[]) {
      const def = defaultText(s);
      rows.push(`| \`${s.name}\` | ${kindText(s).replace(/\|/g, '\\|')} | ${def ? `\`${def}\`` : ''} | ${s.help.replace(/\|/g, '\\|')} |`);
    }
  }
  return `${rows.join('\n')}\n`;
}

/**
 * Replaces the text between `<!-- settings:<names> -->` and `<!-- /settings -->` in a README with
 * the generated table of those groups (comma-separated names, or `all`). Used to write the READMEs and by
 * the drift test to check them.
 */
export function fillReadme(text: string): string {
  return text.replace(
    /(<!-- settings:([a-z,-]+) -->\n)[\s\S]*?(<!-- \/settings -->)/g,
    (_m, open: string, names: string, close: string) => {
      const wanted = names.split(',');
      const groups = GROUPS.filter((g) => wanted.includes('all') || wanted.includes(g.name));
      return `${open}${renderReadmeTable(groups)}${close}`;
    },
  );
}
