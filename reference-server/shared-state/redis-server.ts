/**
 * A throwaway `redis-server` for tests, the bench and the fault matrix: on 127.0.0.1, a free
 * port, no persistence (`--save '' --appendonly no`), its own temporary directory. `stop()` ends
 * it and removes the directory; `restart()` starts it again, empty, on the same port (after
 * `stop()` too: the Redis-outage test).
 *
 * When `redis-server` cannot be started this throws, naming the install command: a check that
 * needs Redis fails, it never skips.
 *
 * A port free a moment ago may be taken by another redis-server started at the same time (the
 * fault matrix and the Redis tests start several): the server that answers must be this one (its
 * `INFO` `process_id`), else the start is tried again on another free port. Two deployments never
 * share a Redis by accident, nor does one lose its Redis when another stops.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const INSTALL_HINT = 'install it with: apt-get install redis-server (Debian/Ubuntu; .ci/run does this when it is missing)';

export interface RedisServer {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Process id of the running server (undefined while stopped). */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 3 s); the port stays free for `restart()`. */
  stop(): Promise<void>;
  /** Starts a fresh, empty server on the same port. */
  restart(): Promise<void>;
}

/** A port that was free a moment ago (the OS picks it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/** The process id of the redis-server answering on `port` (undefined: none answers yet). */
export function answeringPid(port: number): Promise<number | undefined> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let reply = '';
    const done = (pid: number | undefined) => {
      socket.destroy();
      resolve(pid);
    };
    socket.once('connect', () => {
      socket.write('INFO server\r\n');
    });
    socket.on('data', (data) => {
      reply += data.toString();
      if (!reply.startsWith('$')) return done(undefined); // an error reply (still loading) or not Redis
      const pid = /\bprocess_id:(\d+)/.exec(reply);
      if (pid) done(Number(pid[1]));
      else if (reply.length > 65_536) done(undefined);
    });
    socket.once('error', () => resolve(undefined));
  });
}

/** A redis-server just spawned: the process, a promise that rejects when it fails to start, and the start of its log. */
interface Spawned {
  proc: ChildProcess;
  /** Rejects (never resolves) when the process cannot be spawned or exits. */
  failed: Promise<never>;
  /** The first few kilobytes of its output. */
  log: () => string;
}

/** Spawns `binary` on 127.0.0.1:`port` without persistence, its files in `dir`. */
function spawnRedis(binary: string, port: number, dir: string): Spawned {
  const proc = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  // Redis logs to stdout (a bind failure too); the first few kilobytes explain a failed start.
  let log = '';
  const keep = (c: Buffer) => {
    if (log.length < 4096) log += c.toString();
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  const failed = new Promise<never>((_, reject) => {
    proc.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new Error(`redis-server could not be started (${error.code === 'ENOENT' ? 'not installed' : error.message}): ${INSTALL_HINT}`),
      ),
    );
    proc.once('exit', (code) => reject(new Error(`redis-server exited with ${code} at start-up ${log.trim()}: ${INSTALL_HINT}`)));
  });
  failed.catch(() => undefined);
  return { proc, failed, log: () => log };
}

/**
 * Waits, 10 s at most, until the spawned server itself answers on `port` (its `INFO` `process_id`).
 * Throws `PortTaken` when another server holds the port, and the start-up error when it fails.
 */
async function awaitOwnAnswer({ proc, failed, log }: Spawned, port: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const pid = await Promise.race([answeringPid(port), failed, new Promise<undefined>((r) => setTimeout(() => r(undefined), 200))]).catch(
      (error: Error) => {
        // Another server took the port between freePort() and the bind.
        if (/Address already in use/i.test(log())) throw new PortTaken(port);
        throw error;
      },
    );
    if (pid === proc.pid) {
      proc.removeAllListeners('exit');
      return;
    }
    if (pid !== undefined) {
      // Another redis-server answers on the port: this one cannot bind it (or is about to exit).
      proc.kill('SIGKILL');
      throw new PortTaken(port);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error(`redis-server did not answer on port ${port} within 10 s: ${INSTALL_HINT}`);
}

/** Starts `redis-server` (`binary`, default from PATH); rejects with the install hint when it cannot. */
export async function startRedisServer(options: { binary?: string; port?: number } = {}): Promise<RedisServer> {
  const binary = options.binary ?? 'redis-server';
  let port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  let child: ChildProcess | undefined;

  /** Starts on `port`; on a port taken meanwhile by another server, again on a fresh one (not for a given or restarted port). */
  async function start(mayMove: boolean): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch();
      } catch (error) {
        if (!(error instanceof PortTaken) || !mayMove || attempt >= 5) throw error;
        port = await freePort();
      }
    }
  }

  async function launch(): Promise<void> {
    mkdirSync(dir, { recursive: true });
    const spawned = spawnRedis(binary, port, dir);
    child = spawned.proc;
    await awaitOwnAnswer(spawned, port);
  }

  async function stop(): Promise<void> {
    const proc = child;
    child = undefined;
    if (proc === undefined || proc.exitCode !== null || proc.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), 3_000);
      proc.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      proc.kill('SIGTERM');
    });
  }

  try {
    await start(options.port === undefined);
  } catch (error) {
    // Not started: its data folder goes with it.
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    get pid() {
      return child?.pid;
    },
    async stop() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await stop();
      await launch();
    },
  };
}

/** The port was taken by another server before this one could bind it. */
class PortTaken extends Error {
  constructor(port: number) {
    super(`port ${port} was taken by another redis-server`);
  }
}
