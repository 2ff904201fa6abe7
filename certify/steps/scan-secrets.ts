/**
 * Step "scan secrets": every file the run wrote is searched for every encoded form of every key; a hit is scrubbed or
 * removed if the run wrote the file, and fails the run naming it (docs/run-costs.md, docs/architecture.md "Contract").
 */
import fs from 'node:fs';
import path from 'node:path';
import { describeFinding, scanBuffer, scanPaths, type ScanResult } from '../secret-scan.ts';
import { redactText, secretNeedles, type Secret } from '../../core/secrets.ts';

export interface SecretScan {
  filesScanned: number;
  /** One line per finding (file, entry, variable, encoding; never the key), with what was done. */
  findings: string[];
  /** Files scrubbed in place. */
  scrubbed: string[];
  /** Files removed (could not be scrubbed). */
  removed: string[];
  /** Files holding a key that the run did not write: reported, left as they are. */
  leftAlone: string[];
}

/**
 * Scans `roots`; scrubs or removes each file the run wrote (`owns`, default none) where a key is
 * found, and reports the others untouched. Paths in messages are relative to `relativeTo`.
 */
export function scanSecrets(
  roots: string[],
  secrets: Secret[],
  relativeTo = process.cwd(),
  owns: (file: string) => boolean = () => false,
): SecretScan {
  const scan: ScanResult = scanPaths(roots, secrets, relativeTo);
  const out: SecretScan = { filesScanned: scan.filesScanned, findings: [], scrubbed: [], removed: [], leftAlone: [] };
  const needles = secretNeedles(secrets);
  const byFile = new Map<string, { inArchive: boolean; lines: string[] }>();
  for (const f of [...scan.findings, ...scan.unscannable]) {
    const entry = byFile.get(f.file) ?? { inArchive: false, lines: [] };
    // Unreadable files may hide a key, and archive entries cannot be edited in place: remove.
    if (f.entry?.length || 'reason' in f) entry.inArchive = true;
    entry.lines.push(describeFinding(f));
    byFile.set(f.file, entry);
  }
  for (const [file, { inArchive, lines }] of byFile) {
    const abs = path.resolve(relativeTo, file);
    if (!owns(abs)) {
      out.leftAlone.push(file);
      for (const line of lines) out.findings.push(`${line} — not written by this run: left as it is`);
      continue;
    }
    let action: 'scrubbed' | 'removed' = 'removed';
    if (!inArchive) {
      try {
        const scrubbed = redactText(fs.readFileSync(abs, 'latin1'), needles).text;
        // Scrubbing must leave no form of any key behind (a form split by the replacement, say).
        if (scanBuffer(Buffer.from(scrubbed, 'latin1'), needles, file).findings.length === 0) {
          fs.writeFileSync(abs, scrubbed, 'latin1');
          action = 'scrubbed';
        }
      } catch {
        action = 'removed';
      }
    }
    if (action === 'removed') fs.rmSync(abs, { force: true });
    (action === 'scrubbed' ? out.scrubbed : out.removed).push(file);
    for (const line of lines) out.findings.push(`${line} — ${action === 'scrubbed' ? 'scrubbed in place' : 'file removed'}`);
  }
  return out;
}
