/**
 * Failures a person can act on and evidence a vendor can argue with: typed findings rendered in
 * plain words with a curl reproduction (console, conformance.md, certificate), and
 * reports/evidence.har as HAR 1.2 with the exchanges behind each requirement, no key, its digest
 * in the certificate and checked by `verify`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { test, expect } from '../certificate/scratch.ts';
import { buildEvidenceHar, writeEvidenceHar, type Har } from '../../certify/evidence-har.ts';
import { failureLine, failureTexts, plainError } from '../../certify/failure-text.ts';
import { renderMarkdown } from '../../certify/markdown.ts';
import { printSummary } from '../../certify/steps/print.ts';
import { computeVerdict, type LedgerRequirement, type TestRecord } from '../../certify/verdict.ts';
import { verifyCertificate, writeCertificate } from '../../certify/certificate/index.ts';
import { redact, secretsOf } from '../../core/secrets.ts';
import { curlOf, shellWord, type RecordedExchange } from '../../core/exchange.ts';
import { finding } from '../../core/finding.ts';
import { replayCommand } from '../../suites/generated/report.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const KEY = 'sk_live_9f8e7d6c5b4a39281706';
const SECRETS = secretsOf({ API_KEY: KEY });
const clean = (s: string) => redact(s, SECRETS);
const TARGET = 'https://staging.example.com/v1';

const LEDGER: LedgerRequirement[] = [
  {
    id: 'ERR-01',
    section: 'Errors',
    title: 'Error responses use the Error object (`code`, `message`, `status`), content type `application/json`.',
    level: 'must',
    source: 'spec',
  },
  {
    id: 'AUTH-03',
    section: 'Authentication',
    title: 'A missing or invalid key yields 401 with an Error body.',
    level: 'must',
    source: 'spec',
  },
  {
    id: 'INV-01',
    section: 'Endpoints > 1. List inventory',
    title: '200 | JSON array of InventoryItem: current stock levels for all pets',
    level: 'must',
    source: 'spec',
  },
  {
    id: 'RL-12',
    section: 'Limits, rule 4',
    title: 'Clients are expected to retry with exponential backoff.',
    level: 'should',
    source: 'spec',
  },
];

/** An exchange as the api fixture records it, redacted. */
function exchange(method: string, pathname: string, status: number, body: string, at: number, auth = `Bearer ${KEY}`): RecordedExchange {
  return JSON.parse(
    clean(
      JSON.stringify({
        startedDateTime: new Date(Date.UTC(2026, 10, 24, 12, 0, at)).toISOString(),
        timeMs: 12,
        request: {
          method,
          url: `${TARGET}${pathname}?x=1`,
          headers: [
            { name: 'accept', value: 'application/json' },
            { name: 'authorization', value: auth },
          ],
          ...(method === 'PATCH' ? { body: '{"quantity":5}' } : {}),
        },
        response: {
          status,
          statusText: 'x',
          headers: [
            { name: 'Content-Type', value: 'application/json' },
            { name: 'X-Echo', value: KEY },
          ],
          body,
        },
      }),
    ),
  ) as RecordedExchange;
}

const ann = (ex: RecordedExchange) => ({ type: 'exchange', description: JSON.stringify(ex) });
function rec(title: string, outcome: TestRecord['outcome'], annotations: TestRecord['annotations'], errors: string[] = []): TestRecord {
  return { title, project: 'functional', tags: [], outcome, errors, annotations, requests: annotations.length };
}

const errBody = exchange('GET', '/inventory', 401, '{"message":"no"}', 1, '');
const errFinding = finding({
  id: 'ERR-01',
  level: 'fail',
  message: 'Error body of GET /v1/inventory → 401',
  expected: 'an Error body: string `code` and `message`, integer `status`',
  observed: '`code` is missing',
});
const TESTS: TestRecord[] = [
  {
    ...rec(
      'ERR-01 missing key: the 401 is an Error body',
      'failed',
      [ann(errBody)],
      [`Error: ${errFinding.message}\n\nexpect(received).toEqual(expected) // deep equality`],
    ),
    requests: 2,
    findings: [{ ...errFinding, curl: curlOf(errBody) }],
  },
  // A failure that wrote no finding: its raw diff becomes words, its last exchange a curl line.
  rec(
    'AUTH-03 an unknown key yields 401',
    'failed',
    [ann(exchange('GET', '/inventory', 200, '[]', 2)), ann(exchange('PATCH', '/inventory/1', 200, '{}', 3))],
    [
      'Error: AUTH-03: PATCH /v1/inventory/1 with an unknown key: expected 401, observed\n\nexpect(received).toBe(expected) // Object.is equality\n\nExpected: 401\nReceived: 200\n\n  12 |   expect(res.status).toBe(401);',
    ],
  ),
  rec('INV-01 the list is an array of InventoryItem', 'passed', [
    ann(exchange('GET', '/inventory', 200, '[]', 4)),
    ann(exchange('GET', '/inventory', 200, '[]', 5)),
  ]),
  rec('RL-12 backoff', 'passed', [
    ann(exchange('GET', '/inventory', 200, '[]', 6)),
    { type: 'warning', description: 'RL-12 no backoff seen' },
  ]),
];

const report = () =>
  computeVerdict({
    ledger: LEDGER,
    tests: TESTS,
    profile: 'full',
    target: { kind: 'external', baseUrl: TARGET },
    generatedAt: '2026-11-24T12:00:00.000Z',
  });

test('a failure reads as what, expected and observed in plain words, with a curl line on $API_KEY at the target URL', () => {
  const r = report();
  const texts = failureTexts(r.requirements.find((x) => x.id === 'ERR-01')!.evidence);
  expect(texts).toHaveLength(1);
  expect(failureLine(texts[0]!)).toBe(
    'Error body of GET /v1/inventory → 401: expected an Error body: string `code` and `message`, integer `status`; observed `code` is missing',
  );
  expect(texts[0]!.curl).toBe(
    `curl -sS -i --path-as-is -X GET '${TARGET}/inventory?x=1' -H 'accept: application/json' -H 'authorization: '`,
  );
  const auth = failureTexts(r.requirements.find((x) => x.id === 'AUTH-03')!.evidence)[0]!;
  expect(auth).toMatchObject({ what: 'AUTH-03: PATCH /v1/inventory/1 with an unknown key', expected: '401', observed: '200' });
  expect(auth.curl).toBe(
    `curl -sS -i --path-as-is -X PATCH '${TARGET}/inventory/1?x=1' -H 'accept: application/json' -H "authorization: Bearer $API_KEY" --data-binary '{"quantity":5}'`,
  );
  // Every renderer shows it the same way, and none shows a diff, a cut line or the key.
  const md = renderMarkdown(r);
  let console = '';
  printSummary(r, (t) => (console += t), { reportsFile: 'conformance.md', otherReports: [], seconds: 1 });
  expect(console).toContain('AUTH-03: PATCH /v1/inventory/1 with an unknown key: expected 401; observed 200');
  expect(md).toContain('- expected: 401\n    - observed: 200');
  for (const text of [md, console]) {
    expect(text).toContain('"authorization: Bearer $API_KEY"');
    expect(text).not.toMatch(/expect\(received\)|Received:|observed\s*$/m);
    expect(text).not.toContain(KEY);
  }
  expect(md).toContain('observed: `code` is missing');
});

test('plainError keeps every line before the diff, whole, and reads Expected/Received as values', () => {
  const cases: [string, ReturnType<typeof plainError>][] = [
    [
      'Error: INV-01: body: expected JSON, observed <html>\n\nexpect(received).toBeUndefined()\n\nReceived: "x"',
      { what: 'INV-01: body: expected JSON, observed <html>', observed: '"x"' },
    ],
    [
      'Error: X-01: expected a conforming Error response, observed\n\nexpect(received).toEqual(expected)\n\n- Expected  - 0\n+ Received  + 1',
      { what: 'X-01' },
    ],
    ['boom', { what: 'boom' }],
  ];
  for (const [message, want] of cases) expect(plainError(message), message).toEqual(want);
});

test('shellWord writes a key placeholder as its shell variable and quotes everything else', () => {
  expect(shellWord("it's")).toBe(`'it'\\''s'`);
  expect(shellWord('Authorization: Bearer <RATE_LIMIT_KEY>')).toBe('"Authorization: Bearer $RATE_LIMIT_KEY"');
  expect(shellWord('a "$x" `y` <API_KEY>')).toBe('"a \\"\\$x\\" \\`y\\` $API_KEY"');
});

/** The fields HAR 1.2 requires (http://www.softwareishard.com/blog/har-12-spec/), checked on every entry. */
function harProblems(har: Har): string[] {
  const p: string[] = [];
  const hasShape = (o: unknown, keys: Record<string, string>, where: string) => {
    for (const [k, type] of Object.entries(keys)) {
      const v = (o as Record<string, unknown>)?.[k];
      const ok =
        type === 'array'
          ? Array.isArray(v)
          : type === 'object'
            ? v !== null && typeof v === 'object' && !Array.isArray(v)
            : typeof v === type;
      if (!ok) p.push(`${where}.${k} is not ${type}`);
    }
  };
  hasShape(har, { log: 'object' }, 'har');
  hasShape(har.log, { version: 'string', creator: 'object', entries: 'array' }, 'log');
  hasShape(har.log.creator, { name: 'string', version: 'string' }, 'log.creator');
  if (har.log.version !== '1.2') p.push('log.version is not 1.2');
  har.log.entries.forEach((e, i) => {
    const w = `entries[${i}]`;
    hasShape(
      e,
      { startedDateTime: 'string', time: 'number', request: 'object', response: 'object', cache: 'object', timings: 'object' },
      w,
    );
    if (Number.isNaN(Date.parse(e.startedDateTime))) p.push(`${w}.startedDateTime is not ISO 8601`);
    hasShape(
      e.request,
      {
        method: 'string',
        url: 'string',
        httpVersion: 'string',
        cookies: 'array',
        headers: 'array',
        queryString: 'array',
        headersSize: 'number',
        bodySize: 'number',
      },
      `${w}.request`,
    );
    hasShape(
      e.response,
      {
        status: 'number',
        statusText: 'string',
        httpVersion: 'string',
        cookies: 'array',
        headers: 'array',
        content: 'object',
        redirectURL: 'string',
        headersSize: 'number',
        bodySize: 'number',
      },
      `${w}.response`,
    );
    hasShape(e.response.content, { size: 'number', mimeType: 'string' }, `${w}.response.content`);
    hasShape(e.timings, { send: 'number', wait: 'number', receive: 'number' }, `${w}.timings`);
    if (e.request.postData) hasShape(e.request.postData, { mimeType: 'string', text: 'string' }, `${w}.request.postData`);
    for (const h of [...e.request.headers, ...e.response.headers]) hasShape(h, { name: 'string', value: 'string' }, `${w} header`);
    if (!Array.isArray(e._requirements) || e._requirements.length === 0) p.push(`${w}._requirements names no requirement`);
  });
  return p;
}

test('evidence.har is HAR 1.2: every exchange of a failing or warned requirement, one passing exchange per requirement, tagged with its ids', () => {
  const har = buildEvidenceHar(report(), TESTS, { name: 'inventory-conformance', version: '1.0.0' });
  expect(harProblems(har)).toEqual([]);
  expect(har.log.entries.map((e) => [e._requirements.join(','), e.request.method, e.response.status])).toEqual([
    ['ERR-01', 'GET', 401],
    ['AUTH-03', 'GET', 200],
    ['AUTH-03', 'PATCH', 200],
    ['INV-01', 'GET', 200],
    ['RL-12', 'GET', 200],
  ]);
  const patch = har.log.entries[2]!;
  expect(patch.request.postData).toEqual({ mimeType: '', text: '{"quantity":5}' });
  expect(patch.request.queryString).toEqual([{ name: 'x', value: '1' }]);
  // The structure check itself fails on a broken entry.
  const broken = structuredClone(har);
  delete (broken.log.entries[0] as Partial<typeof patch>).timings;
  broken.log.entries[1]!._requirements = [];
  expect(harProblems(broken)).toEqual([
    'entries[0].timings is not object',
    'entries[0].timings.send is not number',
    'entries[0].timings.wait is not number',
    'entries[0].timings.receive is not number',
    'entries[1]._requirements names no requirement',
  ]);
});

test('evidence.har holds no key, its digest is in the certificate, and verify fails when it changes', async ({ scratch }) => {
  const dir = scratch('reports');
  fs.mkdirSync(dir, { recursive: true });
  const r = report();
  const file = writeEvidenceHar(dir, r, TESTS, clean);
  const text = fs.readFileSync(file, 'utf8');
  expect(text).not.toContain(KEY);
  expect(text).toContain('Bearer <API_KEY>');
  expect(harProblems(JSON.parse(text) as Har)).toEqual([]);
  const { jsonFile, certificate } = writeCertificate({ report: r, reportsDir: dir, env: {} });
  expect(certificate.artifacts['evidence.har']).toMatch(/^[0-9a-f]{64}$/);
  const check = () => verifyCertificate(jsonFile, { root: ROOT }).checks.find((c) => c.name === 'artifact evidence.har');
  expect(check()?.ok).toBe(true);
  fs.writeFileSync(file, text.replace('"status": 401', '"status": 400'));
  expect(check()).toMatchObject({ ok: false });
});

test("the replay hint names the target the case failed against, so a config file's default target is not used", () => {
  expect(replayCommand('gen1.abc', { baseUrl: 'https://staging.example.com/v1', apiUrl: "https://q.example.com/it's" })).toBe(
    "BASE_URL='https://staging.example.com/v1' API_URL='https://q.example.com/it'\\''s' CONFORMANCE_REPLAY=gen1.abc npm run certify",
  );
  expect(replayCommand('gen1.abc')).toBe('CONFORMANCE_REPLAY=gen1.abc npm run certify');
});
