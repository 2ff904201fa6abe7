/**
 * The coverage loop (suites/generated/run-coverage.ts) against a small server: every case is sent
 * once and judged; a failing case keeps its location, value, request, curl line and replay token;
 * once MAX_UNANSWERED requests of an operation went unanswered, its remaining cases are not sent
 * (each would wait REQUEST_TIMEOUT_MS) and are named.
 */
import { test, expect } from '../test.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { createApi } from '../../suites/fixtures.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { openapiDocument } from '../../schemas/index.ts';
import { operationsOf } from '../../suites/generated/document.ts';
import { coverageCases } from '../../suites/generated/coverage.ts';
import { MAX_UNANSWERED, runCoverage } from '../../suites/generated/run-coverage.ts';
import { Budget } from '../../suites/generated/budget.ts';
import { decodeToken } from '../../suites/generated/replay.ts';

const KEY = 'coverage-test-key-0123456789abcdef';
const OPS = operationsOf(openapiDocument());
const LIST = OPS.find((o) => o.id === 'listInventory')!;

/** A list endpoint that never answers a target with a query, and answers HEAD with 500. */
async function startServer() {
  const server = http.createServer((req, res) => {
    if ((req.url ?? '').includes('?')) return;
    const headers = {
      'content-type': 'application/json',
      'x-ratelimit-limit': '100000',
      'x-ratelimit-remaining': '99999',
      'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
      date: new Date().toUTCString(),
    };
    if (req.method === 'HEAD') return void res.writeHead(500, headers).end();
    if (
      req.method === 'GET' &&
      req.url === '/v1/inventory' &&
      /^Bearer coverage-test-key-0123456789abcdef$/i.test(req.headers.authorization ?? '')
    ) {
      return void res.writeHead(200, headers).end('[{"petId":1,"quantity":1,"status":"available"}]');
    }
    const status = req.method === 'GET' ? 401 : 405;
    res.writeHead(status, headers).end(`{"code":"e","message":"e","status":${status}}`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('each case is sent once and judged; a failing HEAD keeps its class, value, curl and token; after 3 unanswered requests the rest are named, not sent', async () => {
  const server = await startServer();
  const coordinator = await startPacerCoordinator();
  try {
    const env = readEnv({ BASE_URL: server.url, API_URL: server.url, API_KEY: KEY, REQUEST_TIMEOUT_MS: '300' });
    const api = createApi({ env, pacing: pacingClient(coordinator.url), annotate: () => undefined });
    const cases = coverageCases(LIST, OPS).filter((c) => c.location === 'method' || c.location === 'query');
    const run = await runCoverage(api, LIST, cases, [], {}, false, new Budget(1000));
    const queries = cases.filter((c) => c.location === 'query');
    expect(run.sent.method).toBe(cases.length - queries.length);
    expect(run.sent.query).toBe(MAX_UNANSWERED);
    expect(run.abandoned).toEqual(queries.slice(MAX_UNANSWERED).map((c) => c.name));
    const head = run.failures.find((f) => f.name === 'method HEAD /inventory')!;
    expect(head).toMatchObject({ location: 'method', value: 'HEAD' });
    expect(head.findings.map((f) => f.id)).toContain('GEN-01');
    expect(head.curl).toContain("-X HEAD '");
    expect(head.curl).toContain('$API_KEY');
    expect(head.curl).not.toContain(KEY);
    expect(decodeToken(head.token)).toEqual({ check: 'coverage', op: 'listInventory', cls: 'method HEAD /inventory', seed: 0 });
    expect(run.failures.filter((f) => f.location === 'query').map((f) => f.findings[0]!.id)).toEqual(Array(MAX_UNANSWERED).fill('GEN-02'));
  } finally {
    await coordinator.close();
    await server.close();
  }
});
