/** The pacer layer (suites/fixtures/pipeline/pacer.ts): a grant before every request; the pacer's refusal or absence is unjudgeable. */
import { test, expect } from '../../test.ts';
import { acquirerOf, giveBack, paceRequest, reportAnswer } from '../../../suites/fixtures/pipeline/pacer.ts';
import { Unjudgeable, type PipelineRequest } from '../../../suites/fixtures/pipeline/types.ts';
import { MessageBudgetSpent } from '../../../suites/fixtures/message-place.ts';
import {
  PacerUnreachable,
  PacingNotCertified,
  type AcquireOptions,
  type Lease,
  type PacingClient,
  type PacingResponse,
} from '../../../suites/pacing/client.ts';

const KEY = 'pipeline-test-key-0123456789abcdef';
const clean = (t: string) => t.replaceAll(KEY, '<API_KEY>');

/** A pacer that records what it is asked, and fails acquire with `failure` when given. */
function fakePacing(o: { failure?: Error; granted?: boolean } = {}) {
  const log: string[] = [];
  const asked: AcquireOptions[] = [];
  const lease = (): Lease => ({
    granted: 1,
    observe: async (r: PacingResponse) => (log.push(`observe ${r.status} ${r.service}`), {}),
    release: async () => void log.push('release'),
  });
  const pacing = {
    url: 'http://pacer',
    acquire: async (_label: string, options: AcquireOptions = {}) => {
      asked.push(options);
      if (o.failure) throw o.failure;
      return lease();
    },
    takeMessage: async (by: string, queues: boolean) => (
      log.push(`take ${by} ${queues}`), { granted: o.granted ?? true, limit: 2, settle: async (q: boolean) => void log.push(`settle ${q}`) }
    ),
  } as unknown as PacingClient;
  return { pacing, log, asked, lease };
}

function request(o: Partial<PipelineRequest['s']> = {}): PipelineRequest {
  const s = { method: 'POST', base: 'messages' as const, path: '/messages', ...o };
  return {
    s,
    method: s.method,
    url: new URL('http://127.0.0.1:9/q/messages'),
    authorization: `Bearer ${KEY}`,
    bucket: '<API_KEY>',
    carriesKey: true,
    headers: { 'content-type': 'application/json' },
    body: '{"message":"m"}',
    what: 'MSG-01: POST /q/messages',
  };
}

test('a grant is asked for with the plan’s rate, a lease longer than the request deadline, and the restore flag', async () => {
  const { pacing, asked } = fakePacing();
  await acquirerOf({ requestTimeoutMs: 10_000 }, pacing, () => 60, clean, true)('<API_KEY>', 'exhaust', 'RL-05');
  expect(asked).toEqual([{ mode: 'exhaust', nominalPerMinute: 60, leaseTtlMs: 40_000, restore: true }]);
});

test('a wait beyond MAX_RETRY_AFTER_S, or a pacer out of reach, is unjudgeable, redacted and naming the request', async () => {
  for (const failure of [new PacingNotCertified(`Retry-After 900 s on ${KEY}`), new PacerUnreachable(`ECONNREFUSED ${KEY}`)]) {
    const { pacing } = fakePacing({ failure });
    const e = await acquirerOf(
      { requestTimeoutMs: 1000 },
      pacing,
      () => undefined,
      clean,
    )('<API_KEY>', 'paced', 'INV-01: GET /v1/inventory').catch((x) => x);
    expect(e).toBeInstanceOf(Unjudgeable);
    expect(e.reason).toMatch(/^INV-01: GET \/v1\/inventory: /);
    expect(e.reason).not.toContain(KEY);
  }
  const other = new Error('boom');
  const { pacing } = fakePacing({ failure: other });
  expect(await acquirerOf({ requestTimeoutMs: 1000 }, pacing, () => undefined, clean)('<API_KEY>', 'paced', 'x').catch((x) => x)).toBe(
    other,
  );
});

test('a message takes its place before the lease, and gives it back unqueued when no lease comes', async () => {
  const { pacing, log } = fakePacing();
  const acquire = async () => {
    log.push('acquire');
    throw new Unjudgeable('no grant');
  };
  await expect(paceRequest(request(), 'MSG-01', pacing, acquire)).rejects.toThrow(Unjudgeable);
  expect(log).toEqual(['take MSG-01 true', 'acquire', 'settle false']);
});

test('a spent budget is unjudgeable, or MessageBudgetSpent when the check asks for it; nothing is leased', async () => {
  const { pacing, asked } = fakePacing({ granted: false });
  const acquire = acquirerOf({ requestTimeoutMs: 1000 }, pacing, () => undefined, clean);
  await expect(paceRequest(request(), 'MSG-01', pacing, acquire)).rejects.toThrow(Unjudgeable);
  await expect(paceRequest(request({ throwWhenMessagesSpent: true }), 'MSG-01', pacing, acquire)).rejects.toThrow(MessageBudgetSpent);
  expect(asked).toEqual([]);
});

test('a burst’s share uses the lease it was handed, and never releases it; a lease of its own is released', async () => {
  const { pacing, log, lease } = fakePacing();
  const shared = lease();
  const share = request({ method: 'GET', base: 'inventory', path: '/inventory', lease: shared });
  const grant = await paceRequest(share, 'RL-05', pacing, async () => {
    throw new Error('must not be asked');
  });
  expect(grant.lease).toBe(shared);
  await reportAnswer(grant, share, { status: 200, headers: [], receivedAtMs: 0 });
  await giveBack(grant, share);
  expect(log).toEqual(['observe 200 http://127.0.0.1:9']);
  const own = request();
  const ownGrant = await paceRequest(own, 'MSG-01', pacing, async () => lease());
  await reportAnswer(ownGrant, own, { status: 400, headers: [], receivedAtMs: 0 });
  expect(log.slice(1)).toEqual(['take MSG-01 true', 'settle false', 'observe 400 http://127.0.0.1:9', 'release']);
  log.length = 0;
  await giveBack(ownGrant, own);
  expect(log).toEqual(['settle true', 'release']);
});
