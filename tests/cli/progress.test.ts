import { test, expect } from '../test.ts';
import { phaseEnding, progressText, runPhases } from '../../certify/steps/run-phases.ts';
import { CONSOLE_REPORTER, PHASE_REPORTER, REDACT_REPORTER, runReporters, type PhaseResult } from '../../certify/phases.ts';
import { consoleFor } from '../../certify/steps/console.ts';

test('progress: one line per phase with its budget, then the requests and waits of the whole run while it ran and what is left', async () => {
  let counter = { requests: 0, refused: 0, waits: 0 };
  const said: string[] = [];
  const run = async (phase: string): Promise<PhaseResult> => {
    counter = {
      requests: counter.requests + (phase === 'functional' ? 227 : 1),
      refused: counter.refused + (phase === 'rate-limit' ? 1 : 0),
      waits: counter.waits + (phase === 'rate-limit' ? 1 : 0),
    };
    return { phase, exitCode: 0, signal: null, durationMs: 1234, timedOut: false, reportWritten: true, tail: [] };
  };
  await runPhases(['functional', 'rate-limit'], run, (t) => said.push(t), { phaseTimeoutS: 900, progress: () => counter });
  expect(said).toEqual([
    '▶ phase 1/2: functional (at most 900 s, PHASE_TIMEOUT_S)\n',
    '■ phase functional finished in 1.2 s: all checks passed; all phases meanwhile: 227 requests (0 answered 429), 0 waits; 1 phase left\n',
    '▶ phase 2/2: rate-limit (at most 900 s, PHASE_TIMEOUT_S)\n',
    '■ phase rate-limit finished in 1.2 s: all checks passed; all phases meanwhile: 1 request (1 answered 429), 1 wait; last phase\n',
  ]);
  expect(progressText({ requests: 5, refused: 0, waits: 0 }, { requests: 5, refused: 2, waits: 2 }, 2)).toBe(
    '; all phases meanwhile: 0 requests (2 answered 429), 2 waits; 2 phases left',
  );
});

test('console: each check, load progress and pacing only with --verbose; a phase ends with its checks counted', () => {
  // Without --verbose a phase prints through certify's own console reporter (nothing per check); with it, Playwright's `list`.
  expect(runReporters(false, [PHASE_REPORTER])).toEqual([REDACT_REPORTER, CONSOLE_REPORTER, PHASE_REPORTER]);
  expect(runReporters(true, [PHASE_REPORTER, 'html'])).toEqual([REDACT_REPORTER, 'list', PHASE_REPORTER, 'html']);
  const counts = { passed: 115, failed: 2, flaky: 0, skipped: 4 };
  const ended = { phase: 'functional', exitCode: 1, signal: null, durationMs: 1, timedOut: false, reportWritten: true, tail: [] };
  expect(phaseEnding({ ...ended, counts })).toBe('115 passed, 2 failed (4 not run)');
  expect(phaseEnding(ended)).toBe('some checks failed');
  // The run's console: `detail` says nothing unless verbose; both redact.
  const said: string[] = [];
  const quiet = consoleFor({ API_KEY: 'ik_live_0123456789abcdef' }, (t) => said.push(t));
  quiet.detail('pacing ik_live_0123456789abcdef\n');
  quiet.say('key ik_live_0123456789abcdef\n');
  const loud = consoleFor({ API_KEY: 'ik_live_0123456789abcdef' }, (t) => said.push(t), true);
  loud.detail('pacing ik_live_0123456789abcdef\n');
  expect(said).toEqual(['key <API_KEY>\n', 'pacing <API_KEY>\n']);
});
