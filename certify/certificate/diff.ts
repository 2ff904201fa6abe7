/**
 * The requirement-level difference between two certificates (two runs, two releases):
 * `inventory-conformance diff <old> <new>` and `certify --no-regression-from`. Pure.
 *
 * - regressed: pass → fail or warn, warn → fail;
 * - fixed: fail → pass or warn, warn → pass;
 * - added / removed: in one certificate only;
 * - otherwise changed: to or from skipped (not certified, excluded);
 * and what changed around them: the suite, spec, interface and ledger digests, the target, the profile.
 */
import type { Level } from '../../core/ledger.ts';
import type { RequirementStatus } from '../../core/results.ts';

/** What the difference needs of a certificate (a parsed certificate.json). */
export interface ComparableCertificate {
  generatedAt: string;
  target: unknown;
  profile: string;
  results: { requirements: readonly { id: string; level: Level; status: RequirementStatus; section?: string; quote?: string }[] };
  digests: Partial<Record<'spec' | 'interface' | 'ledger' | 'suite' | 'certificate', string>>;
}

export interface RequirementChange {
  id: string;
  level: Level;
  before?: RequirementStatus;
  now?: RequirementStatus;
  quote?: string;
}

export interface CertificateDiff {
  old: { generatedAt: string; certificate?: string };
  new: { generatedAt: string; certificate?: string };
  regressed: RequirementChange[];
  fixed: RequirementChange[];
  added: RequirementChange[];
  removed: RequirementChange[];
  otherChanges: RequirementChange[];
  /** Digests that differ: `suite`, `spec`, `interface`, `ledger`, each with both values. */
  digests: { name: string; before?: string; now?: string }[];
  target?: { before: unknown; now: unknown };
  profile?: { before: string; now: string };
  /** Must-level requirements that regressed: `diff` exits 1 when there is one. */
  mustRegressions: string[];
}

const RANK: Partial<Record<RequirementStatus, number>> = { pass: 2, warn: 1, fail: 0 };

/** The target as compared: what identifies it, not the keys' "given" notes or the reference server's port. */
function targetIdentity(target: unknown): unknown {
  if (!target || typeof target !== 'object') return target;
  const t = target as Record<string, unknown>;
  if (t.kind === 'reference') return { kind: 'reference' };
  return { kind: t.kind, baseUrl: t.baseUrl, apiUrl: t.apiUrl ?? null, apiPlan: t.apiPlan ?? null };
}

export function diffCertificates(before: ComparableCertificate, now: ComparableCertificate): CertificateDiff {
  const old = new Map(before.results.requirements.map((r) => [r.id, r]));
  const cur = new Map(now.results.requirements.map((r) => [r.id, r]));
  const out: CertificateDiff = {
    old: { generatedAt: before.generatedAt, ...(before.digests.certificate ? { certificate: before.digests.certificate } : {}) },
    new: { generatedAt: now.generatedAt, ...(now.digests.certificate ? { certificate: now.digests.certificate } : {}) },
    regressed: [],
    fixed: [],
    added: [],
    removed: [],
    otherChanges: [],
    digests: [],
    mustRegressions: [],
  };
  for (const [id, r] of cur) {
    const o = old.get(id);
    const change: RequirementChange = {
      id,
      level: r.level,
      ...(o ? { before: o.status } : {}),
      now: r.status,
      ...(r.quote ? { quote: r.quote } : {}),
    };
    if (!o) out.added.push(change);
    else if (o.status === r.status) continue;
    else if (RANK[o.status] !== undefined && RANK[r.status] !== undefined)
      (RANK[r.status]! < RANK[o.status]! ? out.regressed : out.fixed).push(change);
    else out.otherChanges.push(change);
  }
  for (const [id, o] of old)
    if (!cur.has(id)) out.removed.push({ id, level: o.level, before: o.status, ...(o.quote ? { quote: o.quote } : {}) });
  for (const name of ['suite', 'spec', 'interface', 'ledger'] as const) {
    if (before.digests[name] !== now.digests[name])
      out.digests.push({
        name,
        ...(before.digests[name] ? { before: before.digests[name] } : {}),
        ...(now.digests[name] ? { now: now.digests[name] } : {}),
      });
  }
  const [tb, tn] = [targetIdentity(before.target), targetIdentity(now.target)];
  if (JSON.stringify(tb) !== JSON.stringify(tn)) out.target = { before: tb, now: tn };
  if (before.profile !== now.profile) out.profile = { before: before.profile, now: now.profile };
  out.mustRegressions = out.regressed.filter((c) => c.level === 'must').map((c) => c.id);
  return out;
}

function targetText(t: unknown): string {
  if (!t || typeof t !== 'object') return String(t);
  const x = t as Record<string, unknown>;
  return x.kind === 'reference'
    ? 'the bundled reference server'
    : `${String(x.baseUrl)}${x.apiUrl ? ` (messages ${String(x.apiUrl)})` : ''}${x.apiPlan ? `, plan ${String(x.apiPlan)}` : ''}`;
}

/** The difference in plain lines (the `diff` command's output). */
export function renderDiff(d: CertificateDiff): string {
  const lines = [`Compared: ${d.old.generatedAt} → ${d.new.generatedAt}`];
  const list = (title: string, changes: RequirementChange[]) => {
    if (!changes.length) return;
    lines.push('', `${title} (${changes.length}):`);
    for (const c of changes)
      lines.push(
        `  ${c.id} (${c.level}) ${c.before ?? '—'} → ${c.now ?? '—'}${c.quote ? `  ${c.quote.replace(/\s+/g, ' ').slice(0, 100)}` : ''}`,
      );
  };
  list('Regressed', d.regressed);
  list('Fixed', d.fixed);
  list('New requirements', d.added);
  list('Removed requirements', d.removed);
  list('Otherwise changed', d.otherChanges);
  if (!d.regressed.length && !d.fixed.length && !d.added.length && !d.removed.length && !d.otherChanges.length)
    lines.push('', 'No requirement changed status.');
  if (d.digests.length || d.target || d.profile) lines.push('', 'Around the requirements:');
  for (const g of d.digests)
    lines.push(`  ${g.name} digest changed: ${(g.before ?? '(none)').slice(0, 16)}… → ${(g.now ?? '(none)').slice(0, 16)}…`);
  if (d.target) lines.push(`  target changed: ${targetText(d.target.before)} → ${targetText(d.target.now)}`);
  if (d.profile) lines.push(`  profile changed: ${d.profile.before} → ${d.profile.now}`);
  lines.push(
    '',
    d.mustRegressions.length
      ? `diff: REGRESSED — must-level: ${d.mustRegressions.join(', ')} (exit 1)`
      : 'diff: no must-level requirement regressed (exit 0)',
    '',
  );
  return lines.join('\n');
}
