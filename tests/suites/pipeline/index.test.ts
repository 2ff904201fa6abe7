/**
 * The composed pipeline (suites/fixtures/pipeline/index.ts): its layers in order (readonly guard →
 * pacer → journal → transport → record → classify), and one outcome delivered to the check.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, expect } from '../../test.ts';
import { requestPipeline } from '../../../suites/fixtures/pipeline/index.ts';
import { ANNOTATION } from '../../../core/results.ts';
import { readEnv } from '../../../suites/lib/env.ts';
import type { AcquireOptions, Lease, PacingClient } from '../../../suites/pacing/client.ts';
import type { RunJournal } from '../../../suites/journal/writer.ts';

const KEY = 'pipeline-test-key-0123456789abcdef';

/** A pacer, a journal and a server that write what happens to one log. */
async function scene(answer: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const log: string[] = [];
  const server = http.createServer((req, res) => {
    log.push(`server ${req.method}`);
    answer(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const lease: Lease = {
    granted: 1,
    observe: async (r) => (log.push(`observe ${r.status}`), r.status === 429 ? { blockedForMs: 3000 } : {}),
    release: async () => void log.push('release'),
  };
  const pacing = {
    url: 'http://pacer',
    acquire: async (label: string, _o?: AcquireOptions) => (log.push(`acquire ${label}`), lease),
  } as unknown as PacingClient;
  const journal = {
    file: '/dev/null',
    change: (pet: string) => (log.push(`journal ${pet}`), 'e1'),
    writing: () => undefined,
    openFor: () => undefined,
    writtenOn: () => undefined,
    message: () => 'm1',
    done: () => void log.push('journal done'),
  } as RunJournal;
  const close = () => {
    server.closeAllConnections();
    server.close();
  };
  return { log, origin, pacing, journal, close };
}

const notCertified = (reason: string): never => {
  throw new Error(`not certified: ${reason}`);
};

test('a change is paced, journaled, sent, reported to the pacer, then recorded, in that order', async () => {
  const s = await scene((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  try {
    const annotations: { type: string }[] = [];
    const env = readEnv({ BASE_URL: `${s.origin}/v1`, API_KEY: KEY });
    const p = requestPipeline({
      env,
      pacing: s.pacing,
      journal: s.journal,
      annotate: (a) => (s.log.push(`annotate ${a.type}`), annotations.push(a)),
      requirementId: 'INV-02',
      notCertified,
    });
    const res = await p.send({ method: 'PATCH', base: 'inventory', path: '/inventory/5', json: { quantity: 1 } });
    expect(res.status).toBe(200);
    expect(s.log).toEqual([
      'acquire <API_KEY>',
      'journal 5',
      'server PATCH',
      'observe 200',
      'release',
      `annotate ${ANNOTATION.evidence}`,
      `annotate ${ANNOTATION.exchange}`,
    ]);
    expect(p.requests).toBe(1);
    p.finish();
  } finally {
    s.close();
  }
});

test('under readonly a change with a key takes nothing and sends nothing: not certified', async () => {
  const s = await scene((_req, res) => res.end());
  try {
    const env = readEnv({ BASE_URL: `${s.origin}/v1`, API_KEY: KEY, CONFORMANCE_PROFILE: 'readonly' });
    const p = requestPipeline({ env, pacing: s.pacing, journal: s.journal, annotate: () => undefined, notCertified });
    await expect(p.send({ method: 'PATCH', base: 'inventory', path: '/inventory/5', json: { quantity: 1 } })).rejects.toThrow(
      /not certified: CONFORMANCE_PROFILE=readonly: PATCH/,
    );
    expect(s.log).toEqual([]);
    expect(p.requests).toBe(0);
    p.finish();
  } finally {
    s.close();
  }
});

test('a 429 the check did not plan: recorded, then its own findings, then the check not certified; a planned one is answered', async () => {
  const s = await scene((_req, res) => res.writeHead(429, { 'content-type': 'application/json' }).end('{}'));
  try {
    const annotations: { type: string }[] = [];
    const env = readEnv({ BASE_URL: `${s.origin}/v1`, API_KEY: KEY });
    const p = requestPipeline({ env, pacing: s.pacing, annotate: (a) => annotations.push(a), requirementId: 'INV-01', notCertified });
    await expect(p.send({ method: 'GET', base: 'inventory', path: '/inventory' })).rejects.toThrow(
      /not certified: INV-01: GET \/v1\/inventory → 429: a 429 the check did not plan/,
    );
    expect(annotations.map((a) => a.type)).toEqual([
      ANNOTATION.evidence,
      ANNOTATION.exchange,
      ANNOTATION.metFinding,
      ANNOTATION.metFinding,
      ANNOTATION.metFinding,
    ]);
    expect((await p.send({ method: 'GET', base: 'inventory', path: '/inventory', expect429: true })).status).toBe(429);
    p.finish();
  } finally {
    s.close();
  }
});

test('a server that refuses the connection is a loss the check fails on, named; a bare lease() is paced like a request', async () => {
  const s = await scene((_req, res) => res.end());
  s.close();
  const env = readEnv({ BASE_URL: `${s.origin}/v1`, API_KEY: KEY });
  const p = requestPipeline({ env, pacing: s.pacing, annotate: () => undefined, requirementId: 'INV-01', notCertified });
  await expect(p.send({ method: 'GET', base: 'inventory', path: '/inventory' })).rejects.toThrow(
    /^INV-01: GET \/v1\/inventory: request failed: /,
  );
  expect(s.log).toEqual(['acquire <API_KEY>', 'release']);
  await p.lease('api', { count: 3 });
  expect(s.log.at(-1)).toBe('acquire <API_KEY>');
  p.finish();
});
