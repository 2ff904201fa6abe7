import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { test, expect } from '../test.ts';
import { startFaultProxy } from '../../faults/proxy.ts';
import { REPO_ROOT } from '../../faults/harness.ts';
import { parseRaw, sleep } from './helpers.ts';
import { B, exchange, ignore, patchHead, serve, statuses, within } from './socket-exchange.ts';

/** One exchange over a raw socket: what is written (bytes or pauses in ms) and the statuses expected, within `deadlineMs`. */
interface SocketCase {
  name: string;
  steps: (key: string) => (string | number)[];
  expect: number[];
}

/** A body over the default 64 KiB limit, and a valid one of about 40 KB (other members are ignored). */
const BIG = `{"quantity":7,"pad":"${'x'.repeat(70_000)}"}`;
const PADDED = `{"quantity":7,"pad":"${'x'.repeat(40_000)}"}`;
const SOCKET_CASES: SocketCase[] = [
  { name: 'a body with its headers', steps: (k) => [patchHead(k, B.length) + B], expect: [200] },
  { name: 'Connection: close', steps: (k) => [patchHead(k, B.length, 'Connection: close\r\n') + B], expect: [200] },
  { name: 'a body in pieces', steps: (k) => [patchHead(k, B.length), 20, B.slice(0, 3), 20, B.slice(3, 9), 20, B.slice(9)], expect: [200] },
  {
    name: 'Connection: close and a body in pieces',
    steps: (k) => [patchHead(k, B.length, 'Connection: close\r\n'), 20, B.slice(0, 5), 20, B.slice(5)],
    expect: [200],
  },
  { name: 'three pipelined bodies', steps: (k) => [(patchHead(k, B.length) + B).repeat(3)], expect: [200, 200, 200] },
  {
    name: 'a pipelined body arriving in pieces',
    steps: (k) => [patchHead(k, B.length) + B + patchHead(k, B.length) + B.slice(0, 4), 30, B.slice(4)],
    expect: [200, 200],
  },
  {
    name: 'a chunked body in pieces',
    steps: (k) => [
      patchHead(k, 'chunked'),
      20,
      `5\r\n${B.slice(0, 5)}\r\n`,
      20,
      `${(B.length - 5).toString(16)}\r\n${B.slice(5)}\r\n`,
      20,
      '0\r\n\r\n',
    ],
    expect: [200],
  },
  { name: 'Expect: 100-continue, then the body', steps: (k) => [patchHead(k, B.length, 'Expect: 100-continue\r\n'), 30, B], expect: [200] },
  {
    name: 'five bodies in turn on one connection',
    steps: (k) => Array.from({ length: 5 }, () => [patchHead(k, B.length) + B, 20]).flat(),
    expect: [200, 200, 200, 200, 200],
  },
  { name: 'a stalled body (408 at its deadline)', steps: (k) => [patchHead(k, B.length) + B.slice(0, 4)], expect: [408] },
  {
    name: 'a declared Content-Length larger than the body that arrives (408 at its deadline)',
    steps: (k) => [patchHead(k, B.length + 6) + B],
    expect: [408],
  },
  {
    name: 'a chunked body in one packet',
    steps: (k) => [`${patchHead(k, 'chunked')}${B.length.toString(16)}\r\n${B}\r\n0\r\n\r\n`],
    expect: [200],
  },
  {
    name: 'a chunked body in two chunks of one packet',
    steps: (k) => [`${patchHead(k, 'chunked')}5\r\n${B.slice(0, 5)}\r\n${(B.length - 5).toString(16)}\r\n${B.slice(5)}\r\n0\r\n\r\n`],
    expect: [200],
  },
  {
    name: 'a chunked body over the size limit in one packet',
    steps: (k) => [`${patchHead(k, 'chunked')}${BIG.length.toString(16)}\r\n${BIG}\r\n0\r\n\r\n`],
    expect: [413],
  },
  {
    name: 'a chunked body over the size limit in pieces',
    steps: (k) => [
      patchHead(k, 'chunked'),
      20,
      `${BIG.length.toString(16)}\r\n${BIG.slice(0, 1000)}`,
      20,
      `${BIG.slice(1000)}\r\n0\r\n\r\n`,
    ],
    expect: [413],
  },
  {
    name: "a 40 KB body with its headers (beyond the stream's buffer mark)",
    steps: (k) => [patchHead(k, PADDED.length) + PADDED],
    expect: [200],
  },
  { name: 'Content-Length: 0 (a body required: 400)', steps: (k) => [patchHead(k, 0)], expect: [400] },
  {
    name: 'an invalid body with its headers (400), then a valid one on the same connection',
    steps: (k) => [`${patchHead(k, 5)}{"qua${patchHead(k, B.length)}${B}`],
    expect: [400, 200],
  },
];

test.describe('reference server: body reader over sockets', () => {
  // A second: bodies sent in pieces 20 ms apart stay well within it on a busy runner.
  const bodyTimeoutMs = 1000;

  test('BODY every body of the table is answered within its own deadline, as is a quick body beside a stalled and a cut one', async () => {
    await serve({ bodyTimeoutMs }, async (port, app) => {
      const key = app.keys.business;
      for (const c of SOCKET_CASES) {
        const raw = await exchange(port, c.steps(key), c.expect.length, bodyTimeoutMs + 1_500).catch(
          (e: Error) => `${c.name}: ${e.message}`,
        );
        expect(statuses(raw), `${c.name}: ${raw.slice(0, 300)}`).toEqual(c.expect);
      }
      const stalled = exchange(port, [patchHead(key, B.length) + B.slice(0, 4)], 1, bodyTimeoutMs + 1_500);
      const cut = connect(port, '127.0.0.1');
      cut.on('error', ignore);
      cut.write(patchHead(key, B.length) + B.slice(0, 4));
      await sleep(50);
      cut.destroy();
      expect(statuses(await exchange(port, [patchHead(key, B.length) + B], 1, 1_000)), 'a quick body beside a stalled one').toEqual([200]);
      await within(1_000, 'the cut body is let go', () => app.state.body.pending === 1);
      expect(statuses(await stalled)).toEqual([408]);
      expect(app.state.body.pending).toBe(0);
    });
  });

  test('BODY after the timer was armed for a body already answered, a later stalled body gets its 408 at its own deadline', async () => {
    await serve({ bodyTimeoutMs }, async (port, app) => {
      const key = app.keys.business;
      expect(statuses(await exchange(port, [patchHead(key, B.length) + B], 1, 1_000))).toEqual([200]);
      await sleep(bodyTimeoutMs * 0.75);
      const sentAt = Date.now();
      const raw = await exchange(port, [patchHead(key, B.length) + B.slice(0, 4)], 1, bodyTimeoutMs + 1_500);
      const answeredAfter = Date.now() - sentAt;
      const reply = parseRaw(raw);
      expect(reply.status, raw).toBe(408);
      expect(reply.headers.connection).toBe('close');
      expect(answeredAfter, 'not before its own deadline').toBeGreaterThanOrEqual(bodyTimeoutMs - 5);
    });
  });

  test('BODY PATCH bodies through an https proxy that closes every connection (staging conditions) are all answered', async () => {
    const tlsDir = join(REPO_ROOT, 'tests', 'fixtures', 'tls');
    await serve({ bodyTimeoutMs }, async (port, app) => {
      const proxy = await startFaultProxy({
        upstream: `http://127.0.0.1:${port}`,
        tls: { cert: readFileSync(join(tlsDir, 'server.pem')), key: readFileSync(join(tlsDir, 'server-key.pem')) },
        connectionClose: true,
        fault: { delayMs: () => 5 },
      });
      try {
        const proxyPort = Number(new URL(proxy.url).port);
        const ca = readFileSync(join(tlsDir, 'ca.pem'));
        const one = (steps: (string | number)[]): Promise<string> =>
          new Promise((resolve, reject) => {
            const socket = tlsConnect({ port: proxyPort, host: '127.0.0.1', ca, servername: 'localhost' });
            let got = '';
            const timer = setTimeout(() => {
              socket.destroy();
              reject(new Error(`no answer through the proxy within 2 s; got ${JSON.stringify(got)}`));
            }, 2_000);
            socket.on('data', (c: Buffer) => (got += c.toString('latin1')));
            socket.on('error', ignore);
            socket.on('close', () => {
              clearTimeout(timer);
              resolve(got);
            });
            socket.once(
              'secureConnect',
              () =>
                void (async () => {
                  for (const step of steps) {
                    if (typeof step === 'number') await sleep(step);
                    else socket.write(step);
                  }
                })(),
            );
          });
        const key = app.keys.business;
        const cases = [
          [patchHead(key, B.length) + B],
          [patchHead(key, B.length, 'Connection: close\r\n'), 20, B.slice(0, 6), 20, B.slice(6)],
        ];
        const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => one(cases[i % 2])));
        for (const raw of replies) expect(statuses(raw), raw.slice(0, 200)).toEqual([200]);
      } finally {
        await proxy.close();
      }
    });
  });
});
