/**
 * One benchmark target in its own process:
 * - `reference`: the reference server (`startReferenceServer`, defaults, port 0);
 * - `bare`: plain `node:http` answering every request with the bytes given in `BENCH_SAMPLE`
 *   (`{"body": <base64>, "headers": [name, value, …]}`: the reference server's `GET /v1/inventory`
 *   response, same body and header names, static values). It loads nothing else.
 * Prints one JSON line `{"url": …, "authorization": …}` on stdout, then serves until stdin ends or
 * a signal. Each line `cpu` on stdin is answered with `{"cpuMicros": <user+system CPU time so far>}`.
 * Loopback only.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';

async function main(kind: string): Promise<void> {
  if (kind === 'reference') {
    const { startReferenceServer } = await import('../reference-server/app.ts');
    const reference = await startReferenceServer({ port: 0, host: '127.0.0.1' });
    const url = `${reference.baseUrl}/inventory`;
    process.stdout.write(`${JSON.stringify({ url, authorization: `Bearer ${reference.keys.load}` })}\n`);
    return;
  }
  const sample = JSON.parse(process.env.BENCH_SAMPLE ?? '') as { body: string; headers: string[] };
  const body = Buffer.from(sample.body, 'base64');
  const headers = sample.headers;
  const bare = createServer((_req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const { port } = bare.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${port}/v1/inventory`, authorization: 'Bearer unused' })}\n`);
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => process.exit(0));
createInterface({ input: process.stdin }).on('line', (line) => {
  if (line.trim() !== 'cpu') return;
  const { user, system } = process.cpuUsage();
  process.stdout.write(`${JSON.stringify({ cpuMicros: user + system })}\n`);
});
process.stdin.once('end', () => process.exit(0));
void main(process.argv[2] ?? 'reference');
