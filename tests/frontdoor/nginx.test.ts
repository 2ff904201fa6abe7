/**
 * A conformant service behind a real front door: Debian's nginx terminating TLS with a private CA
 * (made here, trusted through NODE_EXTRA_CA_CERTS), default settings, kept-alive upstreams, before
 * the bundled reference server (behind the staging simulator's proxy, which counts early requests
 * and bans), on two conformant limiters. nginx answers some requests itself (405 to TRACE, 400 to
 * an invalid percent-encoding): certify passes, and those answers are warnings that name nginx
 * (RFC 9110 §3.7, §15.5.1, §15.5.6).
 */
import { test, expect } from '../test.ts';
import { startStagingTarget, type StagingConditions, type StagingTarget } from '../../faults/staging/simulator.ts';
import { certifyStaging, type StagingOutcome } from '../../faults/staging/run.ts';
import { STAGING_ENV } from '../../faults/staging/settings.ts';
import { throughProxy } from '../../faults/proxy.ts';
import { SECOND_RUN_WINDOW_MS } from '../../faults/harness.ts';
import { runInBackground } from '../background.ts';
import { startNginx } from './nginx.ts';

test.beforeAll(runInBackground);

/** A deadline against a hang, not a speed bound: TLS, nginx and a proxy on a busy runner, on 20-s windows. */
const RUN_TIMEOUT_MS = 900_000;
/** Two hops more than the staging tests (nginx, TLS), at a lower priority beside a busy runner's other work: a request's deadlines are longer, no verdict rule changes. */
const SLOW_RUNNER = { LOAD_TIMEOUT_S: '30', REQUEST_TIMEOUT_MS: '30000' };
/** Every generated message case is sent (a test server's messages cost nothing): the generated requirements are certified whole. */
const EVERY_MESSAGE = { MAX_MESSAGES: '1000' };

/** certify through nginx before `target`; nginx is stopped whatever happens. */
async function certifyThroughNginx(target: StagingTarget): Promise<StagingOutcome> {
  const nginx = await startNginx(target.env.BASE_URL!.replace(/\/v1\/?$/, ''));
  try {
    const env = { ...(throughProxy(target.env, nginx.url) as Record<string, string>), NODE_EXTRA_CA_CERTS: nginx.caFile };
    return await certifyStaging(
      { ...target, env },
      { env: { ...STAGING_ENV, ...SLOW_RUNNER, ...EVERY_MESSAGE }, timeoutMs: RUN_TIMEOUT_MS },
    );
  } finally {
    await nginx.close();
  }
}

function describe(o: StagingOutcome): string {
  const lines = (r: Record<string, unknown>) =>
    Object.entries(r)
      .map(([id, v]) => `    ${id}: ${String(v).slice(0, 400)}`)
      .join('\n') || '    (none)';
  return `verdict ${o.verdict} (exit ${o.exitCode}) in ${(o.durationMs / 1000).toFixed(1)} s\n  failing:\n${lines(o.failing)}\n  not certified:\n${lines(o.notCertified)}${o.verdict === 'missing' ? `\n  certify output (tail):\n${o.tail}` : ''}`;
}

/** The conformant limiters certified behind nginx: the reference server's fixed windows, and a token bucket refilled once a second. */
const LIMITERS: Array<{ name: string; conditions: StagingConditions }> = [
  { name: 'fixed windows', conditions: {} },
  { name: 'a token bucket', conditions: { tokenBucket: true } },
];

for (const { name, conditions } of LIMITERS) {
  test(`behind nginx with TLS (private CA), ${name}: certify passes, nothing early, no ban, the store restored, nginx's own answers are warnings naming it`, async ({}, testInfo) => {
    test.setTimeout(RUN_TIMEOUT_MS + 60_000);
    // Windows of 20 s: through TLS and a proxy on a busy runner, a 5-s window can end before the run spends its limit (not certified).
    const target = await startStagingTarget(conditions, { minuteWindowMs: SECOND_RUN_WINDOW_MS });
    let outcome: StagingOutcome;
    try {
      outcome = await certifyThroughNginx(target);
    } finally {
      await target.close();
    }
    expect(outcome.verdict, `certify through nginx against a conformant server: expected pass\n  ${describe(outcome)}`).toBe('pass');
    // What nginx answers is judged (warned), never left not certified; what a busy runner could not tell elsewhere is the run's own limit.
    const generated = Object.entries(outcome.notCertified).filter(([id]) => id.startsWith('GEN-'));
    expect(generated, 'generated requirements left not certified').toEqual([]);
    expect(outcome.retry.early, 'requests sent on a key while its 429 was pending').toEqual({});
    expect(outcome.retry.bans, 'bans earned').toEqual({});
    expect(
      outcome.restored,
      `the store after the run equals the store before\n  before: ${outcome.before}\n  after:  ${outcome.after}`,
    ).toBe(true);
    for (const [id, why] of Object.entries(outcome.notCertified))
      testInfo.annotations.push({ type: 'not certified', description: `${id}: ${why}` });
    const warnings = Object.values(outcome.warned).flat();
    const byNginx = (status: number, what: RegExp) => warnings.filter((w) => w.includes(`${status}`) && /nginx/.test(w) && what.test(w));
    expect(byNginx(405, /TRACE/), `a warning names nginx's 405 to TRACE; warnings:\n${warnings.slice(0, 20).join('\n')}`).not.toHaveLength(
      0,
    );
    expect(
      byNginx(400, /%zz|invalid-percent/),
      `a warning names nginx's 400 to %zz; warnings:\n${warnings.slice(0, 20).join('\n')}`,
    ).not.toHaveLength(0);
  });
}
