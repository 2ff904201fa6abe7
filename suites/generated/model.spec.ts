/**
 * Stateful sequences against a model of the store (GEN-06) and consistency under concurrency on
 * one pet (GEN-07). Both change stock with a valid key (`@mutates`) and put it back.
 */
import type { TestInfo } from '@playwright/test';
import { test } from './pets-held.ts';
import { markNotCertified } from '../fixtures/verdicts.ts';
import { attachFinding, formatFinding } from '../../core/finding.ts';
import { decodeToken, encodeToken } from './replay.ts';
import { phasePlan } from './phase-plan.ts';
import { replayCommand } from './report.ts';
import { runStateful } from './stateful.ts';
import { runConsistency } from './consistency.ts';
import { ANNOTATION } from '../../core/results.ts';

// The same plan as the generated cases: their shares and these add up to the budget.
const { settings: SETTINGS, plan: ALLOCATION } = phasePlan(process.env);
const REPLAY = SETTINGS.replay ? decodeToken(SETTINGS.replay) : undefined;
const TAGS = { tag: ['@mutates', '@generated'] };

function replayOnly(check: string, testInfo: TestInfo) {
  if (REPLAY && REPLAY.check !== check) {
    markNotCertified(testInfo, 'CONFORMANCE_REPLAY runs one saved case only');
  }
}

test('GEN-06 generated sequences of list, update and send message agree with a model of the store', TAGS, async ({ api }, testInfo) => {
  if (SETTINGS.problems.length) markNotCertified(testInfo, `generated settings: ${SETTINGS.problems.join('; ')}`);
  replayOnly('stateful', testInfo);
  const run = await runStateful(api, REPLAY ? 40 : ALLOCATION.stateful, SETTINGS.seed, REPLAY);
  testInfo.annotations.push({
    type: ANNOTATION.evidence,
    description: `${run.sequences} sequence(s), ${run.requests} requests (seed ${SETTINGS.seed})`,
  });
  const lines = run.findings.map(formatFinding);
  if (run.failure)
    lines.push(
      `  sequence (shrunk in ${run.failure.shrinks} steps${run.failure.shrinkCut ? ', shrinking stopped at the budget' : ''}): ${run.failure.sequence}`,
      `  replay: ${replayCommand(run.failure.token, api.env)}`,
    );
  for (const f of run.findings) attachFinding(testInfo, f);
  if (lines.length)
    throw new Error(`GEN-06: expected every list to match the model and every change restored; observed:\n${lines.join('\n')}`);
  if (run.notCertified) markNotCertified(testInfo, api.redact(run.notCertified));
  if (run.messages.leftOut) {
    const left = `${run.messages.leftOut} message step(s) of the sequences not sent, the run's MAX_MESSAGES spent (raise MAX_MESSAGES to send them; each queues a real message on the target)`;
    testInfo.annotations.push({ type: ANNOTATION.evidence, description: `${run.messages.sent} message step(s) sent; ${left}` });
    // Sequences that sent no message did not judge sending one among the updates.
    if (!run.messages.sent) markNotCertified(testInfo, left);
  }
});

test('GEN-07 concurrent updates of one pet are linearizable', TAGS, async ({ api }, testInfo) => {
  if (SETTINGS.problems.length) markNotCertified(testInfo, `generated settings: ${SETTINGS.problems.join('; ')}`);
  replayOnly('concurrency', testInfo);
  const run = await runConsistency(api, SETTINGS.writers, REPLAY?.seed ?? SETTINGS.seed);
  testInfo.annotations.push({
    type: ANNOTATION.evidence,
    description: `pet ${run.petId}: writes ${run.writes.join(', ')}; ${run.history.length} operations, ${run.requests} requests`,
  });
  const token = replayCommand(encodeToken({ check: 'concurrency', seed: REPLAY?.seed ?? SETTINGS.seed }), api.env);
  const lines = run.findings.map(formatFinding);
  for (const f of run.findings) attachFinding(testInfo, f);
  if (lines.length)
    throw new Error(
      `GEN-07: expected a linearizable history; observed:\n${lines.join('\n')}\n  history: ${run.history.map((h) => `${h.label} ${h.kind} ${h.value} [${h.start.toFixed(1)}, ${h.end.toFixed(1)}]`).join('; ')}\n  replay: ${token}`,
    );
  if (run.notCertified) markNotCertified(testInfo, api.redact(run.notCertified));
});
