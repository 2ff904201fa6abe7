/**
 * The requirements ledger (`suites/requirements.yaml`) and its sync check with the tests: every
 * testable requirement has a test whose title starts with its id, every test title starts with a
 * known, testable id, every `requirement` annotation names one. Pure functions (the caller reads
 * the files and lists the tests).
 */
import { parse as parseYaml } from 'yaml';

export type Level = 'must' | 'should' | 'may';
export const LEVELS: readonly Level[] = ['must', 'should', 'may'];

export interface Requirement {
  id: string;
  section: string;
  quote: string;
  level: Level;
  source?: 'spec' | 'rfc' | 'rules';
  decision?: string;
  excluded?: string;
  experimental?: boolean;
}

/** A test as `playwright test --list --reporter=json` shows it. */
export interface ListedTest {
  title: string;
  file?: string;
  annotations: { type: string; description?: string }[];
}

export const ID_PATTERN = /^[A-Z]+-\d{2}$/;
const FIELDS = new Set(['id', 'section', 'quote', 'level', 'source', 'decision', 'excluded', 'experimental']);

/** Parses the ledger text; shape problems are returned by `checkLedger`, not thrown. */
export function parseLedger(text: string): unknown[] {
  const doc = parseYaml(text) as { requirements?: unknown } | null;
  if (!doc || !Array.isArray(doc.requirements)) throw new Error('the ledger has no `requirements:` list');
  return doc.requirements;
}

/** Problems of the ledger itself: ids (format, uniqueness), required fields, levels, unknown fields. */
export function checkLedger(entries: readonly unknown[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  entries.forEach((raw, i) => {
    if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
      problems.push(`entry ${i}: not a mapping`);
      return;
    }
    const e = raw as Record<string, unknown>;
    const where = typeof e.id === 'string' ? e.id : `entry ${i}`;
    if (typeof e.id !== 'string' || !ID_PATTERN.test(e.id)) problems.push(`${where}: id ${JSON.stringify(e.id)} is not AREA-NN`);
    else if (seen.has(e.id)) problems.push(`${where}: duplicate id`);
    else seen.add(e.id);
    for (const f of ['section', 'quote'] as const) {
      if (typeof e[f] !== 'string' || !(e[f] as string).trim()) problems.push(`${where}: ${f} missing or empty`);
    }
    if (!LEVELS.includes(e.level as Level)) problems.push(`${where}: level ${JSON.stringify(e.level)} is not must, should or may`);
    if (e.source !== undefined && !['spec', 'rfc', 'rules'].includes(e.source as string)) problems.push(`${where}: source ${JSON.stringify(e.source)} is not spec, rfc or rules`);
    for (const f of ['decision', 'excluded'] as const) {
      if (e[f] !== undefined && (typeof e[f] !== 'string' || !(e[f] as string).trim())) problems.push(`${where}: ${f} must be a non-empty reason`);
    }
    if (e.experimental !== undefined && typeof e.experimental !== 'boolean') problems.push(`${where}: experimental must be true or false`);
    for (const key of Object.keys(e)) if (!FIELDS.has(key)) problems.push(`${where}: unknown field ${key}`);
  });
  return problems;
}

/** The id a title starts with (`AUTH-02 invalid key …` → `AUTH-02`), or undefined. */
export function titleId(title: string): string | undefined {
  const m = /^([A-Z]+-\d{2})(?=\s)/.exec(title);
  return m?.[1];
}

/** Every problem of the ledger and of its sync with `tests`, both ways; empty when in sync. */
export function checkLedgerSync(entries: readonly unknown[], tests: readonly ListedTest[]): string[] {
  const problems = checkLedger(entries);
  const byId = new Map<string, Record<string, unknown>>();
  for (const e of entries) {
    if (e && typeof e === 'object' && typeof (e as Record<string, unknown>).id === 'string') {
      byId.set((e as Record<string, string>).id, e as Record<string, unknown>);
    }
  }
  const covered = new Set<string>();
  for (const t of tests) {
    const where = `test "${t.title}"${t.file ? ` (${t.file})` : ''}`;
    const id = titleId(t.title);
    if (!id) problems.push(`${where}: title does not start with a requirement id`);
    else if (!byId.has(id)) problems.push(`${where}: ${id} is not in the ledger`);
    else if (byId.get(id)!.excluded !== undefined) problems.push(`${where}: ${id} is excluded in the ledger, yet tested`);
    else covered.add(id);
    for (const a of t.annotations) {
      if (a.type !== 'requirement') continue;
      const rid = a.description ?? '';
      if (!byId.has(rid)) problems.push(`${where}: requirement annotation ${JSON.stringify(rid)} is not in the ledger`);
      else if (byId.get(rid)!.excluded !== undefined) problems.push(`${where}: requirement annotation ${rid} is excluded in the ledger`);
    }
  }
  for (const [id, e] of byId) {
    if (e.excluded === undefined && !covered.has(id)) problems.push(`${id}: no test title starts with it (add a test or an excluded: reason)`);
  }
  return problems;
}

/** Flattens the JSON of `playwright test --list --reporter=json` into tests (one per spec). */
export function listedTests(report: unknown): ListedTest[] {
  const out: ListedTest[] = [];
  type Suite = { file?: string; specs?: { title: string; file?: string; tests?: { annotations?: ListedTest['annotations'] }[] }[]; suites?: Suite[] };
  const walk = (s: Suite) => {
    for (const spec of s.specs ?? []) {
      const annotations = spec.tests?.[0]?.annotations ?? [];
      out.push({ title: spec.title, file: spec.file ?? s.file, annotations });
    }
    for (const child of s.suites ?? []) walk(child);
  };
  for (const s of (report as { suites?: Suite[] }).suites ?? []) walk(s);
  return out;
}
