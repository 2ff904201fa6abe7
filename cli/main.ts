/**
 * `inventory-conformance`: the command line of the harness (bin: cli/bin.mjs).
 *   certify   certify a deployment (or the bundled reference server) and write the certificate
 *   serve     run the reference server
 *   replay    re-run one generated case by its token
 *   verify    recompute a certificate's digests and check its signature
 *   restore   put back what a run that died left changed (the journal, certify/restore.ts)
 *   diff      the requirement-level difference between two certificates (cli/diff.ts)
 *   submit    a submission folder anyone can check, from a strict, signed run (cli/submit.ts)
 * Exit codes: core/exit-codes.ts. Variables and flags: settings/ (a flag wins over its variable).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { baselineFromReport, parseBaseline } from '../certify/baseline.ts';
import type { GateResult } from '../certify/certificate/index.ts';
import { isHarnessProblem } from '../core/results.ts';
import { loadPrivateKey } from '../certify/certificate/sign.ts';
import { redactorFor, secretsFromEnv } from '../core/secrets.ts';
import { inputRedactor } from '../certify/env.ts';
import type { ConformanceReport } from '../certify/verdict.ts';
import { CLI_SETTINGS } from '../settings/cli.ts';
import { readSettings, SETTINGS } from '../settings/index.ts';
import { mergeEnv, parseArgs, type Command } from './args.ts';
import { configFile, crossTargetConflict, loadConfig } from './config.ts';
import { EXIT, EXIT_DESCRIPTIONS, SIGNAL_EXIT_BASE, signalExit } from '../core/exit-codes.ts';
import { BIN, help } from './help.ts';
import { writerFor } from './output.ts';
import { diffCommand } from './diff.ts';
import { verifyCommand } from './verify.ts';
import { submitCommand } from './submit.ts';
import { decideReplayTarget, targetName, tokenOrigin, type TargetRef } from './replay-origin.ts';
import { codeFile, nodeArgsFor, REPO_ROOT } from '../core/paths.ts';

export { help, REPO_ROOT };

export interface Io {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: Record<string, string | undefined>;
  cwd: string;
  signal?: AbortSignal;
  /** With `--json`: where a command that ends without a report puts why (typed, already redacted), for the error document. */
  reasons?: string[];
}

function usageError(io: Io, errors: string[], command?: Command): number {
  const redact = inputRedactor(io.env);
  io.reasons?.push(...errors.map((e) => redact(e)));
  io.stderr(
    redact(
      `${BIN}: usage error:\n${errors.map((e) => `  - ${e}\n`).join('')}Run \`${BIN} ${command && command !== 'help' ? `${command} ` : ''}--help\` for the ${command && command !== 'help' ? 'flags' : 'commands'}.\n`,
    ),
  );
  return EXIT.usage;
}

/** Assembles the run's variables from the config file, the environment and the flags. */
function runEnv(
  io: Io,
  flagEnv: Record<string, string>,
): { env: Record<string, string | undefined>; notes: string[]; configEnv: Record<string, string> } | { errors: string[] } {
  const given = flagEnv.CONFORMANCE_CONFIG ?? io.env.CONFORMANCE_CONFIG?.trim();
  const file = configFile(given || undefined, io.cwd);
  let configEnv: Record<string, string> = {};
  const notes: string[] = [];
  if (file) {
    const target = flagEnv.CONFORMANCE_TARGET ?? (io.env.CONFORMANCE_TARGET?.trim() || undefined);
    const loaded = loadConfig(file, io.env, target);
    if (!loaded.ok) return { errors: loaded.errors };
    configEnv = loaded.env;
    const outside = { ...io.env, ...flagEnv };
    const origin = flagEnv.BASE_URL !== undefined ? '--base-url' : 'the environment variable BASE_URL';
    const conflict = crossTargetConflict(configEnv, outside, { origin, targetName: loaded.target });
    if (conflict) return { errors: [conflict] };
    notes.push(`config ${path.relative(io.cwd, file) || file}, target ${loaded.target}`, ...loaded.notes);
  }
  const env = mergeEnv(io.env, configEnv, flagEnv);
  // The gate's own settings; certify validates the rest with its own messages.
  const problems = readSettings(env)
    .problems.filter((p) => CLI_SETTINGS.settings.some((s) => s.name === p.name))
    .map((p) => p.message);
  if (problems.length) return { errors: problems };
  // The gate's own files must be readable before an hour-long run, not after it.
  const errors: string[] = [];
  const baseline = env.CONFORMANCE_BASELINE?.trim();
  if (baseline) {
    try {
      parseBaseline(fs.readFileSync(path.resolve(io.cwd, baseline), 'utf8'));
      env.CONFORMANCE_BASELINE = path.resolve(io.cwd, baseline);
    } catch (error) {
      errors.push(
        `CONFORMANCE_BASELINE (${baseline}): ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`,
      );
    }
  }
  const keyFile = env.CONFORMANCE_SIGNING_KEY_FILE?.trim();
  if (keyFile) {
    try {
      loadPrivateKey(fs.readFileSync(path.resolve(io.cwd, keyFile), 'utf8'), 'CONFORMANCE_SIGNING_KEY_FILE');
      env.CONFORMANCE_SIGNING_KEY_FILE = path.resolve(io.cwd, keyFile);
    } catch (error) {
      errors.push(
        (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'CONFORMANCE_SIGNING_KEY_FILE: no such file' : (error as Error).message,
      );
    }
  }
  if (errors.length) return { errors };
  return { env, notes, configEnv };
}

/**
 * `--dry-run`: every setting's value and where it came from (flag, environment, config file,
 * default). Keys are shown only as given or not given.
 */
export function describeSettings(
  env: Record<string, string | undefined>,
  flagEnv: Record<string, string>,
  processEnv: Record<string, string | undefined>,
  configEnv: Record<string, string>,
): string {
  const set = (v: string | undefined) => v !== undefined && v.trim() !== '';
  const width = Math.max(...SETTINGS.map((s) => s.name.length)) + 2;
  const lines = SETTINGS.map((s) => {
    const origin =
      s.name in flagEnv
        ? 'flag'
        : set(processEnv[s.name])
          ? 'environment'
          : s.name in configEnv
            ? 'config file'
            : s.default !== undefined
              ? 'default'
              : '';
    const value = s.secret
      ? set(env[s.name])
        ? 'given'
        : 'not given'
      : set(env[s.name])
        ? env[s.name]!
        : s.default !== undefined
          ? String(s.default)
          : '(unset)';
    return `  ${s.name.padEnd(width)}${value}${origin ? `  (${origin})` : ''}`;
  });
  return `Settings of this run (nothing was sent):\n${lines.join('\n')}\n`;
}

async function certify(
  io: Io,
  args: ReturnType<typeof parseArgs>,
  extraEnv: Record<string, string> = {},
  onlyPhases?: string[],
  replayTarget?: string,
): Promise<number> {
  const replaying = extraEnv.CONFORMANCE_REPLAY !== undefined;
  const json = args.own['--json'] === 'true';
  const say = json ? io.stderr : io.stdout;
  const assembled = runEnv(io, args.env);
  if ('errors' in assembled) return usageError(io, assembled.errors, args.command);
  const env = { ...assembled.env, ...extraEnv };
  const redact = redactorFor(secretsFromEnv(env));
  for (const n of assembled.notes) say(redact(`${BIN}: ${n}\n`));
  if (args.own['--dry-run'] === 'true') {
    io.stdout(inputRedactor({ ...io.env, ...env })(describeSettings(env, args.env, io.env, assembled.configEnv)));
    const problems = readSettings(env).problems.map((p) => p.message);
    return problems.length ? usageError(io, problems, 'certify') : EXIT.pass;
  }
  if (args.own['--list-cases'] === 'true') {
    const { listCoverageCases } = await import('../suites/generated/list-cases.ts');
    io.stdout(listCoverageCases(env));
    return EXIT.pass;
  }
  const reportsDir = path.resolve(io.cwd, readSettings(env).values.REPORTS_DIR);
  // The phases run in the harness's folder (an installed package's, inside node_modules): they get the folder absolute.
  env.REPORTS_DIR = reportsDir;

  // Loaded on demand: --help and verify need none of the run's machinery.
  const { runCertify } = await import('../certify/run.ts');
  // certify's certificate step is the one writer of the certificate; the CLI gates on what it wrote.
  const outcome = await runCertify({
    env,
    write: say,
    ...(io.signal ? { signal: io.signal } : {}),
    ...(onlyPhases ? { onlyPhases } : {}),
  });
  const { report, certificate: written } = outcome;
  // Usage, unreachable, harness trouble or stopped by a signal before anything was judged: the run said why.
  if (!report) {
    io.reasons?.push(...outcome.reasons);
    return outcome.exitCode;
  }
  // Stopped by a signal after the preflight: the reports of what ran are written; the exit code is 128 + the signal's number.
  if (outcome.exitCode > SIGNAL_EXIT_BASE) {
    io.reasons?.push(...report.gate.reasons);
    return outcome.exitCode;
  }
  // A key in a file written after the verdict (the run said which, without the key): the verdict is void.
  if (outcome.keysInLateFiles?.length) {
    io.reasons?.push(`a key reached a file written after the verdict (exit ${EXIT.harness})`);
    return EXIT.harness;
  }
  if (replaying) return replayOutcome(report, say, replayTarget ?? 'the target');
  if (!written) {
    // The step said why (an unreadable key file, a key in the certificate).
    const reason = `no certificate was written (exit ${EXIT.harness})`;
    say(`${BIN}: ${reason}\n`);
    io.reasons?.push(reason);
    return EXIT.harness;
  }
  // One gate, judged with the verdict: conformance.json, the certificate, junit.xml, --json and the exit code state it.
  const gate = report.gate;
  const b = report.baseline;
  if (b) {
    say(
      `\nbaseline ${b.file}: ${b.known.length} known failure(s)${b.known.length ? ` (${b.known.map((k) => k.id).join(', ')})` : ''}, ${b.newFailures.length} new${b.newFailures.length ? ` (${b.newFailures.map((k) => k.id).join(', ')})` : ''}\n`,
    );
    for (const f of b.fixed) say(`  fixed: ${f.id} now ${f.status}: remove it from the baseline\n`);
    for (const u of b.unjudged) say(`  not judged: ${u.id} (${u.why.split('\n')[0]})\n`);
  }
  const comparison = written.certificate.results.comparison;
  if (gate.comparedWith && comparison) {
    say(
      `\ncompared with ${gate.comparedWith.file} (${gate.comparedWith.generatedAt}): ${comparison.regressed.length} regressed${comparison.regressed.length ? ` (${comparison.regressed.map((c) => `${c.id} ${c.before} → ${c.now}`).join(', ')})` : ''}, ${comparison.fixed.length} fixed, ${comparison.added.length} new, ${comparison.removed.length} removed\n`,
    );
  }
  if (args.own['--write-baseline']) {
    const file = path.resolve(io.cwd, args.own['--write-baseline']);
    fs.writeFileSync(file, baselineFromReport(report));
    say(`baseline written: ${file} (${report.requirements.filter((r) => r.status === 'fail').length} known failure(s))\n`);
  }
  say(`gate: ${gate.result.toUpperCase()}${gate.reasons.length ? ` — ${gate.reasons.join('; ')}` : ''} (exit ${gate.exitCode})\n`);
  if (json) io.stdout(`${JSON.stringify(report, null, 2)}\n`);
  return gate.exitCode;
}

/**
 * A replay judges the one case it ran, not the spec: its report lists only the requirements that
 * case evidences. 0: the case passes now; 1: it still fails; 5: it did not run (harness trouble).
 */
function replayOutcome(report: ConformanceReport, say: (text: string) => void, target: string): number {
  const ran = report.requirements.flatMap((r) =>
    r.evidence.filter((e) => e.project === 'generated' && e.outcome !== 'skipped').map((e) => ({ id: r.id, e })),
  );
  const failed = ran.filter(({ e }) => e.outcome === 'failed' || e.outcome === 'flaky' || e.outcome === 'interrupted');
  const harness = report.problems.filter(isHarnessProblem);
  for (const { id, e } of failed)
    say(`replay: ${id} ${e.test}: still fails\n${(e.errors ?? []).map((x) => `  ${x.split('\n')[0]}\n`).join('')}`);
  if (harness.length) {
    say(`replay: the case did not run cleanly: ${harness.map((p) => p.reason.split('\n')[0]).join('; ')} (exit ${EXIT.harness})\n`);
    return EXIT.harness;
  }
  if (!ran.length) {
    say(`replay: no generated check ran the case (exit ${EXIT.harness})\n`);
    return EXIT.harness;
  }
  say(
    failed.length
      ? `replay: still fails against ${target} (exit ${EXIT.fail})\n`
      : `replay: now passes against ${target} (exit ${EXIT.pass})\n`,
  );
  return failed.length ? EXIT.fail : EXIT.pass;
}

async function replay(io: Io, args: ReturnType<typeof parseArgs>): Promise<number> {
  const [token, ...more] = args.positionals;
  if (!token || more.length)
    return usageError(
      io,
      [token ? `one token expected, got ${args.positionals.length}` : 'replay needs the token a generated check printed'],
      'replay',
    );
  const { decodeToken } = await import('../suites/generated/replay.ts');
  try {
    decodeToken(token);
  } catch (error) {
    return usageError(io, [(error as Error).message], 'replay');
  }
  const { PHASES } = await import('../certify/phase-list.ts');
  if (!PHASES.includes('generated'))
    return usageError(io, ['this suite has no generated phase (playwright.config.ts has no `generated` project)'], 'replay');
  // The target the token came from (the last run's conformance.json holds it): another one only if named.
  const assembled = runEnv(io, args.env);
  if ('errors' in assembled) return usageError(io, assembled.errors, 'replay');
  const reportsDir = path.resolve(io.cwd, readSettings(assembled.env).values.REPORTS_DIR);
  const origin = tokenOrigin(path.join(reportsDir, 'conformance.json'), token);
  const baseUrl = assembled.env.BASE_URL?.trim();
  const resolved: TargetRef = baseUrl ? { kind: 'external', baseUrl } : { kind: 'reference' };
  const named = args.env.BASE_URL !== undefined || args.env.CONFORMANCE_TARGET !== undefined || !!io.env.BASE_URL?.trim();
  const decision = decideReplayTarget(origin, resolved, named);
  if (!decision.ok) return usageError(io, [decision.error], 'replay');
  (args.own['--json'] === 'true' ? io.stderr : io.stdout)(`${decision.note}; the reports go to ${path.join(reportsDir, 'replay')}\n`);
  return certify(io, args, { CONFORMANCE_REPLAY: token }, ['generated'], targetName(decision.target));
}

function verify(io: Io, args: ReturnType<typeof parseArgs>): number {
  return verifyCommand(io, args, (errors) => usageError(io, errors, 'verify'));
}

function serve(io: Io, args: ReturnType<typeof parseArgs>): Promise<number> {
  const child = spawn(process.execPath, [...nodeArgsFor(codeFile('reference-server/main')), ...args.positionals], {
    stdio: 'inherit',
    cwd: io.cwd,
    env: io.env,
  });
  const forward = (s: NodeJS.Signals) => child.kill(s);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      resolve(code ?? (signal ? signalExit('SIGINT') : EXIT.harness));
    });
  });
}

/**
 * Runs the command line; returns the exit code. With `--json`, stdout holds a JSON document on
 * every exit code: the report (with its gate) when the run judged, else an error document
 * naming the result (`usage`, `unreachable`, `harness`), the exit code and the reasons.
 */
export async function main(argv: readonly string[], io: Io): Promise<number> {
  // The commands with their own parser: `help <command>` is their --help.
  if (argv[0] === 'help' && (argv[1] === 'diff' || argv[1] === 'submit')) return main([argv[1], '--help'], io);
  if (argv[0] === 'diff') return diffCommand(argv.slice(1), io);
  if (argv[0] === 'submit') return submitCommand(argv.slice(1), io);
  if (!argv.includes('--json')) return dispatch(argv, io);
  let wrote = false;
  const reasons: string[] = [];
  const capture: Io = {
    ...io,
    reasons,
    stdout: (t) => {
      wrote = true;
      io.stdout(t);
    },
  };
  const code = await dispatch(argv, capture);
  if (!wrote) io.stdout(`${JSON.stringify(errorDocument(code, reasons, redactorFor(secretsFromEnv(io.env))), null, 2)}\n`);
  return code;
}

const RESULT_OF: Record<number, string> = {
  [EXIT.usage]: 'usage',
  [EXIT.unreachable]: 'unreachable',
  [EXIT.harness]: 'harness',
  [EXIT.fail]: 'fail',
  [EXIT.notCertified]: 'not-certified',
  [EXIT.pass]: 'pass',
};

/**
 * The `--json` document of a run that wrote no report: the result, the exit code and the reasons
 * the command gave (none given: what the exit code means), with no key.
 */
export function errorDocument(
  code: number,
  reasons: readonly string[],
  redact: (s: string) => string,
): { format: string; verdict: string; gate: GateResult } {
  const given = reasons.map((r) => redact(r).trimEnd()).filter(Boolean);
  const meaning = EXIT_DESCRIPTIONS.find((e) => e.code === code)?.meaning;
  const result = RESULT_OF[code] ?? (code > SIGNAL_EXIT_BASE ? 'interrupted' : 'harness');
  return {
    format: 'inventory-conformance-error/1',
    verdict: result,
    gate: {
      result: result as GateResult['result'],
      exitCode: code,
      strict: false,
      reasons: given.length ? given : [meaning ?? `exit ${code}`],
      knownFailures: [],
      fixedFailures: [],
      newFailures: [],
    },
  };
}

async function dispatch(argv: readonly string[], io: Io): Promise<number> {
  const args = parseArgs(argv, SETTINGS);
  if (args.errors.length) return usageError(io, args.errors, args.command);
  if (args.own['--version']) {
    const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };
    io.stdout(`${BIN} ${pkg.version}\n`);
    return EXIT.pass;
  }
  if (args.own['--help'] || args.command === 'help') {
    if (args.command === 'serve') return serve(io, args);
    io.stdout(help(args.command === 'help' ? (args.positionals[0] as Command | undefined) : args.command));
    return EXIT.pass;
  }
  switch (args.command) {
    case 'certify':
      if (args.positionals.length) return usageError(io, [`unexpected argument(s): ${args.positionals.join(' ')}`], 'certify');
      return certify(io, args);
    case 'replay':
      return replay(io, args);
    case 'verify':
      return verify(io, args);
    case 'serve':
      return serve(io, args);
    case 'restore':
      return restore(io, args);
  }
}

/** `restore`: the journal's open entries put back (certify/restore.ts); the target and folder from flags, variables or the config file, keys from the environment. */
async function restore(io: Io, args: ReturnType<typeof parseArgs>): Promise<number> {
  if (args.positionals.length) return usageError(io, [`unexpected argument(s): ${args.positionals.join(' ')}`], 'restore');
  const assembled = runEnv(io, args.env);
  if ('errors' in assembled) return usageError(io, assembled.errors, 'restore');
  const forget = args.own['--forget']?.split(',').map((p) => p.trim());
  if (forget && (args.own['--dry-run'] || forget.some((p) => !/^[^\s/?#\\]{1,200}$/.test(p))))
    return usageError(
      io,
      [
        args.own['--dry-run']
          ? '--forget and --dry-run do not go together: --forget closes entries, --dry-run changes nothing'
          : '--forget needs pet ids, comma-separated, as the journal names them (e.g. --forget 7,9)',
      ],
      'restore',
    );
  const { runRestore } = await import('../certify/restore.ts');
  const json = !!args.own['--json'];
  let outcome: unknown;
  const code = await runRestore({
    env: assembled.env,
    write: json ? io.stderr : io.stdout,
    ...(args.own['--dry-run'] ? { dryRun: true } : {}),
    ...(forget ? { forget } : {}),
    ...(io.signal ? { signal: io.signal } : {}),
    onOutcome: (o) => (outcome = o),
  });
  if (json && outcome)
    io.stdout(`${JSON.stringify({ format: 'inventory-conformance-restore/1', exitCode: code, ...(outcome as object) }, null, 2)}\n`);
  return code;
}

/** The process entry (cli/bin.mjs): real streams, signals, exit code. */
export async function run(argv: readonly string[] = process.argv.slice(2)): Promise<void> {
  const controller = new AbortController();
  let firstSignalAt = 0;
  const command = argv[0];
  if (command === 'certify' || command === 'replay' || command === 'restore') {
    const onSignal = (signal: NodeJS.Signals) => {
      if (controller.signal.aborted) {
        if (Date.now() - firstSignalAt > 2000) process.exit(signalExit('SIGINT'));
        return;
      }
      firstSignalAt = Date.now();
      process.stderr.write(`\n${BIN}: ${signal}: stopping the running phase, then writing the reports of what ran …\n`);
      controller.abort(signal);
    };
    process.on('SIGINT', onSignal);
    process.on('SIGTERM', onSignal);
  }
  const io: Io = {
    stdout: writerFor(process.stdout),
    stderr: writerFor(process.stderr),
    env: process.env,
    cwd: process.cwd(),
    signal: controller.signal,
  };
  try {
    process.exitCode = await main(argv, io);
  } catch (error) {
    const redact = redactorFor(secretsFromEnv(process.env));
    process.stderr.write(redact(`${BIN}: internal error: ${(error as Error)?.stack ?? String(error)}\n`));
    process.exitCode = EXIT.harness;
  }
}
