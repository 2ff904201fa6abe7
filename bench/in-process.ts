/**
 * The JavaScript cost of one request, without the kernel: `npx tsx bench/in-process.ts`.
 *
 * `npm run bench` measures over loopback TCP, where on a shared 2-core machine other processes'
 * load moves single rounds by a factor of two. This driver feeds the same request bytes to node's
 * HTTP parser over in-memory streams (no sockets, no system calls), 10 requests in flight, and
 * reads this thread's CPU time per request. It loads the reference server (`createReferenceApp`,
 * in memory) and a bare `node:http` server that reads the body and answers fixed bytes, in
 * alternating rounds, and prints the best round of each: the least disturbed figure of the code
 * itself. It leaves out what both servers share outside JavaScript (the `writev` to the socket,
 * the load generator), so its ratio is lower than the bench's.
 *
 * Environment: BENCH_REQUEST (`patch`, default, or `list`), BENCH_ROUNDS (12), BENCH_ROUND_MS (500).
 */
import { createServer, type Server } from 'node:http';
import { Duplex } from 'node:stream';
import { createReferenceApp, MemoryRateLimitStore } from '../reference-server/app.ts';
import { resolveConfig } from '../reference-server/config.ts';

const IN_FLIGHT = 10;
const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const roundMs = Number(process.env.BENCH_ROUND_MS ?? 500);
const kind = process.env.BENCH_REQUEST ?? 'patch';
if (kind !== 'patch' && kind !== 'list') throw new Error('BENCH_REQUEST must be patch or list');

const app = createReferenceApp(resolveConfig({ port: 0, redisUrl: 'none' }), new MemoryRateLimitStore());
const reference = createServer({ requireHostHeader: false, connectionsCheckingInterval: 1_000 }, (req, res) => app.onRequest(req, res));

/** The reference's own answer, so the bare server sends the same bytes. */
const sample: { status: number; headers: string[]; body: Buffer } = { status: 200, headers: [], body: Buffer.alloc(0) };
const bare = createServer((req, res) => {
  const answer = (): void => {
    res.writeHead(sample.status, sample.headers);
    res.end(sample.body);
  };
  if (kind === 'list') return answer();
  req.on('data', () => undefined);
  req.on('end', answer);
});

function requestBytes(key: string): Buffer {
  const head = `Host: 127.0.0.1\r\nAuthorization: Bearer ${key}\r\n`;
  return Buffer.from(
    kind === 'list'
      ? `GET /v1/inventory HTTP/1.1\r\n${head}\r\n`
      : `PATCH /v1/inventory/1 HTTP/1.1\r\n${head}Content-Type: application/json\r\nContent-Length: 14\r\n\r\n{"quantity":5}`,
  );
}

/** A connection to `server` over an in-memory duplex; `onResponse` gets each response's first bytes. */
function connection(server: Server, onResponse: (head: Buffer, again: () => void) => void, request: Buffer): void {
  const duplex = new Duplex({
    read() {},
    write(chunk: Buffer, _encoding, callback) {
      if (chunk.length > 12 && chunk.toString('latin1', 0, 9) === 'HTTP/1.1 ')
        onResponse(chunk, () => setImmediate(() => duplex.push(request)));
      callback();
    },
  });
  Object.assign(duplex, { remoteAddress: '127.0.0.1', setTimeout: () => duplex, setNoDelay: () => duplex, setKeepAlive: () => duplex });
  server.emit('connection', duplex);
  duplex.push(request);
}

/** Runs `IN_FLIGHT` closed-loop connections for `ms`; returns CPU µs per request. */
function run(server: Server, request: Buffer, ms: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const end = Date.now() + ms;
    const cpu = process.cpuUsage();
    let answered = 0;
    let open = IN_FLIGHT;
    for (let i = 0; i < IN_FLIGHT; i++) {
      connection(
        server,
        (head, again) => {
          if (head.toString('latin1', 9, 12) !== '200') return reject(new Error(`expected 200, got ${head.toString('latin1', 0, 40)}`));
          answered++;
          if (Date.now() < end) return again();
          if (--open === 0) {
            const used = process.cpuUsage(cpu);
            resolve((used.user + used.system) / answered);
          }
        },
        request,
      );
    }
  });
}

async function takeSample(): Promise<void> {
  const response = await new Promise<{ head: string; body: Buffer }>((resolve) => {
    const chunks: Buffer[] = [];
    const duplex = new Duplex({
      read() {},
      write(chunk: Buffer, _encoding, callback) {
        chunks.push(Buffer.from(chunk));
        const all = Buffer.concat(chunks);
        const split = all.indexOf('\r\n\r\n');
        const length = Number(/content-length: (\d+)/i.exec(all.toString('latin1', 0, Math.max(0, split)))?.[1] ?? -1);
        if (split >= 0 && all.length >= split + 4 + length)
          resolve({ head: all.toString('latin1', 0, split), body: all.subarray(split + 4, split + 4 + length) });
        callback();
      },
    });
    Object.assign(duplex, { remoteAddress: '127.0.0.1', setTimeout: () => duplex, setNoDelay: () => duplex, setKeepAlive: () => duplex });
    reference.emit('connection', duplex);
    duplex.push(requestBytes(app.keys.load));
  });
  const [statusLine, ...lines] = response.head.split('\r\n');
  sample.status = Number(statusLine.split(' ')[1]);
  for (const line of lines) {
    const [name, value] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 1).trim()];
    if (!/^(date|connection|keep-alive)$/i.test(name)) sample.headers.push(name, value);
  }
  sample.body = response.body;
}

await takeSample();
const sides: [string, Server, Buffer][] = [
  ['bare', bare, requestBytes('unused')],
  ['reference', reference, requestBytes(app.keys.load)],
];
for (const [, server, request] of sides) await run(server, request, roundMs);
const results: Record<string, number[]> = { bare: [], reference: [] };
for (let round = 0; round < rounds; round++) {
  for (const [name, server, request] of round % 2 ? [...sides].reverse() : sides) results[name].push(await run(server, request, roundMs));
}
const best = (values: number[]): number => Math.min(...values);
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1];
const load = (await import('node:fs')).readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(
  `in-process ${kind}: CPU per request, best of ${rounds} rounds: reference ${best(results.reference).toFixed(1)} µs, bare ${best(results.bare).toFixed(1)} µs, ` +
    `ratio bare/reference ${(best(results.bare) / best(results.reference)).toFixed(3)} (medians ${median(results.reference).toFixed(1)} vs ${median(results.bare).toFixed(1)} µs); load average ${load}`,
);
process.exit(0);
