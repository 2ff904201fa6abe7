/**
 * One benchmark target in its own process: `reference` (the reference server) or `bare` (plain
 * `node:http` answering every request with the exact bytes of the reference server's
 * `GET /v1/inventory`: same body, same header names, static header values). Prints one JSON line
 * `{"url": …, "authorization": …}` on stdout, then serves until killed. Loopback only.
 * Each line `cpu` on stdin is answered with `{"cpuMicros": <user+system CPU time so far>}`.
 */
import { createServer } from 'node:http';
import { createInterface } from 'node:readline';
import type { AddressInfo } from 'node:net';
import { startReferenceServer } from '../reference-server/app.ts';

async function main(kind: string): Promise<void> {
  const reference = await startReferenceServer({ port: 0, host: '127.0.0.1' });
  const url = `${reference.baseUrl}/inventory`;
  const authorization = `Bearer ${reference.keys.load}`;
  if (kind === 'reference') {
    process.stdout.write(`${JSON.stringify({ url, authorization })}\n`);
    return;
  }
  const sample = await fetch(url, { headers: { authorization } });
  const body = Buffer.from(await sample.arrayBuffer());
  const headers: string[] = [];
  for (const name of ['Content-Type', 'Content-Length', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
    headers.push(name, sample.headers.get(name) ?? '');
  }
  await reference.close();
  const bare = createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const { port } = bare.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1/inventory`, authorization })}\n`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'cpu') return;
  const { user, system } = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ cpuMicros: user + system })}\n`);
});
process.stdin.once('end', () => process.exit(0));
void main(process.argv[2] ?? 'reference');
