/**
 * Builds the certificate from the ConformanceReport, the ledger (quote, source, decision of each
 * requirement), the load figures and the gate. Pure: the caller reads the files and computes the
 * file digests (index.ts).
 */
import YAML from 'yaml';
import type { BaselineOutcome } from '../baseline.ts';
import type { ConformanceReport } from '../verdict.ts';
import { digestOf, manifestDigest } from './digest.ts';
import { diffCertificates, type CertificateDiff, type ComparableCertificate } from './diff.ts';
import {
  CERTIFICATE_FORMAT,
  type Certificate,
  type CertificateResults,
  type CertifiedRequirement,
  type GateResult,
  type LoadChart,
} from './types.ts';

export interface LedgerDetails {
  quote?: string;
  /** The header of the spec's table when the quote is one of its rows (quotes.ts). */
  quoteHeader?: string[];
  source?: string;
  decision?: string;
  excluded?: string;
}

export interface ParsedLedger {
  byId: Map<string, LedgerDetails>;
  /** The spec's digest if the ledger records one (`spec: { sha256 }`, `specDigest`, `spec_sha256`). */
  specDigest?: string;
  specTitle?: string;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

/** Reads what the certificate quotes from the ledger YAML; tolerant of fields it does not know. */
export function readLedgerDetails(ledgerText: string): ParsedLedger {
  const doc = YAML.parse(ledgerText) as Record<string, unknown> | unknown[] | null;
  const list = Array.isArray(doc) ? doc : Array.isArray(doc?.requirements) ? (doc!.requirements as unknown[]) : [];
  const byId = new Map<string, LedgerDetails>();
  for (const raw of list) {
    const e = (raw ?? {}) as Record<string, unknown>;
    const id = text(e.id);
    if (!id) continue;
    const details: LedgerDetails = {};
    const quote = text(e.quote) ?? text(e.text) ?? text(e.statement);
    if (quote) details.quote = quote;
    details.source = text(e.source) ?? 'spec';
    const decision = text(e.decision);
    if (decision) details.decision = decision;
    const excluded = text(e.excluded);
    if (excluded) details.excluded = excluded;
    byId.set(id, details);
  }
  const out: ParsedLedger = { byId };
  if (doc && !Array.isArray(doc)) {
    const spec = (doc.spec ?? {}) as Record<string, unknown>;
    const recorded = text(spec.sha256) ?? text(spec.digest) ?? text(doc.specDigest) ?? text(doc.spec_sha256);
    if (recorded) out.specDigest = recorded.replace(/^sha256:/, '');
    const title = text(spec.title) ?? text(spec.file);
    if (title) out.specTitle = title;
  }
  return out;
}

/**
 * The windows a chart draws: with bursts that name the windows they landed in (`resets`), only
 * those windows, labelled by their burst (probe-only and recovery windows are not what ran);
 * otherwise every window.
 */
export function chartedWindows(windows: unknown[], bursts: unknown): LoadChart['windows'] {
  const byReset = new Map<string, string>();
  if (Array.isArray(bursts)) {
    bursts.forEach((b: unknown, i: number) => {
      const resets = (b as { resets?: unknown } | null)?.resets;
      if (Array.isArray(resets)) for (const r of resets) if (!byReset.has(String(r))) byReset.set(String(r), `burst ${i + 1}`);
    });
  }
  const out: LoadChart['windows'] = [];
  windows.forEach((w: unknown, i: number) => {
    const x = (w ?? {}) as Record<string, unknown>;
    if (typeof x.successes !== 'number' || typeof x.limit !== 'number') return;
    if (byReset.size === 0) out.push({ label: `window ${i + 1}`, successes: x.successes, limit: x.limit });
    else if (byReset.has(String(x.reset))) out.push({ label: byReset.get(String(x.reset))!, successes: x.successes, limit: x.limit });
  });
  return out;
}

/** Collects every `latencyMs` and every `windows` list of a load check's figures, with a label. */
export function loadCharts(loadDocument: unknown): LoadChart[] {
  const checks = ((loadDocument as { checks?: Record<string, unknown> } | undefined)?.checks ?? {}) as Record<
    string,
    Record<string, unknown>
  >;
  const charts: LoadChart[] = [];
  for (const [check, record] of Object.entries(checks)) {
    const chart: LoadChart = {
      check,
      ...(typeof record?.status === 'string' ? { status: record.status } : {}),
      latency: [],
      windows: [],
      evidence: Array.isArray(record?.evidence) ? (record.evidence as unknown[]).map(String) : [],
    };
    const walk = (value: unknown, label: string, depth: number) => {
      if (!value || typeof value !== 'object' || depth > 4) return;
      const v = value as Record<string, unknown>;
      const lat = v.latencyMs as Record<string, unknown> | undefined;
      if (lat && typeof lat === 'object' && ['p50', 'p90', 'p99', 'max'].every((k) => typeof lat[k] === 'number')) {
        chart.latency.push({
          label: typeof v.label === 'string' ? v.label : label,
          p50: lat.p50 as number,
          p90: lat.p90 as number,
          p99: lat.p99 as number,
          max: lat.max as number,
        });
      }
      if (Array.isArray(v.windows)) chart.windows.push(...chartedWindows(v.windows, v.bursts));
      if (Array.isArray(value)) {
        value.forEach((child, i) => walk(child, `${label} ${i + 1}`, depth + 1));
        return;
      }
      for (const [k, child] of Object.entries(v)) if (k !== 'latencyMs' && k !== 'windows') walk(child, k, depth + 1);
    };
    walk(record?.figures, check, 0);
    charts.push(chart);
  }
  return charts;
}

export interface BuildInput {
  report: ConformanceReport;
  ledger: ParsedLedger;
  gate: GateResult;
  baseline?: { outcome: BaselineOutcome; file: string; digest: string };
  /** The certificate the run was gated on (`--no-regression-from`): the results then carry the difference from it. */
  previous?: ComparableCertificate;
  loadDocument?: unknown;
  suite: Certificate['suite'];
  /** SHA-256 of the ledger file, of schemas/openapi.yaml. */
  ledgerDigest: string;
  interfaceDigest: string;
  sourceManifest: Record<string, string>;
  artifacts: Record<string, string>;
  /** The certificate's validity period (ISO 8601 UTC), see `validityPeriod`. */
  validity: { issuedAt: string; validUntil: string };
}

const DAY_MS = 86_400_000;

/** The validity period of a certificate issued at `now`, valid for `days` days. */
export function validityPeriod(now: Date, days: number): { issuedAt: string; validUntil: string } {
  return { issuedAt: now.toISOString(), validUntil: new Date(now.getTime() + days * DAY_MS).toISOString() };
}

/** The results part: the report's statuses with each requirement's quote, source and decision. */
export function buildResults(
  input: Pick<BuildInput, 'report' | 'ledger' | 'gate' | 'baseline' | 'loadDocument'> & { comparison?: CertificateDiff },
): CertificateResults {
  const { report, ledger } = input;
  // The gate's known failures: from the baseline, or not passing in the compared certificate either.
  const known = new Map(input.gate.knownFailures.map((k) => [k.id, k]));
  const requirements: CertifiedRequirement[] = report.requirements.map((r) => {
    const d = ledger.byId.get(r.id) ?? {};
    const k = known.get(r.id);
    return {
      id: r.id,
      section: r.section,
      level: r.level,
      status: r.status,
      quote: d.quote ?? r.title,
      ...(d.quoteHeader ? { quoteHeader: d.quoteHeader } : {}),
      source: d.source ?? 'spec',
      ...(d.decision ? { decision: d.decision } : {}),
      ...(d.excluded ? { excluded: d.excluded } : {}),
      ...(r.experimental ? { experimental: true } : {}),
      ...(r.reason ? { reason: r.reason } : {}),
      ...(k ? { knownFailure: k.reason ? { reason: k.reason } : {} } : {}),
      evidence: r.evidence,
    };
  });
  return {
    verdict: report.verdict,
    gate: input.gate,
    summary: report.summary,
    problems: report.problems,
    notCertified: report.notCertified,
    requirements,
    ...(input.baseline ? { baseline: { ...input.baseline.outcome, file: input.baseline.file, digest: input.baseline.digest } } : {}),
    ...(input.comparison ? { comparison: input.comparison } : {}),
    load: loadCharts(input.loadDocument),
    requests: report.requests,
    requestsByPhase: report.requestsByPhase,
    phases: report.phases,
    unmapped: report.unmapped,
    ...(report.journal ? { journal: report.journal } : {}),
    ...(report.footprint ? { footprint: report.footprint } : {}),
  };
}

/** The whole certificate with its digests (unsigned). */
export function buildCertificate(input: BuildInput): Certificate {
  const suiteDigest = manifestDigest(input.sourceManifest);
  const digests = {
    spec: input.ledger.specDigest ?? input.interfaceDigest,
    interface: input.interfaceDigest,
    ledger: input.ledgerDigest,
    suite: suiteDigest,
  };
  const comparison = input.previous
    ? diffCertificates(input.previous, {
        generatedAt: input.report.generatedAt,
        target: input.report.target,
        profile: input.report.profile,
        results: {
          requirements: input.report.requirements.map((r) => ({
            id: r.id,
            level: r.level,
            status: r.status,
            quote: input.ledger.byId.get(r.id)?.quote ?? r.title,
          })),
        },
        digests,
      })
    : undefined;
  const results = buildResults({ ...input, ...(comparison ? { comparison } : {}) });
  const body: Omit<Certificate, 'digests'> & { digests: Omit<Certificate['digests'], 'certificate'> } = {
    format: CERTIFICATE_FORMAT,
    generatedAt: input.report.generatedAt,
    issuedAt: input.validity.issuedAt,
    validUntil: input.validity.validUntil,
    target: input.report.target,
    profile: input.report.profile,
    suite: input.suite,
    spec: {
      title: input.ledger.specTitle ?? 'Inventory Service Specification',
      ...(input.ledger.specDigest ? { recordedDigest: input.ledger.specDigest } : {}),
      interface: 'schemas/openapi.yaml',
    },
    results,
    artifacts: input.artifacts,
    sourceManifest: input.sourceManifest,
    digests: { ...digests, results: digestOf(results) },
  };
  return { ...body, digests: { ...body.digests, certificate: certificateDigest(body) } };
}

/** Digest of everything but `digests.certificate` and `signature`. */
export function certificateDigest(certificate: object): string {
  const { signature: _s, digests, ...rest } = certificate as { signature?: unknown; digests?: Record<string, unknown> };
  const { certificate: _c, ...otherDigests } = digests ?? {};
  return digestOf({ ...rest, digests: otherDigests });
}
