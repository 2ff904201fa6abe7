/**
 * `npm start` and configuration: the start-up lines, flags and environment variables (flags win),
 * defaults, invalid values, and the fixtures the server is seeded from.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test, expect } from '../test.ts';
import { resolveConfig, SETTINGS, flagOf, DEFAULT_INVENTORY_FILE, DEFAULT_KEYS_FILE } from '../../reference-server/config.ts';
import { loadInventorySeed, loadKeys } from '../../reference-server/fixtures.ts';
import { parseFlags } from '../../reference-server/main.ts';
import { startReferenceServer } from '../../reference-server/app.ts';
import { bearer, call, npmStart, origin } from './helpers.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

test.describe('reference server: npm start and configuration', () => {
  test('START npm start prints the base addresses and one key per plan, and serves them', async () => {
    const started = await npmStart([], {}, 7, async (lines) => {
      const inventory = lines.find((l) => l.startsWith('inventory: '))!.slice('inventory: '.length);
      const free = lines.find((l) => l.startsWith('key free: '))!.slice('key free: '.length);
      const reply = await call(new URL(inventory).origin, 'GET', `${new URL(inventory).pathname}/inventory`, { headers: bearer(free) });
      expect(reply.status).toBe(200);
    });
    expect(started.lines[0]).toMatch(/^inventory: http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(started.lines[1]).toMatch(/^messages: http:\/\/127\.0\.0\.1:\d+\/quickstart$/);
    const keyLines = started.lines.slice(2, 7).map((l) => l.split(':')[0]);
    expect(keyLines).toEqual(['key free', 'key pro', 'key business', 'key enterprise', 'key load']);
    for (const line of started.lines.slice(2, 7)) expect(line).toMatch(/^key [a-z]+: \S+$/);
  });

  test('START flags and environment configure the server; flags win', async () => {
    const started = await npmStart(
      ['--enterprise-limit-minute', '9', '--max-body-bytes=50'],
      { ENTERPRISE_LIMIT_MINUTE: '8', ENTERPRISE_LIMIT_DAY: '77' },
      7,
      async (lines) => {
        const inventory = new URL(lines[0].slice('inventory: '.length));
        const enterprise = lines.find((l) => l.startsWith('key enterprise: '))!.slice('key enterprise: '.length);
        const reply = await call(inventory.origin, 'GET', '/v1/inventory', { headers: bearer(enterprise) });
        expect(reply.headers['x-ratelimit-limit']).toBe('9');
        const big = await call(inventory.origin, 'PATCH', '/v1/inventory/1', {
          headers: bearer(enterprise),
          body: `{"quantity":1,"p":"${'x'.repeat(100)}"}`,
        });
        expect(big.status).toBe(413);
      },
    );
    expect(started.lines.length).toBe(7);
  });

  test('START an unknown flag or an invalid value stops start-up with exit code 2', async () => {
    const unknown = await npmStart(['--no-such-flag', '1'], {}, 1);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown option --no-such-flag');
    const invalid = await npmStart([], { BAN_MS: 'soon' }, 1);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('BAN_MS');
  });

  test('START configuration: options, then environment, then documented defaults', () => {
    const defaults = resolveConfig({}, {});
    expect(defaults).toMatchObject({
      port: 8080,
      host: '127.0.0.1',
      minuteWindowMs: 60_000,
      dayWindowMs: 86_400_000,
      banThreshold: 10,
      banMs: 600_000,
      enterpriseLimits: { minute: 5_000, day: 1_000_000 },
      anonymousLimits: { minute: 300, day: 10_000 },
      maxBodyBytes: 65_536,
      bodyTimeoutMs: 10_000,
      inventoryFile: DEFAULT_INVENTORY_FILE,
      keysFile: DEFAULT_KEYS_FILE,
      redisUrl: undefined,
      redisPrefix: 'inventory-service:',
      instances: 1,
      rateLimitFields: false,
    });
    expect(resolveConfig({}, { REDIS_URL: 'redis://127.0.0.1:6390', RATELIMIT_FIELDS: 'on', INSTANCES: '3' })).toMatchObject({
      redisUrl: 'redis://127.0.0.1:6390',
      rateLimitFields: true,
      instances: 3,
    });
    expect(() => resolveConfig({}, { REDIS_URL: 'localhost:6379' })).toThrow(/REDIS_URL/);
    expect(() => resolveConfig({}, { RATELIMIT_FIELDS: 'maybe' })).toThrow(/RATELIMIT_FIELDS/);
    expect(() => resolveConfig({}, { INSTANCES: '0' })).toThrow(/INSTANCES/);
    for (const setting of SETTINGS.filter((s) => /^\d+$/.test(s.default))) {
      const env = { [setting.env]: '4321' };
      const json = JSON.stringify(resolveConfig({}, env));
      expect(json, `${setting.env} is read`).toContain('4321');
    }
    expect(resolveConfig({ banMs: 5 }, { BAN_MS: '7' }).banMs).toBe(5);
    expect(resolveConfig({}, { BAN_MS: '7' }).banMs).toBe(7);
    expect(() => resolveConfig({}, { PORT: '70000' })).toThrow(/PORT/);
    expect(() => resolveConfig({}, { BAN_THRESHOLD: '0' })).toThrow(/BAN_THRESHOLD/);
    expect(() => resolveConfig({}, { MAX_BODY_BYTES: '1.5' })).toThrow(/MAX_BODY_BYTES/);
    expect(parseFlags(['--port', '0', '--ban-ms=5'])).toEqual({ PORT: '0', BAN_MS: '5' });
    expect(flagOf('RATE_WINDOW_MINUTE_MS')).toBe('--rate-window-minute-ms');
    expect(() => parseFlags(['--port'])).toThrow(/needs a value/);
  });

  test('START the fixtures: a dozen items over every status with int64 edge ids; one key per plan and the load key', () => {
    const seed = loadInventorySeed(DEFAULT_INVENTORY_FILE);
    expect(seed.length).toBeGreaterThanOrEqual(12);
    expect(new Set(seed.map((i) => i.status))).toEqual(new Set(['available', 'pending', 'sold']));
    expect(seed.map((i) => i.petId)).toEqual(expect.arrayContaining([9007199254740993n, 9223372036854775807n]));
    const keys = loadKeys(DEFAULT_KEYS_FILE);
    expect(keys.map((k) => `${k.name}:${k.plan}`)).toEqual([
      'free:free',
      'pro:pro',
      'business:business',
      'enterprise:enterprise',
      'load:enterprise',
    ]);
    expect(keys.find((k) => k.name === 'load')!.limits!.minute).toBeGreaterThanOrEqual(1e9);
    expect(new Set(keys.map((k) => k.key)).size).toBe(5);
  });

  test('START other fixture files can be given; malformed ones stop start-up naming the file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'reference-fixtures-'));
    try {
      const inventoryFile = join(dir, 'inventory.yaml');
      writeFileSync(inventoryFile, 'items:\n  - { petId: -9223372036854775808, quantity: 1, status: sold }\n');
      const server = await startReferenceServer({ port: 0, inventoryFile });
      try {
        const reply = await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.free) });
        expect(reply.text).toBe('[{"petId":-9223372036854775808,"quantity":1,"status":"sold"}]');
      } finally {
        await server.close();
      }
      const broken: [string, string, RegExp][] = [
        [
          'inventory',
          'items:\n  - { petId: 1, quantity: 1, status: sold }\n  - { petId: 1, quantity: 2, status: sold }\n',
          /duplicate petId 1/,
        ],
        ['inventory', 'items:\n  - { petId: 9223372036854775808, quantity: 1, status: sold }\n', /petId must be an int64/],
        ['inventory', 'items:\n  - { petId: 1, quantity: 1, status: lost }\n', /status must be one of/],
        ['inventory', 'items:\n  - { petId: 1, quantity: -1, status: sold }\n', /quantity/],
        ['keys', readFileSync(DEFAULT_KEYS_FILE, 'utf8').replace(/- name: load[\s\S]*$/, ''), /no key named "load"/],
        ['keys', 'keys:\n  - { name: free, plan: gold, key: abc }\n', /plan must be/],
        ['keys', 'keys:\n  - { name: free, plan: free, key: "has space" }\n', /bearer token/],
      ];
      for (const [kind, text, message] of broken) {
        const file = join(dir, `${kind}-broken.yaml`);
        writeFileSync(file, text);
        const options = kind === 'inventory' ? { inventoryFile: file } : { keysFile: file };
        await expect(startReferenceServer({ port: 0, ...options })).rejects.toThrow(message);
        await expect(startReferenceServer({ port: 0, ...options })).rejects.toThrow(file);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('START startReferenceServer stays in memory whatever REDIS_URL the shell exports (only npm start reads it)', async () => {
    const saved = process.env.REDIS_URL;
    process.env.REDIS_URL = 'redis://127.0.0.1:1';
    try {
      const server = await startReferenceServer({ port: 0, host: '127.0.0.1' });
      try {
        expect((await call(origin(server), 'GET', '/v1/inventory', { headers: bearer(server.keys.free) })).status).toBe(200);
      } finally {
        await server.close();
      }
      await expect(startReferenceServer({ port: 0, host: '127.0.0.1', redisUrl: 'redis://127.0.0.1:1' })).rejects.toThrow(
        /cannot reach the Redis of REDIS_URL/,
      );
    } finally {
      if (saved === undefined) delete process.env.REDIS_URL;
      else process.env.REDIS_URL = saved;
    }
  });

  test('START the README documents every setting with its flag and default', () => {
    const readme = readFileSync(join(ROOT, 'reference-server', 'README.md'), 'utf8');
    for (const setting of SETTINGS) {
      const row = readme.split('\n').find((line) => line.includes(`| \`${setting.env}\` |`));
      expect(row, `${setting.env} has a row`).toBeDefined();
      expect(row, setting.env).toContain(`\`${flagOf(setting.env)}\``);
      expect(row, setting.env).toContain(setting.default);
    }
  });
});
