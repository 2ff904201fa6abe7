/**
 * Findings as data: what a check found, typed, never a string with a prefix parsed again later.
 * A finding names the requirement (its ledger id, `suites/requirements.yaml`, and the part of it
 * the check judges), its level, and the expected and observed values, so a failure message can be
 * rendered from it and a report can keep it as it is.
 */

/**
 * `fail`: a must-level requirement is broken. `warn`: a should-level finding. `gate`: a threshold
 * the user set was breached (the user's gate, apart from the spec's requirements).
 * `not-certified`: the harness could not judge the requirement (a cap, a missing prerequisite,
 * an untrusted certificate), never the server's failure. `note`: context for the report.
 */
export type FindingLevel = 'fail' | 'warn' | 'gate' | 'not-certified' | 'note';

export interface Finding {
  /** Ledger id, e.g. `LOAD-02`. */
  id: string;
  /** Which part of the requirement the check judged, e.g. `admission`; lets one run feed several tests. */
  part?: string;
  level: FindingLevel;
  /** What was found, in a sentence, without the id, the expected or the observed value. */
  message: string;
  /** What the requirement (or the user's threshold) expects. */
  expected: string;
  /** What the check observed. */
  observed: string;
  /** A curl command reproducing the exchange behind it, keys written as `$API_KEY`. */
  curl?: string;
}

/** What `finding` takes: a finding whose optional fields may be given as `undefined`. */
export type FindingFields = Omit<Finding, 'part' | 'curl'> & { part?: string | undefined; curl?: string | undefined };

/**
 * Makes a finding from named fields: `finding({ id, part?, level, message, expected, observed, curl? })`.
 * A `part` or `curl` given as `undefined` is left out, so the finding's JSON (its attachment,
 * the reports) holds only the fields that carry something.
 */
export function finding(fields: FindingFields): Finding {
  const { id, part, level, message, expected, observed, curl } = fields;
  return { id, ...(part !== undefined ? { part } : {}), level, message, expected, observed, ...(curl !== undefined ? { curl } : {}) };
}

/** One readable line: `LOAD-02 (admission) over-admission …: expected …; observed …`. */
export function formatFinding(f: Finding): string {
  const where = f.part ? `${f.id} (${f.part})` : f.id;
  const tag = f.level === 'fail' ? '' : `[${f.level}] `;
  return `${tag}${where} ${f.message}: expected ${f.expected}; observed ${f.observed}`;
}

/** The findings of `id` (and `part`, when given) at any of `levels`. */
export function findingsOf(findings: readonly Finding[], id: string, part?: string, levels?: readonly FindingLevel[]): Finding[] {
  return findings.filter(
    (f) => f.id === id && (part === undefined || f.part === part) && (levels === undefined || levels.includes(f.level)),
  );
}

/** Findings at `level`. */
export function atLevel(findings: readonly Finding[], level: FindingLevel): Finding[] {
  return findings.filter((f) => f.level === level);
}

/** True when any finding is a `fail` or a `gate` (the record's status). */
export function failed(findings: readonly Finding[]): boolean {
  return findings.some((f) => f.level === 'fail' || f.level === 'gate');
}

/** Applies `clean` (redaction) to every text field. */
export function mapFindingText(f: Finding, clean: (s: string) => string): Finding {
  return {
    ...f,
    message: clean(f.message),
    expected: clean(f.expected),
    observed: clean(f.observed),
    ...(f.curl !== undefined ? { curl: clean(f.curl) } : {}),
  };
}

/** Reads a finding back from its JSON (an attachment's body, a `met-finding` annotation); undefined when it holds none. */
export function parseFinding(description: string | undefined): Finding | undefined {
  if (!description) return undefined;
  try {
    const f = JSON.parse(description) as Finding;
    return f && typeof f.id === 'string' && typeof f.expected === 'string' && typeof f.observed === 'string' && typeof f.level === 'string'
      ? f
      : undefined;
  } catch {
    return undefined;
  }
}

/** The attachment (`application/json`, one `Finding`) that carries a finding to certify's reporter. */
export const FINDING_ATTACHMENT = 'finding';

/** What `attachFinding` writes into: Playwright's `TestInfo` (its public `attachments`). */
export interface FindingSink {
  attachments: { name: string; contentType: string; body?: Buffer }[];
}

/** Attaches `f` to the running test as data (`application/json`): certify's reporter reads it as it is. */
export function attachFinding(testInfo: FindingSink, f: Finding): void {
  testInfo.attachments.push({ name: FINDING_ATTACHMENT, contentType: 'application/json', body: Buffer.from(JSON.stringify(f)) });
}
