/**
 * Command-line arguments of `inventory-conformance`: a subcommand, its positionals, and flags.
 * Setting flags are derived from the settings' definitions (settings/): each sets its variable,
 * and a flag wins over the variable. Keys have no flag (a command line is visible in `ps`).
 */
import type { Setting } from '../settings/index.ts';

export const COMMANDS = ['certify', 'serve', 'replay', 'verify', 'help'] as const;
export type Command = (typeof COMMANDS)[number];

/** Short forms users expect, beside the derived flag. */
export const ALIASES: Record<string, string> = { '--plan': 'API_PLAN' };

/** Flags of the CLI itself (not settings): name → takes a value. */
export const OWN_FLAGS: Record<string, { value: boolean; help: string; commands: readonly Command[] }> = {
  '--json': { value: false, help: 'print only the verdict document (JSON) on stdout; progress goes to stderr', commands: ['certify', 'replay', 'verify'] },
  '--dry-run': { value: false, help: 'print every setting with its value and where it came from (keys: given or not), then stop; nothing is sent', commands: ['certify'] },
  '--write-baseline': { value: true, help: "write the run's failed requirements as a baseline file (then pass it with --baseline)", commands: ['certify'] },
  '--public-key': { value: true, help: 'verify: PEM public key that must have signed the certificate (an unsigned one then fails)', commands: ['verify'] },
  '--help': { value: false, help: 'this help', commands: ['certify', 'serve', 'replay', 'verify', 'help'] },
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

/** Parses `argv` (without node and the script). `serve` keeps its arguments for the server. */
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
    out.errors.push(`unknown command "${first}" (commands: ${COMMANDS.filter((c) => c !== 'help').join(', ')})`);
    return out;
  }
  out.command = first as Command;
  if (out.command === 'serve') {
    if (rest.includes('--help') || rest.includes('-h')) out.own['--help'] = 'true';
    out.positionals = [...rest];
    return out;
  }
  const byFlag = new Map<string, Setting>();
  for (const s of settings) if (s.flag) byFlag.set(s.flag, s);
  const secretFlags = new Map(settings.filter((s) => s.secret).map((s) => [`--${s.name.toLowerCase().replace(/_/g, '-')}`, s.name]));
  for (let i = 0; i < rest.length; i++) {
    const arg = rest[i]!;
    if (arg === '-h') {
      out.own['--help'] = 'true';
      continue;
    }
    if (!arg.startsWith('--')) {
      out.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    let flag = eq >= 0 ? arg.slice(0, eq) : arg;
    let inline = eq >= 0 ? arg.slice(eq + 1) : undefined;
    if (secretFlags.has(flag)) {
      // Never echo the value: it is a key.
      out.errors.push(`${flag}: keys are read only from the environment (${secretFlags.get(flag)}), never from a flag: a command line is visible to every user of the machine`);
      if (inline === undefined && rest[i + 1] !== undefined && !rest[i + 1]!.startsWith('--')) i++;
      continue;
    }
    const own = OWN_FLAGS[flag];
    if (own) {
      if (!own.commands.includes(out.command)) {
        out.errors.push(`${flag} does not apply to ${out.command}`);
        continue;
      }
      if (own.value) {
        const value = inline ?? rest[++i];
        if (value === undefined || value === '') out.errors.push(`${flag} needs a value`);
        else out.own[flag] = value;
      } else out.own[flag] = 'true';
      continue;
    }
    let negated = false;
    if (flag.startsWith('--no-') && !byFlag.has(flag) && byFlag.get(`--${flag.slice(5)}`)?.kind === 'boolean') {
      flag = `--${flag.slice(5)}`;
      negated = true;
      inline = 'false';
    }
    const name = ALIASES[flag] ?? byFlag.get(flag)?.name;
    const setting = name ? settings.find((s) => s.name === name) : undefined;
    if (!setting) {
      out.errors.push(`unknown option ${flag}`);
      continue;
    }
    if (setting.kind === 'boolean') {
      out.env[setting.name] = negated ? 'false' : (inline ?? 'true');
      continue;
    }
    const value = inline ?? rest[++i];
    if (value === undefined || value.startsWith('--')) {
      out.errors.push(`${flag} needs a value (${setting.name})`);
      if (value?.startsWith('--')) i--;
      continue;
    }
    out.env[setting.name] = value;
  }
  return out;
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
