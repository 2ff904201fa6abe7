/**
 * Secret scan: after a run, every file written under `REPORTS_DIR` and the Playwright output
 * folders is searched for every encoded form of `API_KEY`, `RATE_LIMIT_KEY` and `LOAD_KEY`
 * (see `secrets.ts`), including inside zip and gzip files and inside base64-embedded zips such as
 * the one Playwright's HTML report keeps in `index.html`. A finding names the file (and the entry
 * inside an archive), the variable and the encoding, never the key.
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import AdmZip from 'adm-zip';
import { findNeedle, secretNeedles, type Secret, type SecretNeedle } from '../core/secrets.ts';

export interface SecretFinding {
  /** Path of the file, relative to the scanned root when one was given. */
  file: string;
  /** Inside archives: the chain of entries, e.g. `["<embedded zip #1>", "report.json"]`. */
  entry?: string[];
  /** The variable whose value was found, e.g. `API_KEY`. */
  variable: string;
  /** How it was encoded, e.g. `base64 of "Bearer <key>"`. */
  encoding: string;
}

export interface ScanResult {
  filesScanned: number;
  findings: SecretFinding[];
  /** Files (or archive entries) that could not be read: they may hide a key, so they count against the run. */
  unscannable: { file: string; entry?: string[]; reason: string }[];
}

const ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x03, 0x04]);
const EMPTY_ZIP_MAGIC = Buffer.from([0x50, 0x4b, 0x05, 0x06]);
const GZIP_MAGIC = Buffer.from([0x1f, 0x8b]);
/** Base64 of a zip's local-file-header magic `PK\x03\x04` starts with `UEsDB`. */
const EMBEDDED_ZIP = /UEsDB[A-Za-z0-9+/]{20,}={0,2}/g;
const MAX_DEPTH = 4;

function startsWith(buf: Buffer, magic: Buffer): boolean {
  return buf.length >= magic.length && buf.subarray(0, magic.length).equals(magic);
}

function location(entry: string[]): string[] | undefined {
  return entry.length ? [...entry] : undefined;
}

/**
 * Scans one buffer (a file's content) for every needle. Zip and gzip content is opened
 * recursively; text content is also searched for base64-embedded zips.
 * Pure: no file system access.
 */
export function scanBuffer(content: Buffer, needles: SecretNeedle[], file: string): Omit<ScanResult, 'filesScanned'> {
  const findings: SecretFinding[] = [];
  const unscannable: ScanResult['unscannable'] = [];

  const visit = (buf: Buffer, entry: string[], depth: number, embedded: boolean) => {
    const text = buf.toString('latin1');
    for (const n of needles) {
      for (const encoding of findNeedle(text, n)) findings.push({ file, entry: location(entry), variable: n.name, encoding });
    }
    if (depth >= MAX_DEPTH) return;
    if (startsWith(buf, ZIP_MAGIC) || startsWith(buf, EMPTY_ZIP_MAGIC)) {
      let entries: AdmZip.IZipEntry[];
      try {
        entries = new AdmZip(buf).getEntries();
      } catch (error) {
        if (!embedded) unscannable.push({ file, entry: location(entry), reason: `unreadable zip: ${(error as Error).message}` });
        return;
      }
      for (const e of entries) {
        if (e.isDirectory) continue;
        let data: Buffer;
        try {
          data = e.getData();
        } catch (error) {
          unscannable.push({ file, entry: [...entry, e.entryName], reason: `unreadable zip entry: ${(error as Error).message}` });
          continue;
        }
        visit(data, [...entry, e.entryName], depth + 1, false);
      }
      return;
    }
    if (startsWith(buf, GZIP_MAGIC)) {
      let data: Buffer;
      try {
        data = zlib.gunzipSync(buf);
      } catch (error) {
        if (!embedded) unscannable.push({ file, entry: location(entry), reason: `unreadable gzip: ${(error as Error).message}` });
        return;
      }
      visit(data, [...entry, '<gunzipped>'], depth + 1, false);
      return;
    }
    // Text that embeds zips as base64 (Playwright's HTML report: `data:application/zip;base64,UEsDB…`).
    if (!text.includes('UEsDB')) return;
    let index = 0;
    for (const match of text.matchAll(EMBEDDED_ZIP)) {
      index++;
      const decoded = Buffer.from(match[0], 'base64');
      visit(decoded, [...entry, `<embedded base64 zip #${index}>`], depth + 1, true);
    }
  };

  visit(content, [], 0, false);
  return { findings, unscannable };
}

/** Every regular file under `root` (a file or a directory); missing roots yield nothing. */
export function listFiles(root: string): string[] {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(root);
  } catch {
    return [];
  }
  if (stat.isFile()) return [root];
  if (!stat.isDirectory()) return [];
  const out: string[] = [];
  for (const name of fs.readdirSync(root)) out.push(...listFiles(path.join(root, name)));
  return out;
}

/**
 * Scans every file under each root. Findings name files relative to `relativeTo`
 * (default: the current directory).
 */
export function scanPaths(roots: string[], secrets: Secret[], relativeTo = process.cwd()): ScanResult {
  const needles = secretNeedles(secrets);
  const files = [...new Set(roots.flatMap((r) => listFiles(path.resolve(r))))].sort();
  const result: ScanResult = { filesScanned: 0, findings: [], unscannable: [] };
  if (needles.length === 0) return { ...result, filesScanned: files.length };
  for (const file of files) {
    const name = path.relative(relativeTo, file) || file;
    let content: Buffer;
    try {
      content = fs.readFileSync(file);
    } catch (error) {
      result.unscannable.push({ file: name, reason: `unreadable file: ${(error as Error).message}` });
      continue;
    }
    result.filesScanned++;
    const { findings, unscannable } = scanBuffer(content, needles, name);
    result.findings.push(...findings);
    result.unscannable.push(...unscannable);
  }
  return result;
}

/** One line per finding, e.g. `reports/html/index.html › <embedded base64 zip #1> › report.json: API_KEY (raw)`. */
export function describeFinding(f: SecretFinding | ScanResult['unscannable'][number]): string {
  const where = [f.file, ...(f.entry ?? [])].join(' › ');
  if ('variable' in f) return `${where}: ${f.variable} (${f.encoding})`;
  return `${where}: could not be scanned (${f.reason})`;
}
