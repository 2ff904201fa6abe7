import fs from 'node:fs';
import YAML from 'yaml';
import type { Level, LedgerRequirement } from './verdict.ts';

/**
 * Reads the requirements ledger (`suites/requirements.yaml`, owned by the suites) into the shape
 * the verdict needs. Accepts a top-level list or a `requirements:` list; each entry has `id`,
 * `section`, `level`, a quote (`text`/`quote`/`statement`), optionally `title`, `excluded`
 * (a reason) and a stability marker (`experimental: true`, `stability: experimental|beta`,
 * or an `operation` that the spec marks experimental).
 */

const EXPERIMENTAL_OPERATIONS = new Set(['updateInventory']);

type Raw = Record<string, unknown>;

function str(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return v.trim();
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

function shortTitle(text: string, max = 120): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > max ? `${oneLine.slice(0, max - 1)}…` : oneLine;
}

function isExperimental(raw: Raw, section: string): boolean {
  if (raw.experimental === true || raw.beta === true) return true;
  const stability = str(raw.stability ?? raw.marker)?.toLowerCase();
  if (stability === 'experimental' || stability === 'beta') return true;
  const ops = [raw.operation, raw.operationId, ...(Array.isArray(raw.operations) ? raw.operations : [])].map(str);
  if (ops.some((o) => o && EXPERIMENTAL_OPERATIONS.has(o))) return true;
  return /\(experimental\)|\bupdate stock level\b/i.test(section);
}

/** Parses ledger YAML text. Throws with a clear message on an entry without id or with a bad level. */
export function parseLedger(text: string): LedgerRequirement[] {
  const doc = YAML.parse(text) as unknown;
  const list = Array.isArray(doc) ? doc : (doc as Raw | null)?.requirements;
  if (!Array.isArray(list)) throw new Error('ledger: expected a list of requirements (top level or under `requirements:`)');
  const seen = new Set<string>();
  return list.map((entry, i) => {
    const raw = (entry ?? {}) as Raw;
    const id = str(raw.id);
    if (!id) throw new Error(`ledger: entry #${i + 1} has no id`);
    if (seen.has(id)) throw new Error(`ledger: duplicate id ${id}`);
    seen.add(id);
    const level = (str(raw.level) ?? '').toLowerCase();
    if (level !== 'must' && level !== 'should' && level !== 'may') {
      throw new Error(`ledger: ${id} has level "${str(raw.level) ?? ''}", expected must, should or may`);
    }
    const section = str(raw.section) ?? 'Unsorted';
    const quote = str(raw.title) ?? str(raw.summary) ?? str(raw.text) ?? str(raw.quote) ?? str(raw.statement) ?? id;
    const excludedRaw = raw.excluded;
    const excluded = excludedRaw === true ? 'excluded in the ledger' : excludedRaw ? str(excludedRaw) : undefined;
    const req: LedgerRequirement = { id, section, title: shortTitle(quote), level: level as Level };
    if (excluded) req.excluded = excluded;
    if (isExperimental(raw, section)) req.experimental = true;
    return req;
  });
}

export function loadLedger(file: string): LedgerRequirement[] {
  return parseLedger(fs.readFileSync(file, 'utf8'));
}
