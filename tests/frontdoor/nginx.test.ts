/**
 * A conformant service behind a real front door: Debian's nginx terminating TLS with a private CA
 * (made here, trusted through NODE_EXTRA_CA_CERTS), default settings, kept-alive upstreams, before
 * the bundled reference server (behind the staging simulator's proxy, which counts early requests
 * and bans). nginx answers some requests itself (405 to TRACE, 400 to an invalid percent-encoding):
 * certify passes, and those answers are warnings that name nginx (RFC 9110 §3.7, §15.5.1, §15.5.6).
 * nginx's own 502 (an upstream connection reset or closed early) is named from its error log.
 */
import { test, expect } from '../test.ts';
import { startStagingTarget, type StagingTarget } from '../../faults/staging/simulator.ts';
import { certifyStaging, type StagingOutcome } from '../../faults/staging/run.ts';
import { STAGING_ENV } from '../../faults/staging/settings.ts';
import { throughProxy } from '../../faults/proxy.ts';
import { runInBackground } from '../background.ts';
import { startNginx } from './nginx.ts';

test.beforeAll(runInBackground);

/** A deadline against a hang, not a speed bound: TLS, nginx and a proxy on a busy runner. */
const RUN_TIMEOUT_MS = 600_000;
/**
 * Two hops more than the staging tests (nginx, TLS), at a lower priority beside a busy runner's
 * other work: a request's deadlines are longer, and MAX_RETRY_AFTER_S keeps its default (a check's
 * time limit is MAX_RETRY_AFTER_S + 60 s); no verdict rule changes.
 */
const SLOW_RUNNER = { LOAD_TIMEOUT_S: '30', REQUEST_TIMEOUT_MS: '30000', MAX_RETRY_AFTER_S: '120' };

/** What nginx's error log (level info) says about its upstream: each reset or early close it answered 502 for. */
function upstreamTrouble(log: string): string[] {
  return log.split('\n').filter((l) => /upstream/.test(l) && /\[(error|crit|alert)\]/.test(l));
}

/** certify through nginx before `target`; nginx is stopped whatever happens. */
async function certifyThroughNginx(target: StagingTarget): Promise<{ outcome: StagingOutcome; trouble: string[] }> {
  const nginx = await startNginx(target.env.BASE_URL!.replace(/\/v1\/?$/, ''), { logLevel: 'info' });
  try {
    const env = { ...(throughProxy(target.env, nginx.url) as Record<string, string>), NODE_EXTRA_CA_CERTS: nginx.caFile };
    const outcome = await certifyStaging({ ...target, env }, { env: { ...STAGING_ENV, ...SLOW_RUNNER }, timeoutMs: RUN_TIMEOUT_MS });
    return { outcome, trouble: upstreamTrouble(nginx.errorLog()) };
  } finally {
    await nginx.close();
  }
}

function describe(o: StagingOutcome, trouble: string[]): string {
  const lines = (r: Record<string, unknown>) =>
    Object.entries(r)
      .map(([id, v]) => `    ${id}: ${String(v).slice(0, 900)}`)
      .join('\n') || '    (none)';
  const log = trouble.length
    ? `\n  nginx's error log on its upstream:\n${trouble
        .slice(0, 10)
        .map((l) => `    ${l.slice(0, 300)}`)
        .join('\n')}`
    : '';
  return `verdict ${o.verdict} (exit ${o.exitCode}) in ${(o.durationMs / 1000).toFixed(1)} s\n  failing:\n${lines(o.failing)}\n  not certified:\n${lines(o.notCertified)}${log}${o.verdict === 'missing' ? `\n  certify output (tail):\n${o.tail}` : ''}`;
}

test("behind nginx with TLS (private CA): certify passes, nothing early, no ban, the store restored, nginx's own answers are warnings naming it", async ({}, testInfo) => {
  test.setTimeout(RUN_TIMEOUT_MS + 60_000);
  const target = await startStagingTarget({});
  let run: { outcome: StagingOutcome; trouble: string[] };
  try {
    run = await certifyThroughNginx(target);
  } finally {
    await target.close();
  }
  const { outcome, trouble } = run;
  expect(outcome.verdict, `certify through nginx against a conformant server: expected pass\n  ${describe(outcome, trouble)}`).toBe('pass');
  // What nginx answers is judged (warned), never left not certified; what a busy runner could not tell elsewhere is the run's own limit.
  const generated = Object.entries(outcome.notCertified).filter(([id]) => id.startsWith('GEN-'));
  expect(generated, 'generated requirements left not certified').toEqual([]);
  expect(outcome.retry.early, 'requests sent on a key while its 429 was pending').toEqual({});
  expect(outcome.retry.bans, 'bans earned').toEqual({});
  expect(outcome.restored, `the store after the run equals the store before\n  before: ${outcome.before}\n  after:  ${outcome.after}`).toBe(
    true,
  );
  expect(trouble, "nginx's upstream (the service) reset or closed no connection under a request").toEqual([]);
  for (const [id, why] of Object.entries(outcome.notCertified))
    testInfo.annotations.push({ type: 'not certified', description: `${id}: ${why}` });
  const warnings = Object.values(outcome.warned).flat();
  const byNginx = (status: number, what: RegExp) => warnings.filter((w) => w.includes(`${status}`) && /nginx/.test(w) && what.test(w));
  const shown = `warnings:\n${warnings.slice(0, 20).join('\n')}`;
  expect(byNginx(405, /TRACE/), `a warning names nginx's 405 to TRACE; ${shown}`).not.toHaveLength(0);
  expect(byNginx(400, /%zz|invalid-percent/), `a warning names nginx's 400 to %zz; ${shown}`).not.toHaveLength(0);
});
