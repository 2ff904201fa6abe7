/**
 * A pending 429 outlives its run: a certification is killed with SIGKILL right after its
 * rate-limit check met a 429 (`Retry-After: 10`) and journaled it, on a target that bans a key for
 * 600 s on its first early request (the reference server with BAN_THRESHOLD=1, behind the fault
 * proxy's strict ban); at once, as a CI re-run would, (a) the next certify with the same reports
 * folder, (b) `inventory-conformance restore`. Neither sends on the key before the Retry-After has
 * passed: 0 early requests, no ban; the certify run never fails a requirement for it (its exit code
 * is not the failure code) and restore puts back what the dead run left changed.
 */
import { test, expect } from '../test.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFaultProxy, type RunningFaultProxy } from '../../faults/proxy.ts';
import { bearerToken, total } from '../../faults/retry-watch.ts';
import { startReferenceServer, type RunningReferenceServer } from '../../reference-server/app.ts';
import { readJournals } from '../../core/journal.ts';
import { EXIT } from '../../core/exit-codes.ts';
import { LEDGER_FILE } from '../../core/paths.ts';
import { listSuites, phasesByRequirement } from '../../core/ledger.ts';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const CHILD = path.join(ROOT, 'tests', 'journal', 'certify-child.ts');
const BIN = path.join(ROOT, 'cli', 'bin.mjs');
const BAN_MS = 600_000;

interface BanningTarget {
  env: Record<string, string>;
  proxy: RunningFaultProxy;
  /** Called once the first 429 on `label` has left with `Retry-After: 10`. */
  on429: (label: string) => void;
  close(): Promise<void>;
}

/**
 * The reference server (10 s windows, BAN_THRESHOLD=1, BAN_MS=600000) behind the fault proxy,
 * which bans a key for 600 s on its first early request too and counts early requests per key.
 * The first 429 on `label` leaves with `Retry-After: 10` (a server may ask longer than its window);
 * with `inject`, the proxy answers the first request on `label` matching it with that 429 itself.
 */
async function banningTarget(label: 'RATE_LIMIT_KEY' | 'API_KEY', inject?: (method: string, p: string) => boolean): Promise<BanningTarget> {
  const server: RunningReferenceServer = await startReferenceServer({ port: 0, minuteWindowMs: 10_000, banThreshold: 1, banMs: BAN_MS });
  const keys = { API_KEY: server.keys.pro, RATE_LIMIT_KEY: server.keys.free };
  let rewritten = false;
  const t: BanningTarget = {
    env: {},
    proxy: undefined as unknown as RunningFaultProxy,
    on429: () => undefined,
    close: async () => {
      await t.proxy.close();
      await server.close();
    },
  };
  const onKey = (hs: Array<[string, string]>) => bearerToken(hs) === keys[label];
  const tooMany = () => ({
    status: 429,
    headers: [
      ['Retry-After', '10'],
      ['X-RateLimit-Limit', '100'],
      ['X-RateLimit-Remaining', '0'],
      ['X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 10)],
      ['Content-Type', 'application/json'],
    ] as Array<[string, string]>,
    body: Buffer.from(JSON.stringify({ code: 'rate_limited', message: 'Too many requests', status: 429 })),
  });
  t.proxy = await startFaultProxy({
    upstream: new URL(server.baseUrl).origin,
    env: keys,
    strictBanMs: BAN_MS,
    fault: {
      request(req) {
        if (!inject || rewritten || !onKey(req.headers) || !inject(req.method, req.path)) return req;
        rewritten = true;
        setImmediate(() => t.on429(label));
        return tooMany();
      },
      response(res, req) {
        if (inject || rewritten || res.status !== 429 || !onKey(req.headers)) return res;
        rewritten = true;
        setImmediate(() => t.on429(label));
        return { ...res, headers: [...res.headers.filter(([k]) => k.toLowerCase() !== 'retry-after'), ['Retry-After', '10']] };
      },
    },
  });
  t.env = {
    BASE_URL: `${t.proxy.url}/v1`,
    API_URL: `${t.proxy.url}/quickstart`,
    API_KEY: keys.API_KEY,
    API_PLAN: 'pro',
    RATE_LIMIT_KEY: keys.RATE_LIMIT_KEY,
    RATE_LIMIT_PLAN: 'free',
  };
  return t;
}

/** Runs a command in a process group of its own; resolves with its exit code (or signal) and output. */
function start(
  args: string[],
  env: Record<string, string | undefined>,
): { child: ChildProcess; done: Promise<{ code: number | null; signal: string | null; out: string }> } {
  const child = spawn(args[0]!, args.slice(1), { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
  const done = new Promise<{ code: number | null; signal: string | null; out: string }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, out })),
  );
  return { child, done };
}

const limitRecords = (reports: string) => (fs.existsSync(reports) ? readJournals(reports).flatMap((j) => j.limits) : []);

/**
 * Certify (`phases`), killed with SIGKILL (its whole process group) the moment its journal holds
 * the 429 the proxy sent with `Retry-After: 10`: nothing of the run is left to wait it out.
 */
async function killedAfter429(t: BanningTarget, ws: ReturnType<typeof workspace>, phases: string, label: string): Promise<void> {
  const reports = ws.reports;
  const env = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    TMPDIR: ws.tmp('killed'),
    ...t.env,
    REPORTS_DIR: reports,
    WORKERS: '1',
    MAX_RETRY_AFTER_S: '30',
  };
  const run = start([TSX, CHILD, '-', phases], env);
  let journaled = false;
  t.on429 = () => {
    const deadline = Date.now() + 5_000;
    const poll = () => {
      if (limitRecords(reports).some((l) => l.label === `<${label}>` && l.retryAfter === '10')) {
        journaled = true;
        process.kill(-run.child.pid!, 'SIGKILL');
      } else if (Date.now() < deadline) setTimeout(poll, 5);
      else process.kill(-run.child.pid!, 'SIGKILL');
    };
    poll();
  };
  const ended = await run.done;
  t.on429 = () => undefined;
  expect(ended.signal, `killed after the 429:\n${ended.out.slice(-2000)}`).toBe('SIGKILL');
  expect(journaled, `the 429 was journaled before the kill:\n${ended.out.slice(-2000)}`).toBe(true);
  expect(total(t.proxy.stats().early), 'the killed run itself sent nothing early').toBe(0);
}

/**
 * The ledger cut to the requirements the `phase` tests evidence (the run certifies that phase
 * alone; the others' requirements would fail as "no test result"), written into `dir`.
 */
function ledgerOfPhase(dir: string, phase: string): string {
  const phases = phasesByRequirement(listSuites().tests);
  const ledger = parseYaml(fs.readFileSync(LEDGER_FILE, 'utf8')) as { requirements: { id: string }[] };
  ledger.requirements = ledger.requirements.filter((r) => phases.get(r.id)?.includes(phase));
  const file = path.join(dir, `${phase}-requirements.yaml`);
  fs.writeFileSync(file, stringifyYaml(ledger));
  return file;
}

/**
 * A reports folder, and a temp folder per run (`tmp(name)`): the runs share only the reports
 * folder, as a CI re-run on another runner does, so it is the journal, not the turn a run of this
 * machine leaves in the temp folder (certify/steps/turns.ts), that keeps the second run waiting.
 */
function workspace(): { dir: string; reports: string; tmp: (name: string) => string } {
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'after-429-'));
  const tmp = (name: string) => {
    const d = path.join(dir, `tmp-${name}`);
    fs.mkdirSync(d, { recursive: true });
    return d;
  };
  return { dir, reports: path.join(dir, 'reports'), tmp };
}

test('journal: certify killed right after its rate-limit check met a 429 (Retry-After: 10), on a target that bans on the first early request; the next certify at once with the same reports folder: 0 early requests, no ban, no requirement failed, and its exit code is not the failure code', async () => {
  test.setTimeout(480_000);
  const t = await banningTarget('RATE_LIMIT_KEY');
  const ws = workspace();
  try {
    // Listing the suites takes seconds: done before the kill, so that the next run starts at once.
    const ledger = ledgerOfPhase(ws.dir, 'rate-limit');
    await killedAfter429(t, ws, 'rate-limit', 'RATE_LIMIT_KEY');
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: ws.tmp('next'),
      ...t.env,
      REPORTS_DIR: ws.reports,
      WORKERS: '1',
      MAX_RETRY_AFTER_S: '30',
    };
    const next = await start([TSX, CHILD, '-', 'rate-limit', ledger], env).done;
    const stats = t.proxy.stats();
    expect(total(stats.early), `no request before a Retry-After passed: ${JSON.stringify(stats)}\n${next.out.slice(-3000)}`).toBe(0);
    expect(total(stats.bans), 'no ban').toBe(0);
    expect(next.out).toMatch(
      /a 429 an earlier run met on <RATE_LIMIT_KEY> .*Retry-After: 10.*this run waits \d+ s before it sends anything on it/,
    );
    const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
    expect(report.requirements.length, 'the rate-limit requirements are judged').toBeGreaterThan(5);
    const failed = report.requirements.filter((r: { status: string }) => r.status === 'fail');
    expect(failed, next.out.slice(-3000)).toEqual([]);
    for (const id of ['RL-05', 'RL-10', 'LOAD-02']) {
      const r = report.requirements.find((x: { id: string }) => x.id === id);
      expect(['pass', 'warn', 'skipped', 'not-certified'], `${id}: ${JSON.stringify(r)}`).toContain(r?.status);
      if (r.status !== 'pass' && r.status !== 'warn') expect(r.reason, id).toMatch(/not certified/);
    }
    expect(next.code, next.out.slice(-3000)).not.toBe(EXIT.fail);
    expect([EXIT.pass, EXIT.notCertified]).toContain(next.code);
    expect(report.journal.holds.map((h: { label: string }) => h.label)).toContain('<RATE_LIMIT_KEY>');
    expect(next.out.includes(t.env.RATE_LIMIT_KEY!)).toBe(false);
  } finally {
    await t.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});

test('journal: certify killed right after a 429 (Retry-After: 10) on API_KEY while a pet stood changed, on a target that bans on the first early request; `restore` at once: waits it out (0 early requests, no ban), puts the pet back, exit 0', async () => {
  test.setTimeout(300_000);
  // The second PATCH of the update checks (the one putting the first change back) meets the 429.
  let patches = 0;
  const t = await banningTarget('API_KEY', (method) => method === 'PATCH' && ++patches === 2);
  const ws = workspace();
  try {
    const before = await (await fetch(`${t.env.BASE_URL}/inventory`, { headers: { authorization: `Bearer ${t.env.API_KEY}` } })).text();
    await killedAfter429(t, ws, 'functional', 'API_KEY');
    expect(
      readJournals(ws.reports).some((j) => j.open.length),
      'the killed run left an open entry',
    ).toBe(true);
    const env = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      TMPDIR: ws.tmp('restore'),
      BASE_URL: t.env.BASE_URL,
      API_KEY: t.env.API_KEY,
      REPORTS_DIR: ws.reports,
    };
    const restore = await start(['node', BIN, 'restore'], env).done;
    const stats = t.proxy.stats();
    expect(total(stats.early), `no request before a Retry-After passed: ${JSON.stringify(stats)}\n${restore.out}`).toBe(0);
    expect(total(stats.bans), 'no ban').toBe(0);
    expect(restore.out).toMatch(
      /restore: a 429 an earlier run met on <API_KEY> .*Retry-After: 10.*this run waits \d+ s before it sends anything on it/,
    );
    expect(restore.code, restore.out).toBe(EXIT.pass);
    expect(restore.out).toMatch(/restore: \d+ pet\(s\) put back and verified through the list/);
    const after = await (await fetch(`${t.env.BASE_URL}/inventory`, { headers: { authorization: `Bearer ${t.env.API_KEY}` } })).text();
    expect(after, 'the store is as it started').toBe(before);
    expect(restore.out.includes(t.env.API_KEY!)).toBe(false);
  } finally {
    await t.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});
