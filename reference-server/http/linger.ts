/**
 * Closing a connection after its last response (RFC 9112 §9.6, tear-down): the server half-closes,
 * then reads and drops what the client still sends until the client closes too, for at most
 * `LINGER_MS`. A socket closed with bytes unread sends a reset instead of a close, and the client
 * may lose the answer it had not read yet; a front door (nginx) then answers its own 502. That is
 * the 413 to a body refused on its declared length: it is sent before the body is read.
 */
import type { Socket } from 'node:net';

/** How long a closing connection reads what the client still sends (nginx's `lingering_timeout` is 5 s). */
export const LINGER_MS = 2_000;

/** node's server closes a connection after a last response with `destroySoon`: on this socket, it lingers. */
export function lingerOnClose(socket: Socket): void {
  socket.destroySoon = lingeringClose;
}

function lingeringClose(this: Socket): void {
  if (this.destroyed) return;
  if (this.writable) this.end();
  const close = () => this.destroy();
  const timer = setTimeout(close, LINGER_MS);
  timer.unref();
  this.once('end', close);
  this.once('close', () => clearTimeout(timer));
  // node's parser reads the socket and drops the rest of a body nobody read; a paused one is resumed.
  this.resume();
}
