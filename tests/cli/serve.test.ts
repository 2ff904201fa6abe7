import { spawn } from 'node:child_process';
import path from 'node:path';
import { test, expect } from '../test.ts';

const BIN = path.resolve(import.meta.dirname, '..', '..', 'cli', 'bin.mjs');

test('cli: serve runs the reference server with its own flags, and stops on SIGTERM', async () => {
  const child = spawn(process.execPath, [BIN, 'serve', '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    const base = await new Promise<string>((resolve, reject) => {
      let out = '';
      const timer = setTimeout(() => reject(new Error(`no address printed within 30 s:\n${out}`)), 30_000);
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /^inventory: (http:\/\/127\.0\.0\.1:\d+\/v1)$/m.exec(out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      });
    });
    const res = await fetch(`${base}/inventory`);
    expect(res.status, 'GET /inventory without a key').toBe(401);
    expect((await res.json()) as object).toMatchObject({ status: 401 });
  } finally {
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    child.kill('SIGTERM');
    expect(await closed).not.toBeNull();
  }
});
