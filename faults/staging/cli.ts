/**
 * `npx tsx faults/staging/cli.ts <condition> […]`: one certify run against the reference server
 * under the staging conditions named (combined), e.g. `latency tls three-pets strict-ban
 * connection-close`, or `token-bucket`. Prints the verdict, failing requirements, early requests,
 * bans, whether the store was restored, and the time. `--list` names the conditions.
 */
import { CONDITIONS, conditionsOf } from './simulator.ts';
import { runStaging } from './run.ts';
import { STAGING_ENV } from './settings.ts';

const args = process.argv.slice(2);
if (args.includes('--list') || args.length === 0) {
  for (const [name, c] of Object.entries(CONDITIONS)) console.log(`${name.padEnd(18)} ${JSON.stringify(c)}`);
  process.exit(args.length === 0 ? 2 : 0);
}
const out = await runStaging(conditionsOf(args), { env: STAGING_ENV });
console.log(`staging [${args.join(' + ')}]: verdict ${out.verdict} (exit ${out.exitCode}) in ${(out.durationMs / 1000).toFixed(1)} s`);
console.log(
  `  early requests ${JSON.stringify(out.retry.early)}, bans ${JSON.stringify(out.retry.bans)}, 429s ${JSON.stringify(out.retry.refusals)}, store restored: ${out.restored}`,
);
for (const [id, reason] of Object.entries(out.failing)) console.log(`  FAIL ${id}: ${reason}`);
for (const [id, reason] of Object.entries(out.notCertified)) console.log(`  not certified ${id}: ${reason}`);
if (out.verdict === 'missing') console.log(out.tail);
if (!out.restored) console.log(`  store before: ${out.before}\n  store after:  ${out.after}`);
