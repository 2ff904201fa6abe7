/**
 * The certificate's shape (`reports/certificate.json`, format `inventory-conformance-certificate/1`).
 * One home for the writer, the HTML page and `verify`.
 */
import type { BaselineOutcome } from '../baseline.ts';
import type { ConformanceReport, EvidenceEntry, Level, RequirementStatus } from '../verdict.ts';
import type { Signature } from './sign.ts';
import type { CertificateDiff } from './diff.ts';
import type { RunProblem } from '../../core/results.ts';

export const CERTIFICATE_FORMAT = 'inventory-conformance-certificate/1';

export type { GateResult } from '../gate.ts';
import type { GateResult } from '../gate.ts';

/** One requirement as the certificate states it: the ledger's words and the run's evidence. */
export interface CertifiedRequirement {
  id: string;
  section: string;
  level: Level;
  status: RequirementStatus;
  /** The statement, verbatim from the ledger. */
  quote: string;
  /** When the quote is a row of a table of the spec (or of the HTTP rules): that table's header cells. */
  quoteHeader?: string[];
  /** `spec`, `rfc` or `rules`. */
  source: string;
  /** What the suite decided where the statement leaves something open. */
  decision?: string;
  excluded?: string;
  experimental?: boolean;
  /** Why the status is what it is when the tests alone do not say it. */
  reason?: string;
  /** Listed in the baseline as a known failure (does not fail the gate). */
  knownFailure?: { reason?: string };
  evidence: EvidenceEntry[];
}

export interface LoadChart {
  check: string;
  status?: string;
  /** Latency percentiles of each load run of the check, in ms. */
  latency: { label: string; p50: number; p90: number; p99: number; max: number }[];
  /** Successes admitted per rate-limit window, beside the limit. */
  windows: { label: string; successes: number; limit: number }[];
  /** Evidence lines the check wrote (no keys). */
  evidence: string[];
}

/** The results: everything a run judged. Its digest is `digests.results`. */
export interface CertificateResults {
  /** The gate's result (the same as `gate.result`). */
  verdict: ConformanceReport['verdict'];
  gate: GateResult;
  summary: ConformanceReport['summary'];
  problems: RunProblem[];
  notCertified: ConformanceReport['notCertified'];
  requirements: CertifiedRequirement[];
  baseline?: BaselineOutcome & { file: string; digest: string };
  /** Gated on a previous certificate: the requirement-level difference from it. */
  comparison?: CertificateDiff;
  load: LoadChart[];
  requests: number;
  requestsByPhase: Record<string, number>;
  phases: ConformanceReport['phases'];
  unmapped: ConformanceReport['unmapped'];
  /** The journal of changes: what an earlier run left open and this run repaired first, what this run left changed. */
  journal?: ConformanceReport['journal'];
  /** The messages the run queued, by check, within MAX_MESSAGES. */
  footprint?: ConformanceReport['footprint'];
}

export interface Certificate {
  format: typeof CERTIFICATE_FORMAT;
  generatedAt: string;
  /** When the certificate was written (ISO 8601 UTC). Covered by its digest and signature. */
  issuedAt: string;
  /** When it stops being valid: `issuedAt` + CONFORMANCE_VALID_DAYS; `verify` refuses it afterwards. */
  validUntil: string;
  target: unknown;
  profile: string;
  suite: { name: string; version: string; commit?: string; modified?: boolean };
  spec: { title: string; recordedDigest?: string; interface: string };
  results: CertificateResults;
  /** Files beside the certificate and their SHA-256 (checked by `verify` when present). */
  artifacts: Record<string, string>;
  /** Path → SHA-256 of the suite's source (see digest.ts SUITE_SOURCE). */
  sourceManifest: Record<string, string>;
  digests: {
    /** The spec's digest as the ledger records it, else the interface file's. */
    spec: string;
    /** `schemas/openapi.yaml`. */
    interface: string;
    ledger: string;
    suite: string;
    results: string;
    /** Canonical JSON of the whole certificate but `digests.certificate` and `signature`. */
    certificate: string;
  };
  signature?: Signature;
}
