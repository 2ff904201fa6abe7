/**
 * A failure in plain words, for the console, `conformance.md` and the certificate alike: what was
 * judged, what the requirement expects, what was observed, and a curl reproduction of the
 * exchange (keys written as `$API_KEY`). Typed findings are used as they are; a failure that wrote
 * none (an unexpected error) is read from its message with any assertion diff turned into words.
 * Pure.
 */
import type { EvidenceEntry } from './verdict.ts';

export interface FailureText {
  /** The test that failed. */
  test: string;
  /** What was judged (`GET /v1/inventory`, a case class, a window), without the id. */
  what: string;
  expected?: string;
  observed?: string;
  /** A curl command reproducing the exchange, keys as `$API_KEY`. */
  curl?: string;
}

const FAILED_OUTCOMES = new Set(['failed', 'flaky', 'interrupted']);

/** `expect(received).toEqual(expected) // deep equality`, `Expected: …`, `Received: …`, `- Expected  - 1`, code frames: a diff, not words. */
const DIFF_LINE = /^\s*(expect\(|Expected\b|Received\b|[-+] (Expected|Received)|Call log:|at\s|\d+\s*\||>\s*\d+\s*\|)/;

/**
 * An error message without its assertion diff: every line before the diff, whole (never cut), plus
 * the diff's `Expected:` and `Received:` values when the message itself names none.
 */
export function plainError(message: string): { what: string; expected?: string; observed?: string } {
  const lines = message.replace(/^Error:\s*/, '').split('\n');
  const head: string[] = [];
  for (const line of lines) {
    if (DIFF_LINE.test(line) || (line.trim() === '' && head.length)) break;
    if (line.trim()) head.push(line.trim());
  }
  const what = head
    .join(' ')
    .replace(/:\s*(expected .*)?observed( these [a-z ]+)?$/i, '')
    .trim();
  const value = (label: string) =>
    lines
      .find((l) => new RegExp(`^\\s*${label}:`).test(l))
      ?.replace(new RegExp(`^\\s*${label}:\\s*`), '')
      .trim();
  const expected = value('Expected');
  const observed = value('Received');
  return {
    what: what || 'the check failed',
    ...(expected !== undefined ? { expected } : {}),
    ...(observed !== undefined ? { observed } : {}),
  };
}

/** Every failure (and, with `warnings`, every warned finding) of a requirement's evidence, in plain words. */
export function failureTexts(evidence: readonly EvidenceEntry[], options: { warnings?: boolean } = {}): FailureText[] {
  const out: FailureText[] = [];
  for (const e of evidence) {
    const failed = FAILED_OUTCOMES.has(e.outcome);
    const levels = failed ? ['fail', 'gate'] : options.warnings ? ['warn'] : [];
    const findings = (e.findings ?? []).filter((f) => levels.includes(f.level));
    for (const f of findings) {
      out.push({
        test: e.test,
        what: `${f.part ? `(${f.part}) ` : ''}${f.message}`,
        expected: f.expected,
        observed: f.observed,
        ...((f.curl ?? e.curl) ? { curl: f.curl ?? e.curl } : {}),
      });
    }
    if (failed && findings.length === 0) {
      const plain = plainError(e.errors?.[0] ?? 'failed without a message');
      out.push({ test: e.test, ...plain, ...(e.curl ? { curl: e.curl } : {}) });
    }
  }
  return out;
}

/** `what: expected …; observed …` on one line (whole, never cut). */
export function failureLine(f: FailureText): string {
  const parts = [f.what];
  if (f.expected !== undefined) parts.push(`expected ${f.expected}`);
  if (f.observed !== undefined) parts.push(`observed ${f.observed}`);
  return parts.length === 1 ? f.what : `${f.what}: ${parts.slice(1).join('; ')}`;
}
