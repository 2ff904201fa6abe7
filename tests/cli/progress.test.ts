import { test, expect } from '../test.ts';
import { progressText, runPhases } from '../../certify/steps/run-phases.ts';
import type { PhaseResult } from '../../certify/phases.ts';

test('progress: one line per phase with its budget, then the requests and waits it spent and what is left', async () => {
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
    '■ phase functional finished in 1.2 s: all checks passed; 227 requests, 0 429s, 0 waits; 1 phase left\n',
    '▶ phase 2/2: rate-limit (at most 900 s, PHASE_TIMEOUT_S)\n',
    '■ phase rate-limit finished in 1.2 s: all checks passed; 1 request, 1 429, 1 wait; last phase\n',
  ]);
  expect(progressText({ requests: 5, refused: 0, waits: 0 }, { requests: 5, refused: 2, waits: 2 }, 2)).toBe(
    '; 0 requests, 2 429s, 2 waits; 2 phases left',
  );
});
