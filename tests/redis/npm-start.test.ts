/**
 * `REDIS_URL=… INSTANCES=3 npm start`, as a user runs it: one address, three processes, limits
 * that hold across them; `INSTANCES` above 1 without `REDIS_URL` stops start-up naming it.
 */
import { expect, test } from '@playwright/test';
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bearer, call } from '../reference-server/helpers.ts';
import { startRedisServer } from './helpers.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Runs `npm start` in its own process group until `lines` stdout lines or exit; `whileUp` runs in between. */
async function npmStart(env: Record<string, string>, lines: number, whileUp?: (out: string[]) => Promise<void>) {
  const child = spawn('npm', ['start', '--silent'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', RATELIMIT_FIELDS: 'off', ...env },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let code: number | null | undefined;
  void exited.then((c) => (code = c));
  const out = (): string[] => stdout.split('\n').filter((l) => l.trim() !== '');
  try {
    const deadline = Date.now() + 45_000;
    while (out().length < lines && code === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    if (code === undefined && whileUp) await whileUp(out());
    return { out: out(), stderr, code };
  } finally {
    if (child.exitCode === null && child.pid !== undefined) {
      try {
        process.kill(-child.pid, 'SIGTERM');
      } catch {
        /* gone */
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    }
  }
}

test('DEPLOY REDIS_URL=… INSTANCES=3 npm start serves one address from three processes whose limit is one', async () => {
  test.setTimeout(90_000);
  const redis = await startRedisServer();
  try {
    const started = await npmStart({ REDIS_URL: redis.url, INSTANCES: '3', REDIS_PREFIX: `npm-start-${Date.now()}:` }, 8, async (out) => {
      const inventory = new URL(out.find((l) => l.startsWith('inventory: '))!.slice('inventory: '.length));
      const free = out.find((l) => l.startsWith('key free: '))!.slice('key free: '.length);
      const replies = await Promise.all(Array.from({ length: 90 }, () => call(inventory.origin, 'GET', '/v1/store/orders', { headers: bearer(free) })));
      expect(replies.filter((r) => r.status === 200).length, 'admitted of 90 (limit 60)').toBe(60);
    });
    expect(started.out[0], started.stderr).toMatch(/^instances: 3 \(pids \d+, \d+, \d+\), shared state on Redis$/);
    expect(started.out[1]).toMatch(/^inventory: http:\/\/127\.0\.0\.1:\d+\/v1$/);
  } finally {
    await redis.stop();
  }
});

test('DEPLOY INSTANCES above 1 without REDIS_URL stops start-up with exit code 2 naming REDIS_URL', async () => {
  const started = await npmStart({ REDIS_URL: '', INSTANCES: '2' }, 1);
  expect(started.code).toBe(2);
  expect(started.stderr).toContain('INSTANCES=2 needs REDIS_URL');
});
