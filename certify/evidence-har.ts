/**
 * `reports/evidence.har` (HAR 1.2, opened by Chrome DevTools or any HAR viewer): the exchanges a
 * vendor can argue with. Every exchange of every test behind a failing or warned requirement, and
 * one passing exchange per requirement that passed; each entry names the requirements it is
 * evidence for in a custom `_requirements` field (custom fields start with `_`, HAR 1.2). The
 * exchanges come from the tests' `exchange` annotations, already redacted by the suites (keys as
 * `<API_KEY>`); the writer redacts once more and the secret scan reads the file like any report.
 */
import fs from 'node:fs';
import path from 'node:path';
import { ANNOTATION, requirementIds, type TestRecord } from '../core/results.ts';
import { parseExchange, type RecordedExchange, type RecordedHeader } from '../core/exchange.ts';
import type { ConformanceReport } from './verdict.ts';
import { REPO_ROOT } from '../core/paths.ts';

export const EVIDENCE_HAR = 'evidence.har';

interface HarHeader {
  name: string;
  value: string;
}
interface HarQuery {
  name: string;
  value: string;
}

export interface HarEntry {
  startedDateTime: string;
  time: number;
  request: {
    method: string;
    url: string;
    httpVersion: string;
    cookies: [];
    headers: HarHeader[];
    queryString: HarQuery[];
    postData?: { mimeType: string; text: string };
    headersSize: number;
    bodySize: number;
  };
  response: {
    status: number;
    statusText: string;
    httpVersion: string;
    cookies: [];
    headers: HarHeader[];
    content: { size: number; mimeType: string; text: string; comment?: string };
    redirectURL: string;
    headersSize: number;
    bodySize: number;
  };
  cache: Record<string, never>;
  timings: { send: number; wait: number; receive: number };
  /** The ledger ids this exchange is evidence for. */
  _requirements: string[];
  /** The test that sent it, and its phase. */
  _test: string;
  _phase: string;
}

export interface Har {
  log: { version: '1.2'; creator: { name: string; version: string }; comment: string; entries: HarEntry[] };
}

const header = (headers: readonly RecordedHeader[], name: string): string | undefined =>
  headers.find((h) => h.name.toLowerCase() === name)?.value;

/** One recorded exchange as a HAR 1.2 entry. */
export function harEntry(ex: RecordedExchange, requirements: string[], test: TestRecord): HarEntry {
  const url = new URL(ex.request.url);
  const body = ex.request.body;
  return {
    startedDateTime: ex.startedDateTime,
    time: ex.timeMs,
    request: {
      method: ex.request.method,
      url: ex.request.url,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: ex.request.headers.map((h) => ({ name: h.name, value: h.value })),
      queryString: [...url.searchParams].map(([name, value]) => ({ name, value })),
      ...(body !== undefined ? { postData: { mimeType: header(ex.request.headers, 'content-type') ?? '', text: body } } : {}),
      headersSize: -1,
      bodySize: body === undefined ? 0 : Buffer.byteLength(body),
    },
    response: {
      status: ex.response.status,
      statusText: ex.response.statusText,
      httpVersion: 'HTTP/1.1',
      cookies: [],
      headers: ex.response.headers.map((h) => ({ name: h.name, value: h.value })),
      content: {
        size: Buffer.byteLength(ex.response.body),
        mimeType: header(ex.response.headers, 'content-type') ?? '',
        text: ex.response.body,
        ...(ex.response.bodyTruncated ? { comment: 'body cut at 64 KiB in this record' } : {}),
      },
      redirectURL: header(ex.response.headers, 'location') ?? '',
      headersSize: -1,
      bodySize: ex.response.bodyTruncated ? -1 : Buffer.byteLength(ex.response.body),
    },
    cache: {},
    timings: { send: 0, wait: ex.timeMs, receive: 0 },
    _requirements: requirements,
    _test: test.title,
    _phase: test.project,
  };
}

/**
 * The HAR of a run: for a failing or warned requirement every exchange of its tests, for a passing
 * one the first exchange of a passing test. An exchange behind several requirements is one entry
 * naming them all. Entries in the order they were sent.
 */
export function buildEvidenceHar(
  report: Pick<ConformanceReport, 'requirements'>,
  tests: readonly TestRecord[],
  creator: { name: string; version: string },
): Har {
  const status = new Map(report.requirements.map((r) => [r.id, r.status]));
  const picked = new Map<string, { ex: RecordedExchange; test: TestRecord; ids: string[] }>();
  const passingShown = new Set<string>();
  for (const test of tests) {
    const exchanges = test.annotations.filter((a) => a.type === ANNOTATION.exchange).map((a) => parseExchange(a.description));
    const ids = requirementIds(test).filter((id) => status.has(id));
    exchanges.forEach((ex, i) => {
      if (!ex) return;
      const key = `${test.project}\u0000${test.title}\u0000${i}`;
      for (const id of ids) {
        const s = status.get(id);
        const wanted = s === 'fail' || s === 'warn' || (s === 'pass' && test.outcome === 'passed' && !passingShown.has(id));
        if (!wanted) continue;
        if (s === 'pass') passingShown.add(id);
        const entry = picked.get(key) ?? { ex, test, ids: [] };
        if (!entry.ids.includes(id)) entry.ids.push(id);
        picked.set(key, entry);
      }
    });
  }
  const entries = [...picked.values()]
    .map((p) => harEntry(p.ex, p.ids, p.test))
    .sort((a, b) => a.startedDateTime.localeCompare(b.startedDateTime));
  return {
    log: {
      version: '1.2',
      creator,
      comment:
        'Exchanges behind every failing or warned requirement, and one passing exchange per requirement; `_requirements` names the ledger ids. Keys are written as <API_KEY>.',
      entries,
    },
  };
}

/** The suite's name and version (package.json), the HAR's `creator`. */
function suiteCreator(): { name: string; version: string } {
  const pkg = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { name?: string; version?: string };
  return { name: pkg.name ?? 'inventory-conformance', version: pkg.version ?? '0.0.0' };
}

/** Writes `evidence.har` under `reportsDir` (redacted once more); returns its path. */
export function writeEvidenceHar(
  reportsDir: string,
  report: Pick<ConformanceReport, 'requirements'>,
  tests: readonly TestRecord[],
  redact: (s: string) => string,
  creator = suiteCreator(),
): string {
  const file = path.join(reportsDir, EVIDENCE_HAR);
  fs.writeFileSync(file, `${redact(JSON.stringify(buildEvidenceHar(report, tests, creator), null, 2))}\n`);
  return file;
}
