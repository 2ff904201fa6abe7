/**
 * Steps "write the reports", "certificate", "scan what was written after the verdict": from the
 * verdict to the files of the reports folder (docs/architecture.md, "From certify to the verdict").
 */
import fs from 'node:fs';
import { certificateStep, type WrittenCertificate } from '../certificate/index.ts';
import { writeEvidenceHar } from '../evidence-har.ts';
import { listFiles } from '../secret-scan.ts';
import type { ConformanceReport } from '../verdict.ts';
import { gateJunitFile, writeReportFiles } from './judge.ts';
import { judge, type Evidence, type SecretsScanned } from './judge-run.ts';
import { scanSecrets as scanFolder } from './scan-secrets.ts';

/** What the run wrote after the verdict: the report as written, the certificate, and keys found even in files written twice. */
export interface Artifacts {
  report: ConformanceReport;
  /** Undefined: a replay, or it could not be written. */
  certificate?: WrittenCertificate;
  /** Keys in files written again after a late key (described without the key): the run is void, exit 5. */
  keysInLateFiles: string[];
}

/** conformance.json and .md, evidence.har, junit.xml stating the gate, and (not for a replay) the certificate; each text redacted. */
export function writeReports(
  e: Evidence,
  report: ConformanceReport,
  env: Record<string, string | undefined>,
): WrittenCertificate | undefined {
  const { run } = e;
  const { say, redact } = e.opened.console;
  writeReportFiles(report, run.reportsDir, redact);
  writeEvidenceHar(run.reportsDir, report, e.merged.tests, redact);
  gateJunitFile(report, run.reportsDir, redact);
  if (run.replaying) return undefined;
  const previous = run.gate.previous;
  return certificateStep({ report, reportsDir: run.reportsDir, env, write: say, redact, ...(previous ? { previous } : {}) });
}

/**
 * Writes the reports and the certificate of `report`, then scans every file written since the
 * secret scan. A key found there (a writer that did not redact) is scrubbed and judged like any key
 * found: the verdict, with that finding, is written again, so every file and the exit code agree;
 * a key even in those voids the run (exit 5). Then the reports folder's manifest is closed.
 */
export function writeArtifacts(
  e: Evidence,
  scanned: SecretsScanned,
  report: ConformanceReport,
  env: Record<string, string | undefined>,
): Artifacts {
  const { say } = e.opened.console;
  let out: Artifacts = { report, keysInLateFiles: [] };
  const certificate = writeReports(e, report, env);
  if (certificate) out.certificate = certificate;
  const found = keysWrittenSince(e, scanned.scannedAt);
  if (found.length) {
    say(`certify: a key reached ${found.length} file(s) written after the verdict; judged again with it\n`);
    for (const x of found) say(`  ✗ ${x}\n`);
    const rewrittenAt = Date.now();
    const judged = judge(e, [...scanned.findings, ...found]);
    const again = writeReports(e, judged, env);
    out = { report: judged, ...(again ? { certificate: again } : {}), keysInLateFiles: keysWrittenSince(e, rewrittenAt) };
    if (out.keysInLateFiles.length) {
      say(`certify: a key reached ${out.keysInLateFiles.length} file(s) written again: the run is void (harness trouble, exit 5)\n`);
      for (const x of out.keysInLateFiles) say(`  ✗ ${x}\n`);
    }
  }
  e.run.folder.finish();
  return out;
}

/** Scans the files of the reports folder written at or after `sinceMs`; each file holding a key is scrubbed or removed. */
function keysWrittenSince(e: Evidence, sinceMs: number): string[] {
  const { run } = e;
  const written = listFiles(run.reportsDir).filter((f) => modifiedSince(f, sinceMs));
  return scanFolder(written, e.opened.console.secrets, process.cwd(), run.folder.owns).findings;
}

/** The file was written at or after `sinceMs` (a file that cannot be read counts as written). */
function modifiedSince(file: string, sinceMs: number): boolean {
  try {
    return fs.statSync(file).mtimeMs >= sinceMs;
  } catch {
    return true;
  }
}
