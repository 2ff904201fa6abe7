/** The request as it is sent (suites/fixtures/pipeline/request.ts): every form of a key goes under that key's pacer label. */
import { test, expect } from '../../test.ts';
import { requestResolver } from '../../../suites/fixtures/pipeline/request.ts';
import { Unjudgeable } from '../../../suites/fixtures/pipeline/types.ts';
import { readEnv } from '../../../suites/lib/env.ts';

const KEY = 'pipeline-test-key-0123456789abcdef';
const RL_KEY = 'pipeline-test-rate-key-0123456789ab';
const env = readEnv({ BASE_URL: 'http://127.0.0.1:9/v1', API_URL: 'http://127.0.0.1:9/q', API_KEY: KEY, RATE_LIMIT_KEY: RL_KEY });
const { resolve } = requestResolver(env, 'INV-01: ');

test('a named key goes as Bearer under its own label; the address is the base of the endpoint', () => {
  const api = resolve({ method: 'get', base: 'inventory', path: '/inventory' });
  expect(api).toMatchObject({ method: 'GET', authorization: `Bearer ${KEY}`, bucket: '<API_KEY>', carriesKey: true });
  expect(api.url.href).toBe('http://127.0.0.1:9/v1/inventory');
  expect(api.what).toBe('INV-01: GET /v1/inventory');
  const rl = resolve({ method: 'POST', base: 'messages', path: '/messages', credential: 'rate-limit', json: { message: 'x' } });
  expect(rl).toMatchObject({ bucket: '<RATE_LIMIT_KEY>', carriesKey: true, body: '{"message":"x"}' });
  expect(rl.url.href).toBe('http://127.0.0.1:9/q/messages');
  expect(rl.headers['content-type']).toBe('application/json');
});

test('a key in any form or header is found and paced under its label; none is anonymous', () => {
  const basic = resolve({
    method: 'GET',
    base: 'inventory',
    path: '/inventory',
    credential: { authorization: `Basic ${Buffer.from(`${KEY}:`).toString('base64')}` },
  });
  expect(basic).toMatchObject({ bucket: '<API_KEY>', carriesKey: true });
  const formatted = resolve({
    method: 'GET',
    base: 'inventory',
    path: '/inventory',
    credential: { key: 'rate-limit', format: (k) => `bearer ${k}` },
  });
  expect(formatted).toMatchObject({ authorization: `bearer ${RL_KEY}`, bucket: '<RATE_LIMIT_KEY>', carriesKey: true });
  const inHeader = resolve({ method: 'GET', base: 'inventory', path: '/inventory', credential: 'none', headers: { 'x-api-key': KEY } });
  expect(inHeader).toMatchObject({ authorization: undefined, bucket: '<API_KEY>', carriesKey: true });
  const none = resolve({ method: 'GET', base: 'inventory', path: '/inventory', credential: { authorization: 'Bearer not-a-key' } });
  expect(none).toMatchObject({ bucket: '<anonymous>', carriesKey: false });
});

test('a missing variable stops the request as unjudgeable, naming it', () => {
  const bare = requestResolver(readEnv({ BASE_URL: 'http://127.0.0.1:9/v1' }), '');
  expect(() => bare.resolve({ method: 'GET', base: 'inventory', path: '/inventory' })).toThrow(/API_KEY is not set/);
  expect(() => bare.resolve({ method: 'GET', base: 'messages', path: '/messages', credential: 'none' })).toThrow(Unjudgeable);
  expect(() => bare.resolve({ method: 'GET', base: 'messages', path: '/messages', credential: 'none' })).toThrow(/API_URL is not set/);
});
