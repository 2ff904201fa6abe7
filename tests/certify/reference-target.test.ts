import { test, expect } from '../test.ts';
import { startReferenceTarget } from '../../certify/reference-target.ts';

/** The bundled target's API, which certify and the fault meta-test share. */

async function limitOf(url: string, key: string): Promise<{ status: number; limit: string | null }> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return { status: res.status, limit: res.headers.get('x-ratelimit-limit') };
}

/** Seconds from the response's Date to its X-RateLimit-Reset. */
async function secondsToReset(url: string, key: string): Promise<number> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
  await res.arrayBuffer();
  return Number(res.headers.get('x-ratelimit-reset')) - Date.parse(res.headers.get('date')!) / 1000;
}

test('startReferenceTarget: env of a complete run on a free port, keys matching their plans, short windows', async () => {
  const target = await startReferenceTarget();
  try {
    const { env } = target;
    expect(Object.keys(env).sort()).toEqual([
      'API_KEY',
      'API_PLAN',
      'API_URL',
      'BASE_URL',
      'LOAD_KEY',
      'RATE_LIMIT_KEY',
      'RATE_LIMIT_PLAN',
    ]);
    expect(env.BASE_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(env.BASE_URL).not.toMatch(/:(0|8080)\//);
    expect(env.API_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/quickstart$/);
    expect(env.API_PLAN).toBe('business');
    expect(env.RATE_LIMIT_PLAN).toBe('free');
    expect(new Set([env.API_KEY, env.RATE_LIMIT_KEY, env.LOAD_KEY]).size).toBe(3);
    expect(await limitOf(`${env.BASE_URL}/inventory`, env.API_KEY)).toEqual({ status: 200, limit: '1000' });
    expect(await limitOf(`${env.BASE_URL}/inventory`, env.RATE_LIMIT_KEY)).toEqual({ status: 200, limit: '60' });
    expect((await limitOf(`${env.BASE_URL}/inventory`, env.LOAD_KEY)).status).toBe(200);
    expect(target.settings).toEqual({ minuteWindowMs: 4000, banMs: 2000, apiPlan: 'business' });
    // The short window is in effect: the limit resets within seconds, not a minute.
    expect(await secondsToReset(`${env.BASE_URL}/inventory`, env.RATE_LIMIT_KEY)).toBeLessThanOrEqual(6);
  } finally {
    await target.close();
    await target.close(); // idempotent
  }
});

test('startReferenceTarget: options choose the plan of API_KEY and the windows', async () => {
  const target = await startReferenceTarget({ apiPlan: 'pro', minuteWindowMs: 2000, banMs: 500 });
  try {
    expect(target.env.API_PLAN).toBe('pro');
    expect(await limitOf(`${target.env.BASE_URL}/inventory`, target.env.API_KEY)).toEqual({ status: 200, limit: '300' });
    expect(target.settings).toEqual({ minuteWindowMs: 2000, banMs: 500, apiPlan: 'pro' });
  } finally {
    await target.close();
  }
});
