/**
 * Schema-driven generated requests (ledger GEN-01 … GEN-05, GEN-08): for every operation of
 * `schemas/openapi.yaml`, each request class is sent through the `api` client and judged by the
 * rules of `judge.ts`. One test per operation and rule; the first test of an operation sends the
 * cases and keeps the outcome in the test output folder, the next ones judge the same outcome, so
 * the cases are sent once. Operations with a state-changing method are `@mutates`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expectFact, type ApiClient } from '../fixtures.ts';
import { petFreeFirst, test, touchesPets } from './pets-held.ts';
import { markNotCertified } from '../fixtures/verdicts.ts';
import type { Operation } from './document.ts';
import { mutates, phasePlan } from './phase-plan.ts';
import { unrestoredAnnotation } from '../lib/unrestored.ts';
import { runOperation, type OperationRun } from './run-cases.ts';
import { decodeToken } from './replay.ts';
import {
  abandonedLine,
  coverageSummary,
  leftOutLine,
  messagesSpentLine,
  ruleFailures,
  ruleFindings,
  ruleWarnings,
  summary,
} from './report.ts';
import { attachFinding, formatFinding } from '../../core/finding.ts';
import { RULES } from './judge.ts';
import { ANNOTATION } from '../../core/results.ts';

const { settings: SETTINGS, readonly: READONLY, operations: OPERATIONS, coverage: COVERAGE, plan: PLAN } = phasePlan(process.env);
const REPLAY = SETTINGS.replay ? decodeToken(SETTINGS.replay) : undefined;

const RULE_TESTS: Array<{ id: string; fact: string; when?: (op: Operation) => boolean }> = [
  { id: RULES.noServerError, fact: 'no generated request gets a 5xx' },
  { id: RULES.noHang, fact: 'every generated request gets a response (no hang, no dropped connection)' },
  { id: RULES.negative, fact: 'every invalid generated request is refused with a 4xx Error body whose status is the HTTP status' },
  { id: RULES.rateLimitHeaders, fact: 'every response to a generated request carries the X-RateLimit headers' },
  { id: RULES.positive, fact: 'every valid generated request gets a schema-valid 2xx or a refusal the document allows' },
  { id: RULES.oddErrorBody, fact: 'every 4xx to an unusual generated request is an Error body' },
  {
    id: 'GEN-06',
    fact: 'the generated cases leave the inventory as they found it',
    when: (op) => mutates(op) && op.pathParameters.length > 0,
  },
];

/** The operation's run: sent by the first test that needs it, read back by the others. */
async function operationRun(api: ApiClient, op: Operation, folder: string): Promise<OperationRun> {
  const file = path.join(folder, '.generated', `${op.id.replace(/[^\w-]+/g, '_')}-${SETTINGS.seed}.json`);
  if (fs.existsSync(file)) return JSON.parse(fs.readFileSync(file, 'utf8')) as OperationRun;
  const run = await runOperation(api, op, OPERATIONS, {
    seed: SETTINGS.seed,
    share: REPLAY ? 50 : PLAN.operations[op.id]!,
    safeMethodsOnly: READONLY,
    coverage: REPLAY
      ? { cases: COVERAGE[op.id]!, leftOut: [] }
      : { cases: PLAN.coverage.selected[op.id]!, leftOut: PLAN.coverage.left[op.id]!.map((c) => c.name) },
    ...(REPLAY ? { replay: REPLAY } : {}),
  });
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, JSON.stringify(run));
  return run;
}

// The operations that touch no pet run first, without waiting for the pets' hold (`pets-held.ts`).
for (const op of petFreeFirst(OPERATIONS)) {
  test.describe(`generated ${op.id}`, () => {
    test.use({ touchesPets: touchesPets(op, OPERATIONS) });
    test(
      `GEN-01 ${op.id}: every coverage case of the operation is sent within the budget`,
      { tag: mutates(op) ? ['@mutates', '@generated'] : ['@generated'] },
      async ({ api }, testInfo) => {
        if (SETTINGS.problems.length) markNotCertified(testInfo, `generated settings: ${SETTINGS.problems.join('; ')}`);
        if (REPLAY) markNotCertified(testInfo, 'CONFORMANCE_REPLAY runs one saved case only');
        const run = await operationRun(api, op, testInfo.project.outputDir);
        testInfo.annotations.push({
          type: ANNOTATION.evidence,
          description: `budget ${SETTINGS.budget} requests (${SETTINGS.budgetBasis})`,
        });
        testInfo.annotations.push({ type: ANNOTATION.evidence, description: coverageSummary(run) });
        const spent = run.coverage.messagesSpent?.length ?? 0;
        if (run.coverage.leftOut.length || run.coverage.abandoned.length || spent) {
          markNotCertified(
            testInfo,
            [
              run.coverage.leftOut.length ? leftOutLine(run) : '',
              run.coverage.abandoned.length ? abandonedLine(run) : '',
              spent ? messagesSpentLine(run) : '',
            ]
              .filter(Boolean)
              .join('; '),
          );
        }
        const sent = Object.values(run.coverage.sent).reduce((a, b) => a + b, 0);
        expectFact(sent === COVERAGE[op.id]!.length, {
          what: `${op.id}: coverage cases sent`,
          expected: `all ${COVERAGE[op.id]!.length}`,
          observed: String(sent),
        });
      },
    );
    for (const rule of RULE_TESTS.filter((r) => !r.when || r.when(op))) {
      test(
        `${rule.id} ${op.id}: ${rule.fact}`,
        { tag: mutates(op) ? ['@mutates', '@generated'] : ['@generated'] },
        async ({ api, warn }, testInfo) => {
          if (SETTINGS.problems.length) markNotCertified(testInfo, `generated settings: ${SETTINGS.problems.join('; ')}`);
          if (REPLAY && (!['cases', 'coverage'].includes(REPLAY.check) || REPLAY.op !== op.id)) {
            markNotCertified(testInfo, 'CONFORMANCE_REPLAY runs one saved case only');
          }
          const run = await operationRun(api, op, testInfo.project.outputDir);
          testInfo.annotations.push({ type: ANNOTATION.evidence, description: summary(run) });
          testInfo.annotations.push({ type: ANNOTATION.evidence, description: coverageSummary(run) });
          for (const u of run.unrestored) testInfo.annotations.push(unrestoredAnnotation(u));
          for (const note of run.notes) testInfo.annotations.push({ type: ANNOTATION.evidence, description: note });
          if (rule.id === 'GEN-06') for (const w of run.warnings) warn(w);
          const failures = ruleFailures(run, rule.id, api.env);
          for (const f of ruleFindings(run, rule.id)) attachFinding(testInfo, f);
          for (const f of ruleWarnings(run, rule.id)) warn(formatFinding(f));
          if (failures.length)
            throw new Error(
              `${rule.id} ${op.id}: expected no deviation; observed ${failures.length} shrunk case${failures.length === 1 ? '' : 's'}:\n${failures.join('\n')}`,
            );
          if (rule.id === 'GEN-06' && run.notCertified) markNotCertified(testInfo, api.redact(run.notCertified));
        },
      );
    }
  });
}
