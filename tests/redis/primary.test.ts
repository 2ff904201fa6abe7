/**
 * The primary of a multi-instance deployment whose parent leaves while it is still starting (a
 * test worker stopped by its timeout, a run stopped by Ctrl-C): nobody is left to read its report,
 * and it ends quietly, its workers with it, instead of failing on a closed channel.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { expect, test } from '../test.ts';
import { primaryCommand } from '../../reference-server/deployment/start.ts';
import { startRedisServer } from './helpers.ts';

/** Starts the command in argv[1] (JSON) with an IPC channel, prints its pid and leaves at once. */
const LEAVING_PARENT = `
const [command, ...args] = JSON.parse(process.argv[1]);
const child = require('node:child_process').spawn(command, args, { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
process.stdout.write(String(child.pid));
setTimeout(() => process.exit(0), 200);
`;

/** Whether `pid` still runs (a zombie left to a parent that does not reap it has ended). */
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return true;
  }
};

test('a deployment primary whose parent left while it started ends within its deadline, with nothing on its error output', async () => {
  test.setTimeout(60_000);
  const redis = await startRedisServer();
  try {
    const { args, env } = primaryCommand({ redisUrl: redis.url, instances: 2 });
    const parent = spawn(process.execPath, ['-e', LEAVING_PARENT, JSON.stringify([process.execPath, ...args])], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pid = '';
    let stderr = '';
    parent.stdout.on('data', (c: Buffer) => (pid += c.toString()));
    parent.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    // The error output closes once the parent, the primary and every worker of it have ended.
    const closed = await Promise.race([
      new Promise<boolean>((resolve) => parent.stderr.on('close', () => resolve(true))),
      new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 45_000)),
    ]);
    expect(Number(pid), 'the parent started the primary').toBeGreaterThan(0);
    expect(closed, `the primary and its workers ended within 45 s (primary ${pid} alive: ${alive(Number(pid))})`).toBe(true);
    expect(alive(Number(pid)), 'the primary is gone').toBe(false);
    expect(stderr, 'the primary wrote no error').toBe('');
  } finally {
    await redis.stop();
  }
});
