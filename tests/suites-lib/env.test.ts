import { test, expect } from '../test.ts';
import { readEnv } from '../../suites/lib/env.ts';
import { missingPrerequisiteReason } from '../../suites/fixtures/verdicts.ts';

test('defaults, trimmed values and trailing slashes', () => {
  const env = readEnv({ BASE_URL: ' http://h/v1/ ', API_URL: 'http://h/quickstart//', API_KEY: ' k ', API_PLAN: 'Free' });
  expect(env).toMatchObject({
    baseUrl: 'http://h/v1',
    apiUrl: 'http://h/quickstart',
    apiKey: 'k',
    apiPlan: 'free',
    profile: 'full',
    maxRetryAfterS: 120,
    maxExhaustRequests: 2000,
    requestTimeoutMs: 15_000,
    workers: 2,
    problems: [],
  });
  expect(readEnv({}).baseUrl).toBeUndefined();
  expect(readEnv({ CONFORMANCE_PROFILE: 'READONLY' }).profile).toBe('readonly');
});

test('bad values are reported as problems, never thrown, and fall back to defaults', () => {
  const env = readEnv({ API_PLAN: 'gold', CONFORMANCE_PROFILE: 'fast', MAX_RETRY_AFTER_S: '-1', REQUEST_TIMEOUT_MS: 'soon', WORKERS: '0' });
  expect(env.apiPlan).toBeUndefined();
  expect(env.profile).toBe('full');
  expect(env.maxRetryAfterS).toBe(120);
  expect(env.requestTimeoutMs).toBe(15_000);
  expect(env.workers).toBe(2);
  expect(env.problems.join('\n')).toMatch(/API_PLAN="gold"/);
  expect(env.problems.join('\n')).toMatch(/CONFORMANCE_PROFILE="fast"/);
  expect(env.problems).toHaveLength(5);
});

test('a missing prerequisite names the variable and its purpose', () => {
  expect(missingPrerequisiteReason('API_URL')).toBe(
    'prerequisite missing: API_URL is not set (the quickstart base address; the suite posts to ${API_URL}/messages)',
  );
  expect(missingPrerequisiteReason('OTHER')).toBe('prerequisite missing: OTHER is not set');
});
