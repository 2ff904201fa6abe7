/**
 * The load engine's HTTP client against undici, side by side over loopback: alternating rounds of
 * the same closed-model load (N requests, C in flight, `GET /v1/inventory` on the bundled reference
 * server), printing each round's requests per second and the ratio undici / node:http.
 * undici is not a dependency: give its entry point in UNDICI_MODULE (a path to an installed copy).
 * A measurement, not a test (no `.test.ts`): it lives here because bench/ may not import the suites.
 *
 *   UNDICI_MODULE=/path/to/node_modules/undici/index.js npx tsx tests/load/client-bench.ts
 */
import { pathToFileURL } from 'node:url';
import { startReferenceServer } from '../../reference-server/app.ts';
import { agentFor, sendOne } from '../../suites/load/engine.ts';

const N = Number(process.env.BENCH_REQUESTS ?? 3000);
const C = Number(process.env.BENCH_CONNECTIONS ?? 16);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 6);

async function closedLoop(one: () => Promise<void>): Promise<number> {
  let left = N;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: C }, async () => {
      while (left-- > 0) await one();
    }),
  );
  return N / ((performance.now() - started) / 1000);
}

const modulePath = process.env.UNDICI_MODULE;
if (!modulePath) {
  console.error('load-client bench: set UNDICI_MODULE to the entry point of an installed undici (it is not a dependency of this project)');
  process.exit(2);
}
const undici = (await import(pathToFileURL(modulePath).href)) as typeof import('undici-types') & {
  Pool: new (
    origin: string,
    o: object,
  ) => { request(o: object): Promise<{ statusCode: number; body: { text(): Promise<string> } }>; close(): Promise<void> };
};
const server = await startReferenceServer({ port: 0, minuteWindowMs: 60_000 });
const url = `${server.baseUrl}/inventory`;
const origin = new URL(url).origin;
const authorization = `Bearer ${server.keys.load}`;
const nodeRound = async () => {
  const agent = agentFor(url);
  const rps = await closedLoop(async () => {
    const r = await sendOne({ url, authorization, timeoutS: 10, agent });
    if (!r.ok || r.status !== 200) throw new Error(`node:http: ${r.ok ? r.status : r.error}`);
  });
  agent.destroy();
  return rps;
};
const undiciRound = async () => {
  const pool = new undici.Pool(origin, { connections: C, pipelining: 1 });
  const path = new URL(url).pathname;
  const rps = await closedLoop(async () => {
    const r = await pool.request({ path, method: 'GET', headers: { accept: 'application/json', authorization } });
    await r.body.text();
    if (r.statusCode !== 200) throw new Error(`undici: ${r.statusCode}`);
  });
  await pool.close();
  return rps;
};
try {
  await nodeRound(); // warm-up
  await undiciRound();
  const ratios: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const first = i % 2 === 0;
    const a = first ? await nodeRound() : 0;
    const b = await undiciRound();
    const c = first ? a : await nodeRound();
    ratios.push(b / c);
    console.log(`round ${i + 1}: node:http ${c.toFixed(0)} req/s, undici ${b.toFixed(0)} req/s, undici / node:http ${(b / c).toFixed(2)}`);
  }
  ratios.sort((x, y) => x - y);
  console.log(
    `median undici / node:http over ${ROUNDS} alternating rounds (${N} requests, ${C} in flight): ${ratios[Math.floor(ratios.length / 2)]!.toFixed(2)}`,
  );
} finally {
  await server.close();
}
