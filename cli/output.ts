/**
 * The CLI's console output. On a terminal it is passed through; anywhere else (a CI log, a pipe,
 * a file) control characters are removed: ANSI colour and cursor sequences, carriage returns that
 * overwrite a line, and other C0 controls, so every line reads as plain text.
 */

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-?]*[ -/]*[@-~]|\u001b\][^\u0007]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;
// eslint-disable-next-line no-control-regex
const C0 = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** Plain text: no ANSI sequences, `\r\n` as `\n`, a lone `\r` as a line break, no other control character. */
export function plain(text: string): string {
  return text.replace(ANSI, '').replace(/\r\n/g, '\n').replace(/\r/g, '\n').replace(C0, '');
}

export interface Sink {
  write(text: string): void;
}

/** A writer for `stream`: plain unless the stream is a terminal. */
export function writerFor(stream: { write(text: string): unknown; isTTY?: boolean }): (text: string) => void {
  return stream.isTTY ? (t) => void stream.write(t) : (t) => void stream.write(plain(t));
}
