/**
 * The submission folder: `<out>/<vendor>-<product>-<version>/`, owned by `submit` the way certify
 * owns its reports folder (certify/steps/reports-dir.ts). It is submit's when it is fresh (absent
 * or empty) or holds submit's marker, `.conformance-submission.json`, listing every file submit
 * wrote there, and nothing else. Refused (nothing touched): a symbolic link, a path that is not a
 * folder, and a folder holding any file submit did not write. Only the listed files are replaced.
 */
import fs from 'node:fs';
import path from 'node:path';
import { filesUnder } from '../steps/reports-dir.ts';

/** submit's marker and manifest in the submission folder. */
export const SUBMISSION_OWNER_FILE = '.conformance-submission.json';
const OWNER = 'inventory-conformance submit';

/** The files a submission holds, sorted (the marker aside). */
export const SUBMISSION_FILES = ['README.md', 'certificate.html', 'certificate.json', 'evidence.har', 'junit.xml', 'product.yaml'] as const;

/** The marker's text: the same files give the same bytes (no date). */
export function ownerFileText(files: readonly string[]): string {
  return `${JSON.stringify({ owner: OWNER, files: [...files].sort() }, null, 2)}\n`;
}

function listedFiles(dir: string): string[] | undefined {
  try {
    const m = JSON.parse(fs.readFileSync(path.join(dir, SUBMISSION_OWNER_FILE), 'utf8')) as { owner?: string; files?: unknown };
    return m.owner === OWNER && Array.isArray(m.files) && m.files.every((f) => typeof f === 'string') ? (m.files as string[]) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Why submit may not write into `dir`, or undefined; when it may, what an earlier submit wrote
 * there is removed (only that).
 */
export function claimSubmissionDir(dir: string): string | undefined {
  let stat: fs.Stats | undefined;
  try {
    stat = fs.lstatSync(dir);
  } catch {
    stat = undefined;
  }
  if (stat?.isSymbolicLink()) return `${dir} is a symbolic link; submit writes only into a real folder of its own`;
  if (stat && !stat.isDirectory()) return `${dir} exists and is not a folder`;
  if (!stat) {
    fs.mkdirSync(dir, { recursive: true });
    return undefined;
  }
  const files = filesUnder(dir).map((f) => f.split(path.sep).join('/'));
  if (!files.length) return undefined;
  const listed = listedFiles(dir);
  const foreign = files.filter((f) => f !== SUBMISSION_OWNER_FILE && !(listed ?? []).includes(f));
  if (!listed || foreign.length) {
    const shown = (listed ? foreign : files).slice(0, 5).join(', ');
    return `${dir} holds files submit did not write (${shown}${(listed ? foreign : files).length > 5 ? ', …' : ''}); give another --out folder or remove them`;
  }
  for (const f of listed) fs.rmSync(path.join(dir, f), { force: true });
  return undefined;
}
