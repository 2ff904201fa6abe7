import { test, expect } from '../test.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { PhaseResult } from '../../certify/phases.ts';
import { listLeftOut } from '../../certify/steps/left-out.ts';
import { collectResults, readRedactions } from '../../certify/steps/merge.ts';
import { resolveTarget } from '../../certify/steps/resolve-target.ts';
import { runPhases } from '../../certify/steps/run-phases.ts';
import { PHASES, phasesOfProfile } from '../../certify/phase-list.ts';
import type { ReferenceTarget } from '../../certify/reference-target.ts';

/** certify's steps up to the merge (certify/steps/), one at a time, with fakes for the child processes. */

const KEY = 'ik_step_test_7c1d9e0f2a3b4c5d';

function tempDir(): string {
  return fs.mkdtempSync(path.join(os.tmpdir(), 'certify-steps-'));
}

const listing = {
  suites: [
    {
      file: 'rate-limit/retry-after.spec.ts',
      specs: [
        {
          title: 'RL-05 the request past the limit gets 429',
          tests: [{ projectName: 'rate-limit', annotations: [{ type: 'requirement', description: 'RL-06' }] }],
        },
      ],
      suites: [
        { file: 'load/capacity.spec.ts', specs: [{ title: 'LOAD-01 capacity', tests: [{ projectName: 'load', annotations: [] }] }] },
      ],
    },
  ],
};

const phaseResult = (phase: string, extra: Partial<PhaseResult> = {}): PhaseResult => ({
  phase,
  exitCode: 0,
  signal: null,
  durationMs: 1234,
  timedOut: false,
  reportWritten: true,
  tail: [],
  ...extra,
});

test("phases: the phase list is the Playwright config's projects; readonly runs those marked readonly", () => {
  const order = ['functional', 'rate-limit', 'load'].map((p) => PHASES.indexOf(p));
  expect(
    order.every((i, k) => i >= 0 && (k === 0 || i > order[k - 1])),
    `phases in order: ${PHASES.join(', ')}`,
  ).toBe(true);
  expect(phasesOfProfile('full')).toEqual([...PHASES]);
  expect(phasesOfProfile('readonly')).toContain('functional');
  expect(phasesOfProfile('readonly')).not.toContain('rate-limit');
  expect(phasesOfProfile('readonly')).not.toContain('load');
});

test('resolve the target: BASE_URL is used as given; without it the bundled server is started and closed', async () => {
  const external = await resolveTarget({ baseUrl: 'https://h/v1', profile: 'full' }, { API_KEY: KEY, LOAD_KEY: KEY });
  expect(external.env.BASE_URL).toBe('https://h/v1');
  expect(external.reference).toBeUndefined();
  expect(external.description).toMatchObject({
    kind: 'external',
    baseUrl: 'https://h/v1',
    apiUrl: null,
    rateLimitKey: 'not given',
    loadKey: 'given',
    tls: 'verified',
  });
  expect((await resolveTarget({ baseUrl: 'https://h/v1', profile: 'full' }, { INSECURE_TLS: '1' })).description.tls).toBe(
    'not verified (INSECURE_TLS)',
  );
  // The quickstart's address carries a key too: an https API_URL makes TLS part of what was done.
  expect((await resolveTarget({ baseUrl: 'http://h/v1', apiUrl: 'https://h/quickstart', profile: 'full' }, {})).description.tls).toBe(
    'verified',
  );
  expect(
    (await resolveTarget({ baseUrl: 'http://h/v1', apiUrl: 'https://h/quickstart', profile: 'full' }, { INSECURE_TLS: '1' })).description
      .tls,
  ).toBe('not verified (INSECURE_TLS)');
  expect(JSON.stringify(external.description).includes(KEY), 'the description holds no key').toBe(false);

  let closed = 0;
  const fake = {
    env: { BASE_URL: 'http://127.0.0.1:1/v1', API_KEY: KEY },
    settings: { minuteWindowMs: 5000, banMs: 2000, apiPlan: 'business' },
    close: async () => {
      closed++;
    },
  } as unknown as ReferenceTarget;
  const bundled = await resolveTarget({ profile: 'readonly' }, {}, async () => fake);
  expect(bundled.description).toMatchObject({
    kind: 'reference',
    baseUrl: 'http://127.0.0.1:1/v1',
    profile: 'readonly',
    referenceSettings: fake.settings,
    tls: 'none (http)',
  });
  await bundled.close();
  expect(closed).toBe(1);
});

test('list what is left out: each check of a phase not run is a not-certified record with the reason', async () => {
  const out = await listLeftOut(['rate-limit', 'load'], 'readonly', async () => listing);
  expect(out.notRun.map((t) => [t.title, t.outcome])).toEqual([
    ['RL-05 the request past the limit gets 429', 'skipped'],
    ['LOAD-01 capacity', 'skipped'],
  ]);
  expect(out.notRun[0].annotations).toEqual([
    { type: 'requirement', description: 'RL-06' },
    { type: 'not-certified', description: 'CONFORMANCE_PROFILE=readonly does not run the rate-limit phase' },
  ]);
  expect(out.lines).toEqual([
    '▷ phase rate-limit not run (profile readonly): 1 check listed as not certified\n',
    '▷ phase load not run (profile readonly): 1 check listed as not certified\n',
  ]);
  expect(out.runErrors).toEqual([]);
  const failed = await listLeftOut(['load'], 'readonly', async () => undefined);
  expect(failed.runErrors).toEqual(['could not list the checks of the phases not run (load); they are missing from the report']);
  expect(
    await listLeftOut([], 'full', async () => {
      throw new Error('not called');
    }),
  ).toEqual({ notRun: [], lines: [], runErrors: [] });
});

test('run the phases: in order, a failing phase does not stop the next; no report or a timeout is a run problem; a signal starts no further phase', async () => {
  const said: string[] = [];
  const ran: string[] = [];
  const results: Record<string, PhaseResult> = {
    functional: phaseResult('functional', { exitCode: 1 }),
    'rate-limit': phaseResult('rate-limit', { reportWritten: false, exitCode: null, signal: 'SIGKILL', tail: ['a', 'b'] }),
    load: phaseResult('load', { timedOut: true }),
  };
  // Each phase after the ones before it (phases tied this way run in order; tests/load/phases.test.ts covers the overlap).
  const inOrder = (p: string, running: readonly string[]) => running.slice(0, running.indexOf(p));
  const out = await runPhases(
    ['functional', 'rate-limit', 'load'],
    async (p) => {
      ran.push(p);
      return results[p];
    },
    (t) => said.push(t),
    { phaseTimeoutS: 60, before: inOrder },
  );
  expect(ran).toEqual(['functional', 'rate-limit', 'load']);
  expect(said).toContain('■ phase functional finished in 1.2 s: some checks failed\n');
  expect(said).toContain('■ phase load finished in 1.2 s: stopped after PHASE_TIMEOUT_S\n');
  expect(out.runErrors).toEqual([
    'phase rate-limit ended without a report (exit SIGKILL); its checks have no result. Last output: a | b',
    'phase load was stopped after PHASE_TIMEOUT_S=60 s',
  ]);

  const abort = new AbortController();
  const stopped = await runPhases(
    ['functional', 'load'],
    async (p) => {
      abort.abort();
      return phaseResult(p);
    },
    () => {},
    { phaseTimeoutS: 60, signal: abort.signal, before: inOrder },
  );
  expect(stopped.results.map((r) => r.phase)).toEqual(['functional']);
  // A signal is not harness trouble: the verdict makes what did not end not certified (gate: interrupted).
  expect(stopped.runErrors).toEqual([]);
});

test("merge: the records the run's reporter wrote per phase, and the run's errors; no report at all is a run problem, a phase without one is not counted", () => {
  const dir = tempDir();
  try {
    expect(collectResults(dir, ['functional'], (s) => s).runErrors).toEqual(['no phase produced a report']);
    expect(collectResults(dir, [], (s) => s).runErrors).toEqual([]);
    const record = {
      title: 'AUTH-02 x',
      project: 'functional',
      file: 'a.spec.ts',
      tags: [],
      outcome: 'passed',
      errors: [],
      annotations: [],
      requests: 1,
    };
    const counts = { passed: 1, failed: 0, flaky: 0, skipped: 0 };
    fs.writeFileSync(
      path.join(dir, 'functional.json'),
      JSON.stringify({ phase: 'functional', endedAt: 1, timedOut: false, cutShort: false, tests: [record], counts }),
    );
    fs.writeFileSync(path.join(dir, 'run.json'), JSON.stringify({ status: 'failed', runErrors: [`global ${KEY}`] }));
    const ok = collectResults(dir, ['functional', 'load'], (s) => s.split(KEY).join('[redacted]'));
    expect(ok.tests.map((t) => [t.title, t.project, t.outcome, t.file])).toEqual([['AUTH-02 x', 'functional', 'passed', 'a.spec.ts']]);
    expect(ok.runErrors).toEqual(['global [redacted]']);

    // The redacting reporter's log (one per run; an older run wrote one per phase).
    const redactions = path.join(dir, 'redactions');
    fs.mkdirSync(redactions);
    fs.writeFileSync(
      path.join(redactions, 'functional.jsonl'),
      [
        JSON.stringify({ kind: 'attachment-file', file: 'f.md', attachment: 'a', test: 't' }),
        JSON.stringify({ kind: 'in-memory', count: 2 }),
        'not json',
      ].join('\n'),
    );
    fs.writeFileSync(path.join(redactions, 'load.jsonl'), `${JSON.stringify({ kind: 'in-memory', count: 1 })}\n`);
    expect(readRedactions(path.join(dir, 'absent'))).toEqual({ leaks: [], inMemory: 0 });
    const r = readRedactions(redactions);
    expect(r.inMemory).toBe(3);
    expect(r.leaks).toEqual([
      'f.md (attachment "a" of "t"): a key was written there by the Playwright worker; certify scrubbed it afterwards',
    ]);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
