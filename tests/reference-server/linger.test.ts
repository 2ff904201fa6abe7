/**
 * The close after a last response (RFC 9112 §9.6): a body refused on its declared length (413,
 * `Connection: close`) is answered before it is read; the server half-closes and reads what the
 * client still sends, so the client reads its 413 and a clean close, never a reset (a front door
 * that met a reset while it sent the body answered its own 502).
 */
import { connect } from 'node:net';
import { test, expect } from '../test.ts';
import { origin, withServer } from './helpers.ts';

/** Sends `head`, then `pieces` 20 ms apart whatever comes back (as a proxy sends a body it holds), ends, and reports the status line read and how the connection ended. */
function sendSlowly(url: string, head: string, pieces: string[]): Promise<{ status: string | undefined; ended: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    let received = '';
    let ended: string | undefined;
    const socket = connect({ port: Number(port), host: hostname, allowHalfOpen: true }, async () => {
      socket.write(head);
      for (const piece of pieces) {
        await new Promise((r) => setTimeout(r, 20));
        if (socket.destroyed) return;
        socket.write(piece);
      }
      socket.end();
    });
    const timer = setTimeout(() => socket.destroy(new Error('still open')), 10_000);
    socket.on('data', (c: Buffer) => (received += c.toString('latin1')));
    socket.on('error', (e: NodeJS.ErrnoException) => (ended ??= e.code ?? e.message));
    socket.on('end', () => {
      if (socket.writableEnded) socket.destroy();
    });
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ status: received.match(/^HTTP\/1\.1 \d{3}/)?.[0], ended: ended ?? 'closed' });
    });
  });
}

test('LINGER a body refused on its declared length gets its 413, then a clean close: the rest of the body is read, never reset', async () => {
  await withServer({ maxBodyBytes: 1_000 }, async (server) => {
    const key = server.keys.business;
    const pieces = Array.from({ length: 10 }, () => 'a'.repeat(1_000));
    const head = `PATCH /v1/inventory/1 HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n`;
    const seen = await sendSlowly(origin(server), head, pieces);
    expect(seen.status).toBe('HTTP/1.1 413');
    expect(seen.ended, 'the connection ended with a close, not a reset').toBe('closed');
  });
});
