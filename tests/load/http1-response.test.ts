/**
 * The load pools' response parser (core/http1-response.ts) frames a body as RFC 9112 §6.3 says,
 * whatever the split of the bytes on the wire, and refuses what it cannot frame.
 */
import { test, expect } from '../test.ts';
import { ResponseParser } from '../../core/http1-response.ts';

/** Feeds `text` split into pieces of `size` bytes; the first complete response, if any. */
function parse(text: string, size = text.length, maxBodyBytes = 1024, bodyless = false) {
  const parser = new ResponseParser(maxBodyBytes);
  parser.reset(bodyless);
  const bytes = Buffer.from(text, 'latin1');
  for (let at = 0; at < bytes.length; at += size) {
    const done = parser.feed(bytes.subarray(at, at + size));
    if (done) return { ...done, text: Buffer.concat(done.body).toString('utf8') };
  }
  const end = parser.end();
  return end ? { ...end, text: Buffer.concat(end.body).toString('utf8'), atClose: true } : undefined;
}

const LENGTH = 'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\nX-A: 1\r\nx-a: 2\r\n\r\n{"ok":true}';
const CHUNKED =
  'HTTP/1.1 429 Too Many Requests\r\nTransfer-Encoding: chunked\r\nRetry-After: 3\r\n\r\n4;ext=1\r\n{"ok\r\n7\r\n":true}\r\n0\r\nX-Trailer: t\r\n\r\n';

for (const size of [1, 2, 7, 1000]) {
  test(`Content-Length and chunked bodies read whole, in pieces of ${size} byte(s)`, () => {
    const a = parse(LENGTH, size);
    expect(a).toMatchObject({ status: 200, text: '{"ok":true}', closes: false });
    expect(a?.headers).toMatchObject({ 'content-type': 'application/json', 'x-a': '1, 2' });
    const b = parse(CHUNKED, size);
    expect(b).toMatchObject({ status: 429, text: '{"ok":true}', closes: false });
    expect(b?.headers['retry-after']).toBe('3');
  });
}

test('no body for 204, 304 and HEAD; an interim 100 is skipped; no length reads to the close', () => {
  expect(parse('HTTP/1.1 204 No Content\r\nX: y\r\n\r\n')).toMatchObject({ status: 204, text: '' });
  expect(parse('HTTP/1.1 304 Not Modified\r\nContent-Length: 40\r\n\r\n')).toMatchObject({ status: 304, text: '' });
  expect(parse('HTTP/1.1 200 OK\r\nContent-Length: 40\r\n\r\n', 5, 1024, true)).toMatchObject({ status: 200, text: '' });
  expect(parse(`HTTP/1.1 100 Continue\r\n\r\n${LENGTH}`, 3)).toMatchObject({ status: 200, text: '{"ok":true}' });
  const toClose = parse('HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end', 4);
  expect(toClose).toMatchObject({ status: 200, text: 'until the end', closes: true, atClose: true });
  expect(parse('HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi')).toMatchObject({ text: 'hi', closes: true });
});

test('what cannot be framed is refused: a bad status line, a bad or conflicting length, a body past the cap', () => {
  expect(() => parse('HTTP/2 200\r\n\r\n')).toThrow(/status line/);
  expect(() => parse('HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\nhi')).toThrow(/Content-Length/);
  expect(() => parse('HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n')).toThrow(/Content-Length/);
  expect(() => parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n')).toThrow(/chunk size/);
  expect(() => parse('HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\n', 100, 10)).toThrow(RangeError);
  expect(() => parse('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n14\r\n01234567890123456789\r\n0\r\n\r\n', 3, 10)).toThrow(
    RangeError,
  );
});

test('bytes read into one reused buffer: what the parser keeps between reads is its own copy', () => {
  const parser = new ResponseParser(1024);
  const buffer = Buffer.alloc(64);
  for (const text of [LENGTH, CHUNKED]) {
    parser.reset();
    const bytes = Buffer.from(text, 'latin1');
    let done: ReturnType<ResponseParser['feed']>;
    for (let at = 0; at < bytes.length && !done; at += 5) {
      buffer.fill('#');
      const length = bytes.copy(buffer, 0, at, at + 5);
      done = parser.feed(buffer, length);
    }
    expect(Buffer.concat(done!.body).toString('utf8')).toBe('{"ok":true}');
  }
});

test('status lines and chunk sizes are read as RFC 9112 writes them, and nothing else', () => {
  expect(parse('HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n')).toMatchObject({ status: 200 });
  expect(() => parse('HTTP/1.1 2000 OK\r\n\r\n')).toThrow(/status line/);
  expect(() => parse('HTTP/1.1 099 OK\r\n\r\n')).toThrow(/status line/);
  expect(() => parse('HTTP/1.2 200 OK\r\n\r\n')).toThrow(/status line/);
  const chunked = (size: string) => parse(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n${size}\r\nab\r\n0\r\n\r\n`);
  expect(chunked('2')).toMatchObject({ text: 'ab' });
  expect(chunked('0002 ;name=value')).toMatchObject({ text: 'ab' });
  expect(() => chunked('2x')).toThrow(/chunk size/);
  expect(() => chunked('0000000000002')).toThrow(/chunk size/);
});

/** A deterministic generator (mulberry32) for the generated responses below. */
function randomOf(seed: number): (n: number) => number {
  let a = seed;
  return (n) => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return Math.floor((((t ^ (t >>> 14)) >>> 0) / 4294967296) * n);
  };
}

/** What one parser makes of `bytes` fed in pieces of `size` through one reused buffer (or whole), as text. */
function outcome(parser: ResponseParser, bytes: Buffer, size: number, reused: boolean, bodyless: boolean): string {
  parser.reset(bodyless);
  const buffer = Buffer.alloc(64);
  const show = (r: ReturnType<ResponseParser['feed']>, how: string) =>
    `${how} ${JSON.stringify({ ...r, body: Buffer.concat(r!.body).toString('latin1') })}`;
  try {
    for (let at = 0; at < bytes.length; at += size) {
      const piece = bytes.subarray(at, at + size);
      buffer.fill(13);
      const done = reused ? parser.feed(buffer, piece.copy(buffer)) : parser.feed(piece);
      if (done) return show(done, 'complete');
    }
    const end = parser.end();
    return end ? show(end, 'at close') : 'incomplete';
  } catch (error) {
    return `${(error as Error).constructor.name}: ${(error as Error).message}`;
  }
}

test('generated responses read the same whole, in pieces, and through one reused buffer by a parser that read others before', () => {
  const random = randomOf(20261202);
  const pick = <T>(items: readonly T[]) => items[random(items.length)]!;
  const statuses = [
    'HTTP/1.1 200 OK',
    'HTTP/1.0 200 OK',
    'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK',
    'HTTP/1.1 204 N',
    'HTTP/1.1 2000',
  ];
  const fields = ['Content-Length: 5', 'content-length: 5, 5', 'Content-Length: 5, 6', 'Transfer-Encoding: chunked', 'Connection: close'];
  const more = ['X-A: 1', 'x-a: 2', ' folded', 'Set-Cookie: a', 'cookie: b', 'Retry-After: 1', 'retry-after: 2', 'bad line'];
  const bodies = ['5\r\nabcde\r\n', '0\r\n\r\n', '0\r\nX-T: t\r\n\r\n', '3;e=1\r\nabc\r\n', 'abcde', 'hi', 'zz\r\n', '\u00e9\u00ff'];
  const shared = new ResponseParser(20);
  for (let i = 0; i < 3000; i++) {
    const head = [pick(statuses), ...Array.from({ length: random(4) }, () => pick(random(2) ? fields : more))];
    const text = `${head.join('\r\n')}\r\n\r\n${Array.from({ length: random(4) }, () => pick(bodies)).join('')}`;
    const bytes = Buffer.from(text, 'latin1');
    const size = 1 + random(Math.min(64, bytes.length));
    const bodyless = random(10) === 0;
    const whole = outcome(new ResponseParser(20), bytes, bytes.length, false, bodyless);
    expect(outcome(new ResponseParser(20), bytes, size, false, bodyless), text).toBe(whole);
    expect(outcome(shared, bytes, size, true, bodyless), text).toBe(whole);
  }
});
