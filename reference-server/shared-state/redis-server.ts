/**
 * A throwaway `redis-server` for tests, the bench and the fault matrix: on 127.0.0.1, a free
 * port, no persistence (`--save '' --appendonly no`), its own temporary directory. `stop()` ends
 * it and removes the directory; `restart()` starts it again, empty, on the same port (after
 * `stop()` too: the Redis-outage test).
 *
 * When `redis-server` cannot be started this throws, naming the install command: a check that
 * needs Redis fails, it never skips.
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

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.write('PING\r\n');
    });
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
    socket.once('error', () => resolve(false));
  });
}

/** Starts `redis-server` (`binary`, default from PATH); rejects with the install hint when it cannot. */
export async function startRedisServer(options: { binary?: string; port?: number } = {}): Promise<RedisServer> {
  const binary = options.binary ?? 'redis-server';
  const port = options.port ?? (await freePort());
  const dir = mkdtempSync(join(tmpdir(), 'redis-test-'));
  let child: ChildProcess | undefined;

  async function launch(): Promise<void> {
    mkdirSync(dir, { recursive: true });
    const proc = spawn(binary, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--protected-mode', 'yes'], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    child = proc;
    let stderr = '';
    proc.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    const failed = new Promise<never>((_, reject) => {
      proc.once('error', (error: NodeJS.ErrnoException) =>
        reject(new Error(`redis-server could not be started (${error.code === 'ENOENT' ? 'not installed' : error.message}): ${INSTALL_HINT}`)),
      );
      proc.once('exit', (code) => reject(new Error(`redis-server exited with ${code} at start-up ${stderr.trim()}: ${INSTALL_HINT}`)));
    });
    failed.catch(() => undefined);
    const deadline = Date.now() + 10_000;
    while (Date.now() < deadline) {
      const up = await Promise.race([accepts(port), failed, new Promise<false>((r) => setTimeout(() => r(false), 200))]);
      if (up) {
        proc.removeAllListeners('exit');
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    proc.kill('SIGKILL');
    throw new Error(`redis-server did not answer on port ${port} within 10 s: ${INSTALL_HINT}`);
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

  await launch();
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
