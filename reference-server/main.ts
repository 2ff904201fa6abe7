/**
 * `npm start`: runs the reference server until SIGINT/SIGTERM.
 *
 * Every setting of `config.ts` is read from its environment variable or from the matching flag
 * (`--port 0`, `--ban-ms=5000`; flags win). Prints `inventory: <base url>`, `messages: <api url>`
 * and `key <name>: <key>` per demo key (these demo keys only open this local server).
 * `INSTANCES=N` (with `REDIS_URL`) runs N server processes behind the one address
 * (`deployment/cluster.ts`); the start-up lines are the same.
 */
import { pathToFileURL } from 'node:url';
import { startReferenceServer, type RunningReferenceServer } from './app.ts';
import { DEFAULT_KEYS_FILE, flagOf, resolveConfig, SETTINGS } from './config.ts';
import { startCluster } from './deployment/cluster.ts';
import { loadKeys } from './fixtures.ts';

/** `--ban-ms 5000` / `--ban-ms=5000` → `{ BAN_MS: '5000' }`; throws on an unknown flag. */
export function parseFlags(argv: readonly string[]): Record<string, string> {
  const byFlag = new Map(SETTINGS.map((s) => [flagOf(s.env), s.env]));
  const env: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const eq = arg.indexOf('=');
    const flag = eq >= 0 ? arg.slice(0, eq) : arg;
    const name = byFlag.get(flag);
    if (name === undefined) throw new Error(`unknown option ${flag}`);
    const value = eq >= 0 ? arg.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new Error(`${flag} needs a value`);
    env[name] = value;
  }
  return env;
}

export function usage(): string {
  const rows = SETTINGS.map((s) => `  ${flagOf(s.env).padEnd(27)} ${s.env.padEnd(25)} ${s.description} (default ${s.default})`);
  return [
    'Usage: inventory-conformance serve [flags]   (in a clone: npm start -- [flags])',
    `  ${'flag'.padEnd(27)} ${'environment'.padEnd(25)} meaning`,
    ...rows,
  ].join('\n');
}

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--help') || argv.includes('-h')) {
    console.log(usage());
    return;
  }
  let server: Pick<RunningReferenceServer, 'baseUrl' | 'apiUrl' | 'keys' | 'close'>;
  try {
    Object.assign(process.env, parseFlags(argv));
    const config = resolveConfig();
    server = config.instances > 1 ? await startDeploymentHere() : await startReferenceServer({ redisUrl: config.redisUrl });
  } catch (error) {
    console.error(`reference-server: ${(error as Error).message}`);
    console.error(usage());
    process.exit(2);
  }
  console.log(`inventory: ${server.baseUrl}`);
  console.log(`messages: ${server.apiUrl}`);
  for (const [name, key] of Object.entries(server.keys)) console.log(`key ${name}: ${key}`);
  const stop = (): void => {
    void server.close().then(() => process.exit(0));
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

/** This process becomes the cluster primary of `INSTANCES` workers. */
async function startDeploymentHere(): Promise<Pick<RunningReferenceServer, 'baseUrl' | 'apiUrl' | 'keys' | 'close'>> {
  const running = await startCluster();
  const keys = {} as Record<string, string>;
  for (const entry of loadKeys(process.env.KEYS_FILE ?? DEFAULT_KEYS_FILE)) keys[entry.name] = entry.key;
  console.log(`instances: ${running.config.instances} (pids ${running.pids().join(', ')}), shared state on Redis`);
  return {
    baseUrl: `${running.origin}/v1`,
    apiUrl: `${running.origin}/quickstart`,
    keys: keys as RunningReferenceServer['keys'],
    close: running.close,
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  void main(process.argv.slice(2));
}
