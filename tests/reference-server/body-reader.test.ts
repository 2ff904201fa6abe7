/**
 * The body reader (reference-server/http/body.ts) answers every body, whatever the timing: each
 * case below has its own deadline of a second or two and fails there, never at the test timeout.
 *
 * The mechanisms that can leave a body unanswered with one shared deadline timer and listeners
 * that are module functions, each shown here:
 * - a request whose stream already emitted 'aborted' (or 'end') before the reader listened: node
 *   emits those events once, so a reader that only waits for them holds the body until the shared
 *   timer comes round (and forever if the timer was lost). It happens when the answer starts after
 *   an asynchronous step (a rate-limit store that answers with a Promise, as on Redis) and the
 *   client closes meanwhile;
 * - the shared timer's round of 408s: if answering one late body throws, a loop that answers them
 *   in turn and re-arms afterwards leaves every later body without a deadline;
 * - a finished body keeps no listener on its request.
 * And the ordinary paths over real sockets: `Connection: close`, a body in pieces, pipelined
 * bodies, chunked bodies, a body cut short, a stalled body next to a quick one, a 408 at each
 * body's own deadline after the timer was armed for an older body already answered, and PATCH
 * bodies through an https proxy that closes every connection (the staging conditions).
 *
 * The reader's two paths: a body complete once its packet is parsed is read at once, without
 * listeners (a body with its headers, one already complete when reading starts, a chunked body in
 * one packet, one over the size limit); any other body through listeners (split across packets, cut
 * short after its first chunk, a declared `Content-Length` larger than what arrives, chunked in pieces).
 */
import { EventEmitter } from 'node:events';
import { Readable } from 'node:stream';
import { connect } from 'node:net';
import { test, expect } from '../test.ts';
import { MemoryRateLimitStore } from '../../reference-server/app.ts';
import { BodyReader, readerListenerCount } from '../../reference-server/http/body.ts';
import type { Exchange } from '../../reference-server/http/exchange.ts';
import type { RateLimitStore } from '../../reference-server/rate-limit/store.ts';
import { parseRaw, sleep } from './helpers.ts';
import { B, exchange, ignore, patchHead, serve, statuses, within } from './socket-exchange.ts';

/** A rate-limit store whose decisions for keys wait until `release()` (the answer starts after an asynchronous step); others are immediate. */
function heldStore(): RateLimitStore & { release(): void; held(): number } {
  const memory = new MemoryRateLimitStore();
  let waiting: (() => void)[] = [];
  return {
    hit: (identity, policy, now) =>
      identity.startsWith('key:')
        ? new Promise((resolve) => waiting.push(() => resolve(memory.hit(identity, policy, now))))
        : memory.hit(identity, policy, now),
    release() {
      const run = waiting;
      waiting = [];
      for (const go of run) go();
    },
    held: () => waiting.length,
  };
}

/** A stand-in request for the reader alone: an emitter with the stream flags the reader reads. */
function fakeExchange(answers: { status: number; at: number }[], onFail: (n: number) => void): Exchange {
  const req = Object.assign(new EventEmitter(), { headers: {}, readableEnded: false, destroyed: false, pause: () => req });
  const x = {
    req,
    res: {},
    key: {},
    decision: {},
    params: [],
    routeHeaders: undefined,
    app: {
      fail: (_x: Exchange, error: { status: number }) => {
        answers.push({ status: error.status, at: Date.now() });
        onFail(answers.length);
      },
    },
  };
  return x as unknown as Exchange;
}

/** A stand-in request whose body is already buffered and complete (as when reading starts after the body arrived). */
function completeExchange(chunks: Buffer[], answers: { status: number; at: number }[]): Exchange {
  const req = new Readable({ read: ignore });
  for (const chunk of chunks) req.push(chunk);
  req.push(null);
  Object.assign(req, { headers: {}, complete: true });
  const x = fakeExchange(answers, ignore) as { req: unknown };
  x.req = req;
  return x as Exchange;
}

test.describe('reference server: body reader', () => {
  test('BODY a PATCH whose client left while the rate-limit decision was pending is let go at once, not at the body deadline', async () => {
    const store = heldStore();
    await serve({ bodyTimeoutMs: 60_000, store }, async (port, app, seen) => {
      for (const sendsBody of [false, true]) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', ignore);
        socket.write(patchHead(app.keys.business, 14) + (sendsBody ? '{"quantity":5}' : '{"qua'));
        await within(2_000, 'the request reaches the store', () => store.held() === 1);
        const req = seen.at(-1)!;
        socket.destroy();
        await within(2_000, 'the server sees the client gone', () => req.destroyed);
        store.release();
        await within(
          1_000,
          `the body (${sendsBody ? 'complete' : 'cut short'}) is let go (bodies held: ${app.state.body.pending})`,
          () => app.state.body.pending === 0,
        );
      }
    });
  });

  test('BODY the shared timer answers every late body at its deadline even when one answer throws', async () => {
    const reader = new BodyReader({ maxBodyBytes: 1024, bodyTimeoutMs: 150 });
    const answers: { status: number; at: number }[] = [];
    const first = fakeExchange(answers, (n) => {
      if (n === 1) throw new Error('an answer that throws');
    });
    const second = fakeExchange(answers, ignore);
    const started = Date.now();
    const listeners = process.listeners('uncaughtException');
    reader.read(first, ignore, undefined);
    reader.read(second, ignore, undefined);
    try {
      await within(
        1_500,
        `both late bodies answered (answers: ${JSON.stringify(answers)}, bodies held: ${reader.pending})`,
        () => answers.length === 2 && reader.pending === 0,
      );
    } finally {
      expect(process.listeners('uncaughtException')).toEqual(listeners);
    }
    for (const a of answers) {
      expect(a.status).toBe(408);
      expect(a.at - started, 'a 408 never comes before the deadline').toBeGreaterThanOrEqual(150 - 5);
    }
  });

  test('BODY a body whose stream already ended or was destroyed before reading is answered at once with 400', async () => {
    for (const flag of ['readableEnded', 'destroyed'] as const) {
      const reader = new BodyReader({ maxBodyBytes: 1024, bodyTimeoutMs: 60_000 });
      const answers: { status: number; at: number }[] = [];
      const x = fakeExchange(answers, ignore);
      Object.assign(x.req, { [flag]: true });
      reader.read(x, () => answers.push({ status: 200, at: Date.now() }), undefined);
      await within(500, `the ${flag} body is answered`, () => answers.length === 1);
      expect(answers[0].status, flag).toBe(400);
      expect(reader.pending, flag).toBe(0);
    }
  });

  test('BODY a complete buffered body is read at once, whole; one over the size limit (no declared length, as when chunked) gets 413', async () => {
    const reader = new BodyReader({ maxBodyBytes: 1024, bodyTimeoutMs: 60_000 });
    const cases: [string, Buffer[], number][] = [
      ['one chunk', [Buffer.from('{"quantity":3}')], 200],
      ['three chunks', [Buffer.from('{"quan'), Buffer.from('tity"'), Buffer.from(':3}')], 200],
      ['empty', [], 200],
      ['over the limit in one chunk', [Buffer.alloc(1025, 0x20)], 413],
      ['over the limit in two chunks', [Buffer.alloc(1000, 0x20), Buffer.alloc(25, 0x20)], 413],
    ];
    for (const [name, chunks, status] of cases) {
      const answers: { status: number; at: number }[] = [];
      let got: Buffer | undefined;
      reader.read(
        completeExchange(chunks, answers),
        (_x, body) => {
          got = body;
          answers.push({ status: 200, at: Date.now() });
        },
        undefined,
      );
      expect(
        answers.map((a) => a.status),
        `${name}: answered at once`,
      ).toEqual([status]);
      if (status === 200) expect(got?.toString(), name).toBe(Buffer.concat(chunks).toString());
      expect(reader.pending, name).toBe(0);
      expect(reader.listened, name).toBe(0);
    }
  });

  test('BODY a finished body leaves no listener of the reader on its request', async () => {
    await serve({ bodyTimeoutMs: 60_000 }, async (port, app, seen) => {
      const body = '{"quantity":6}';
      const raw = await exchange(port, [patchHead(app.keys.business, body.length) + body], 1, 2_000);
      expect(statuses(raw)).toEqual([200]);
      for (const split of [false, true]) {
        const steps = split
          ? [patchHead(app.keys.business, body.length) + body.slice(0, 4), 30, body.slice(4)]
          : [patchHead(app.keys.business, body.length) + body];
        expect(statuses(await exchange(port, steps, 1, 2_000))).toEqual([200]);
        expect(readerListenerCount(seen.at(-1)!), split ? 'split across packets' : 'with its headers').toBe(0);
        expect(app.state.body.pending).toBe(0);
      }
    });
  });

  test('BODY a body that arrived with its headers is read at once without listeners; a body split across packets through listeners, removed after', async () => {
    await serve({ bodyTimeoutMs: 60_000 }, async (port, app, seen) => {
      const key = app.keys.business;
      const reader = app.state.body;
      expect(statuses(await exchange(port, [patchHead(key, B.length) + B], 1, 2_000))).toEqual([200]);
      expect(reader.listened, 'with its headers').toBe(0);
      // The rest is sent once the server waits for it: on a busy runner a fixed pause may end
      // before the server read the headers, and the whole body would then be there at once.
      const waitsForTheRest = () => reader.pending === 1;
      expect(statuses(await exchange(port, [patchHead(key, B.length) + B.slice(0, 5), waitsForTheRest, B.slice(5)], 1, 2_000))).toEqual([
        200,
      ]);
      expect(reader.listened, 'split across packets').toBe(1);
      expect(readerListenerCount(seen.at(-1)!)).toBe(0);
      expect(reader.pending).toBe(0);
    });
  });

  test('BODY a body already complete when reading starts (it arrived while the rate-limit decision was pending) is read and stored', async () => {
    const store = heldStore();
    await serve({ bodyTimeoutMs: 60_000, store }, async (port, app, seen) => {
      const body = '{"quantity":41}';
      const answer = exchange(port, [patchHead(app.keys.business, body.length) + body], 1, 3_000);
      await within(2_000, 'the request reaches the store', () => store.held() === 1);
      await within(1_000, 'the body has arrived', () => seen.at(-1)!.complete);
      store.release();
      const reply = parseRaw(await answer);
      expect(reply.status, reply.body).toBe(200);
      expect(JSON.parse(reply.body)).toMatchObject({ quantity: 41 });
      expect(app.state.body.listened, 'read at once').toBe(0);
      expect(app.state.body.pending).toBe(0);
    });
  });

  test('BODY a body cut short after its first chunk is let go at once with 400, whether that chunk came with the headers or later', async () => {
    await serve({ bodyTimeoutMs: 60_000 }, async (port, app, _seen, seenAll) => {
      const key = app.keys.business;
      const ways: [string, (socket: ReturnType<typeof connect>) => Promise<void>][] = [
        ['first chunk with the headers', async (socket) => void socket.write(patchHead(key, B.length) + B.slice(0, 4))],
        [
          'first chunk in a later packet',
          async (socket) => {
            socket.write(patchHead(key, B.length));
            await sleep(30);
            socket.write(B.slice(0, 4));
          },
        ],
      ];
      for (const [name, send] of ways) {
        const before = seenAll.length;
        const socket = connect(port, '127.0.0.1');
        socket.on('error', ignore);
        await new Promise((resolve) => socket.once('connect', resolve));
        await send(socket);
        await within(1_000, `${name}: the request is being read`, () => seenAll.length > before && app.state.body.pending === 1);
        socket.destroy();
        const { res } = seenAll.at(-1)!;
        await within(
          1_000,
          `${name}: the body is let go (bodies held: ${app.state.body.pending})`,
          () => app.state.body.pending === 0 && res.headersSent,
        );
        expect(res.statusCode, name).toBe(400);
      }
    });
  });
});
