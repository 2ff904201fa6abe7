/**
 * Phases on different keys overlap (certify/steps/run-phases.ts with the config's
 * `metadata.after` and `metadata.aloneWith`): the capacity runs on LOAD_KEY and, given
 * RATE_LIMIT_KEY, the 429 sequence and bursts on it start with the functional checks (without it
 * the sequence spends API_KEY's window, once the functional checks have ended), and the generated
 * checks once the functional checks have ended (they hold every pet while they run, so the
 * capacity mix, which holds one, is never beside them); each phase's wall time and window waits
 * are reported.
 */
import { test, expect } from '../test.ts';
import { phasesBefore, PHASES, START_FIRST_MAX_MS, yieldsAtStart } from '../../certify/phase-list.ts';
import { firstRequestAfter, runPhases } from '../../certify/steps/run-phases.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { windowWaitsOf, type PhaseResult } from '../../certify/phases.ts';
import { phaseSummaries } from '../../certify/steps/judge.ts';
import { printSummary } from '../../certify/steps/print.ts';
import { computeVerdict } from '../../certify/verdict.ts';

const result = (phase: string, durationMs: number, waitedS?: number): PhaseResult => ({
  phase,
  exitCode: 0,
  signal: null,
  durationMs,
  timedOut: false,
  reportWritten: true,
  tail: [],
  ...(waitedS !== undefined ? { waitedS } : {}),
});

test('the config ties rate-limit (without RATE_LIMIT_KEY) and generated to the phases they must follow; load follows none', () => {
  expect(PHASES).toEqual(['functional', 'rate-limit', 'load', 'generated']);
  expect(phasesBefore('functional')).toEqual([]);
  expect(phasesBefore('load')).toEqual([]);
  expect(phasesBefore('rate-limit')).toEqual(['functional']);
  expect(phasesBefore('generated')).toEqual(['functional']);
  // A prerequisite the run leaves out (a profile, the matrix's onlyPhases) is not waited for.
  expect(phasesBefore('generated', ['load', 'generated'])).toEqual([]);
  // With RATE_LIMIT_KEY the rate-limit phase works on that key alone: it waits for no phase.
  // Without it, the 429 sequence spends API_KEY's window, after the functional checks.
  expect(phasesBefore('rate-limit', PHASES, ['API_KEY', 'RATE_LIMIT_KEY'])).toEqual([]);
  expect(phasesBefore('rate-limit', PHASES, ['API_KEY', 'LOAD_KEY'])).toEqual(['functional']);
  expect(phasesBefore('generated', PHASES, ['API_KEY', 'RATE_LIMIT_KEY'])).toEqual(['functional']);
});

test('phases without a tie run at the same time; a tied phase starts only when its prerequisites have ended', async () => {
  const events: string[] = [];
  const length: Record<string, number> = { functional: 40, 'rate-limit': 60, load: 80, generated: 10 };
  const said: string[] = [];
  const out = await runPhases(
    PHASES,
    async (p) => {
      events.push(`start ${p}`);
      await new Promise((r) => setTimeout(r, length[p]));
      events.push(`end ${p}`);
      return result(p, length[p]!, p === 'rate-limit' ? 12.5 : undefined);
    },
    (t) => said.push(t),
    { phaseTimeoutS: 60 },
  );
  expect(events.slice(0, 2).sort()).toEqual(['start functional', 'start load']);
  expect(events.indexOf('start rate-limit')).toBeGreaterThan(events.indexOf('end functional'));
  expect(events.indexOf('start generated')).toBeGreaterThan(events.indexOf('end functional'));
  // Overlapped, told by the order of events, not by a wall clock a busy runner stretches: the phases
  // tied to functional start while load (no tie) still runs; one at a time, load would have ended first.
  expect(events.indexOf('start rate-limit')).toBeLessThan(events.indexOf('end load'));
  expect(events.indexOf('start generated')).toBeLessThan(events.indexOf('end load'));
  expect(out.results.map((r) => r.phase)).toEqual(PHASES);
  expect(said).toContain('■ phase rate-limit finished in 0.1 s, 12.5 s of it waiting on windows: all checks passed\n');
});

test('the phases timed by windows start first: functional yields to a rate-limit or load phase that starts with it, and to nothing else', () => {
  const all = ['API_KEY', 'RATE_LIMIT_KEY', 'LOAD_KEY'];
  expect(PHASES.filter((p) => yieldsAtStart(p, PHASES, all))).toEqual(['functional']);
  // Without RATE_LIMIT_KEY the rate-limit phase comes after functional; load still starts with it.
  expect(yieldsAtStart('functional', PHASES, ['API_KEY', 'LOAD_KEY'])).toBe(true);
  // The readonly profile, and a run of the functional phase alone, start at once.
  expect(yieldsAtStart('functional', ['functional'], all)).toBe(false);
  expect(yieldsAtStart('functional', ['functional', 'generated'], all)).toBe(false);
  // The generated phase starts after functional whatever happens.
  expect(yieldsAtStart('generated', PHASES, all)).toBe(false);
  expect(START_FIRST_MAX_MS).toBeLessThanOrEqual(5_000);
});

test("a phase's start gate holds it after its prerequisites, and only it", async () => {
  const events: string[] = [];
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const running = runPhases(
    ['functional', 'load'],
    async (p) => {
      events.push(`start ${p}`);
      if (p === 'load') {
        await new Promise((r) => setTimeout(r, 20));
        events.push('load sent its first request');
        open();
      }
      return result(p, 1);
    },
    () => undefined,
    { phaseTimeoutS: 60, startGate: (p) => (p === 'functional' ? gate : undefined) },
  );
  await running;
  expect(events).toEqual(['start load', 'load sent its first request', 'start functional']);
});

test('the first request of the phases that start first ends the wait; without one, the wait ends at its limit; a signal ends it at once', async () => {
  let requests = 3;
  const t0 = Date.now();
  const waiting = firstRequestAfter(() => requests, 60_000, undefined, 5);
  setTimeout(() => (requests = 4), 30);
  await waiting;
  expect(Date.now() - t0).toBeLessThan(10_000);
  const t1 = Date.now();
  await firstRequestAfter(() => 0, 100, undefined, 5);
  expect(Date.now() - t1).toBeGreaterThanOrEqual(95);
  const stop = new AbortController();
  const stopped = firstRequestAfter(() => 0, 60_000, stop.signal, 5);
  stop.abort('SIGINT');
  await stopped;
});

test("each phase's window waits come from the records its steps wrote, and reach the phase summaries and the verdict line", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'phase-waits-'));
  try {
    fs.mkdirSync(path.join(dir, 'load'));
    fs.writeFileSync(
      path.join(dir, 'load', 'overload.json'),
      JSON.stringify({ phase: 'rate-limit', spent: { keys: [], durationS: 15, waitedS: 12.34 } }),
    );
    fs.writeFileSync(
      path.join(dir, 'load', 'capacity.json'),
      JSON.stringify({ phase: 'load', spent: { keys: [], durationS: 10, waitedS: 0 } }),
    );
    expect(windowWaitsOf(dir, 'rate-limit')).toBe(12.3);
    expect(windowWaitsOf(dir, 'load')).toBe(0);
    expect(windowWaitsOf(dir, 'functional')).toBeUndefined();
    expect(windowWaitsOf(undefined, 'load')).toBeUndefined();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const phases = phaseSummaries(
    ['functional', 'rate-limit'],
    ['functional', 'rate-limit'],
    [],
    [result('functional', 6000), result('rate-limit', 15600, 12.3)],
    'full',
  );
  expect(phases).toEqual([
    { name: 'functional', ran: true, seconds: 6, exit: 0 },
    { name: 'rate-limit', ran: true, seconds: 15.6, waitedS: 12.3, exit: 0 },
  ]);
  const report = { ...computeVerdict({ ledger: [], tests: [], profile: 'full', target: {}, generatedAt: 't', phases }) };
  let out = '';
  printSummary(report, (t) => (out += t), { reportsFile: 'r/conformance.md', otherReports: [], seconds: 22.1 });
  expect(out).toMatch(/certify: verdict .* \(22\.1 s: functional 6\.0 s; rate-limit 15\.6 s, 12\.3 s waiting on windows\)\n/);
});
