/**
 * Command-line arguments of `inventory-conformance`: a subcommand, its positionals, and flags.
 * Setting flags are derived from the settings' definitions (settings/): each sets its variable,
 * and a flag wins over the variable. Keys have no flag (a command line is visible in `ps`).
 * Tokenised by Node's own `util.parseArgs`; this module gives the tokens their meaning.
 */
import { parseArgs as parseArgv, type ParseArgsConfig } from 'node:util';
import type { Setting } from '../settings/index.ts';

export const COMMANDS = ['certify', 'serve', 'replay', 'verify', 'restore', 'help'] as const;
export type Command = (typeof COMMANDS)[number];

/** Short forms users expect, beside the derived flag. */
export const ALIASES: Record<string, string> = { '--plan': 'API_PLAN' };

/** Flags of the CLI itself (not settings): name → takes a value; its help, or its help for each command. */
export const OWN_FLAGS: Record<string, { value: boolean; help: string | Partial<Record<Command, string>>; commands: readonly Command[] }> =
  {
    '--json': {
      value: false,
      help: {
        certify: 'print only the verdict document as JSON on stdout; progress goes to stderr',
        replay: 'print only the verdict document as JSON on stdout; progress goes to stderr',
        verify: "print only the verification's outcome as JSON on stdout",
        restore: "print only the repair's outcome as JSON on stdout; progress goes to stderr",
      },
      commands: ['certify', 'replay', 'verify', 'restore'],
    },
    '--dry-run': {
      value: false,
      help: {
        certify: 'print every setting with its value and where it came from (keys: given or not), then stop; nothing is sent',
        restore: 'read the list and say what would be put back, left alone or closed, and why; no change is sent',
      },
      commands: ['certify', 'restore'],
    },
    '--forget': {
      value: true,
      help: 'close the open entries of these pets (ids, comma-separated), dealt with by hand; nothing is sent',
      commands: ['restore'],
    },
    '--list-cases': {
      value: false,
      help: 'print the coverage cases of the generated phase per operation and location (and which the budget leaves out), then stop; nothing is sent',
      commands: ['certify'],
    },
    '--write-baseline': {
      value: true,
      help: "write the run's failed requirements as a baseline file (then pass it with --baseline)",
      commands: ['certify'],
    },
    '--public-key': {
      value: true,
      help: 'PEM public key that must have signed the certificate (an unsigned one then fails)',
      commands: ['verify'],
    },
    '--accept-expired': {
      value: false,
      help: 'report a certificate past its validUntil without failing on it',
      commands: ['verify'],
    },
    '--help': { value: false, help: 'this help', commands: ['certify', 'serve', 'replay', 'verify', 'restore', 'help'] },
  };

export interface ParsedArgs {
  command: Command;
  positionals: string[];
  /** Variables set by setting flags. */
  env: Record<string, string>;
  /** The CLI's own flags (`--json` → 'true'). */
  own: Record<string, string>;
  errors: string[];
}

/** What one long option of the command line means. */
type Meaning =
  | { kind: 'setting'; setting: Setting; negated?: boolean }
  | { kind: 'own'; flag: string; value: boolean }
  | { kind: 'secret'; variable: string };

/** The option table of `util.parseArgs` and what each option means: setting flags, `--no-<boolean>`, aliases, the CLI's own flags and the refused key flags. */
function optionTable(settings: readonly Setting[]): { options: ParseArgsConfig['options'] & object; meaning: Map<string, Meaning> } {
  const meaning = new Map<string, Meaning>();
  for (const s of settings) {
    if (s.secret) meaning.set(s.name.toLowerCase().replace(/_/g, '-'), { kind: 'secret', variable: s.name });
    if (!s.flag) continue;
    meaning.set(s.flag.slice(2), { kind: 'setting', setting: s });
    if (s.kind === 'boolean') meaning.set(`no-${s.flag.slice(2)}`, { kind: 'setting', setting: s, negated: true });
  }
  for (const [alias, name] of Object.entries(ALIASES)) {
    const setting = settings.find((s) => s.name === name);
    if (setting) meaning.set(alias.slice(2), { kind: 'setting', setting });
  }
  for (const [flag, f] of Object.entries(OWN_FLAGS)) meaning.set(flag.slice(2), { kind: 'own', flag, value: f.value });
  meaning.set('h', { kind: 'own', flag: '--help', value: false });
  const options: Record<string, { type: 'string' | 'boolean' }> = {};
  for (const [name, m] of meaning) {
    const takesValue = m.kind === 'secret' || (m.kind === 'own' ? m.value : !m.negated && m.setting.kind !== 'boolean');
    options[name] = { type: takesValue ? 'string' : 'boolean' };
  }
  return { options, meaning };
}

/** Parses `argv` (without node and the script) with `util.parseArgs`. `serve` keeps its arguments for the server. */
export function parseArgs(argv: readonly string[], settings: readonly Setting[]): ParsedArgs {
  const out: ParsedArgs = { command: 'help', positionals: [], env: {}, own: {}, errors: [] };
  const [first, ...rest] = argv;
  if (first === undefined || first === '--help' || first === '-h') {
    out.own['--help'] = 'true';
    return out;
  }
  if (first === '--version' || first === '-V') {
    out.own['--version'] = 'true';
    return out;
  }
  if (!(COMMANDS as readonly string[]).includes(first)) {
    out.errors.push(`unknown command "${first}" (commands: ${[...COMMANDS.filter((c) => c !== 'help'), 'diff', 'submit'].join(', ')})`);
    return out;
  }
  out.command = first as Command;
  if (out.command === 'serve') {
    if (rest.includes('--help') || rest.includes('-h')) out.own['--help'] = 'true';
    out.positionals = [...rest];
    return out;
  }
  const { options, meaning } = optionTable(settings);
  const { tokens } = parseArgv({ args: [...rest], options, strict: false, allowPositionals: true, tokens: true });
  for (const token of tokens) {
    if (token.kind === 'positional') out.positionals.push(token.value);
    if (token.kind !== 'option') continue;
    const m = meaning.get(token.name);
    const error = m ? optionError(m, token, out.command) : `unknown option ${token.rawName}`;
    if (error) out.errors.push(error);
    else if (m) apply(m, token, out);
  }
  return out;
}

type OptionToken = { name: string; rawName: string; value?: string | undefined; inlineValue?: boolean | undefined };

/** Why an option cannot be used here (never echoing a key), or undefined. */
function optionError(m: Meaning, token: OptionToken, command: Command): string | undefined {
  if (m.kind === 'secret')
    return `${token.rawName}: keys are read only from the environment (${m.variable}), never from a flag: a command line is visible to every user of the machine`;
  if (m.kind === 'own' && !OWN_FLAGS[m.flag]!.commands.includes(command)) return `${token.rawName} does not apply to ${command}`;
  const takesValue = m.kind === 'own' ? m.value : !m.negated && m.setting.kind !== 'boolean';
  const missing = token.value === undefined || token.value === '' || (!token.inlineValue && token.value.startsWith('--'));
  if (takesValue && missing)
    return m.kind === 'own' ? `${token.rawName} needs a value` : `${token.rawName} needs a value (${m.setting.name})`;
  return undefined;
}

function apply(m: Meaning, token: OptionToken, out: ParsedArgs): void {
  if (m.kind === 'own') out.own[m.flag] = m.value ? token.value! : 'true';
  else if (m.kind === 'setting') out.env[m.setting.name] = m.negated ? 'false' : (token.value ?? 'true');
}

/**
 * The run's variables: defaults < config file < environment < flags. A variable that is set but
 * empty counts as unset (an unset CI secret arrives as an empty variable).
 */
export function mergeEnv(
  processEnv: Record<string, string | undefined>,
  configEnv: Record<string, string>,
  flagEnv: Record<string, string>,
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...processEnv };
  for (const [k, v] of Object.entries(configEnv)) if (env[k] === undefined || env[k]!.trim() === '') env[k] = v;
  for (const [k, v] of Object.entries(flagEnv)) env[k] = v;
  return env;
}
