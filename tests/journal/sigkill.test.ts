/**
 * Nothing lost when the run dies: a certify run is killed with SIGKILL (no handler runs) the moment
 * the target's store stands changed, against a target whose PATCH answers take a second; then the
 * next certify run with the same reports folder, or `inventory-conformance restore`, leaves the
 * store exactly as it started, and says so. The journal never holds a key in any encoding.
 * A run against a server that creates a pet on a PATCH of a missing id (an upsert) names it at run
 * level as "target left changed", with what to do by hand.
 */
import { test, expect } from '../test.ts';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startFaultProxy, type RunningFaultProxy } from '../../faults/proxy.ts';
import { startReferenceServer, type RunningReferenceServer } from '../../reference-server/app.ts';
import { serializeItem, type InventoryItem, type InventoryStore } from '../../reference-server/inventory/store.ts';
import { findNeedle, secretNeedles } from '../../core/secrets.ts';
import { readJournals } from '../../core/journal.ts';
import { certificateProblems, conformanceProblems } from '../certificate/report-schemas.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const TSX = path.join(ROOT, 'node_modules', '.bin', 'tsx');
const CHILD = path.join(ROOT, 'tests', 'journal', 'certify-child.ts');
const BIN = path.join(ROOT, 'cli', 'bin.mjs');
const PATCH_DELAY_MS = 1000;

/** A store of four pets; `upsert`: a PATCH of a missing id creates the pet (a deviation the run fails). */
function store(upsert: boolean): InventoryStore & { text(): string } {
  const items = new Map<bigint, InventoryItem>(
    [1n, 2n, 3n, 4n].map((id) => [id, { petId: id, quantity: Number(id) * 10, status: 'available' }]),
  );
  return {
    listJson: () => Buffer.from(`[${[...items.values()].map(serializeItem).join(',')}]`),
    get: (id) => items.get(id),
    setQuantity(id, quantity) {
      const item = items.get(id) ?? (upsert ? { petId: id, quantity, status: 'available' as const } : undefined);
      if (!item) return undefined;
      item.quantity = quantity;
      items.set(id, item);
      return item;
    },
    text: () => [...items.values()].map(serializeItem).join(','),
  };
}

interface Target {
  baseUrl: string;
  apiUrl: string;
  key: string;
  store: ReturnType<typeof store>;
  /** Called with the number of each PATCH once the upstream applied it, before its answer is held back. */
  onPatch: (n: number) => void;
  close(): Promise<void>;
}

/** The reference server on `store`, behind a proxy that holds every PATCH answer back for a second (the change already made). */
async function slowPatchTarget(upsert = false, delayMs = PATCH_DELAY_MS): Promise<Target> {
  const s = store(upsert);
  const server: RunningReferenceServer = await startReferenceServer({ port: 0, inventory: s, minuteWindowMs: 60_000 });
  let patches = 0;
  const target: Target = {
    baseUrl: '',
    apiUrl: '',
    key: server.keys.pro,
    store: s,
    onPatch: () => undefined,
    close: async () => {
      await proxy.close();
      await server.close();
    },
  };
  const proxy: RunningFaultProxy = await startFaultProxy({
    upstream: new URL(server.baseUrl).origin,
    fault: {
      async response(res, req) {
        if (req.method !== 'PATCH') return res;
        target.onPatch(++patches);
        await new Promise((r) => setTimeout(r, delayMs));
        return res;
      },
    },
  });
  target.baseUrl = `${proxy.url}/v1`;
  target.apiUrl = `${proxy.url}/quickstart`;
  return target;
}

/** A Playwright config in `dir` whose one phase runs the given suites. */
function configOf(dir: string, name: string, specs: string[]): string {
  const config = path.join(dir, `${name}.config.ts`);
  fs.writeFileSync(
    config,
    `import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: ${JSON.stringify(path.join(ROOT, 'suites'))},
  reporter: [['list']],
  workers: 1,
  use: { trace: 'off' },
  projects: [{ name: 'functional', testMatch: ${JSON.stringify(specs)} }],
});
`,
  );
  return config;
}

/**
 * A reports folder; `config` runs the update checks (the run that is killed), `next` only the
 * list checks (the next run: what it repairs first is what is judged here, kept short).
 */
function workspace(specs: string[]): { dir: string; config: string; next: string; reports: string } {
  fs.mkdirSync(path.join(ROOT, 'test-results'), { recursive: true });
  const dir = fs.mkdtempSync(path.join(ROOT, 'test-results', 'journal-'));
  return {
    dir,
    config: configOf(dir, 'killed', specs),
    next: configOf(dir, 'next', ['inventory/list.spec.ts']),
    reports: path.join(dir, 'reports'),
  };
}

const envOf = (t: Target, reports: string): Record<string, string | undefined> => ({
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  BASE_URL: t.baseUrl,
  API_URL: t.apiUrl,
  API_KEY: t.key,
  API_PLAN: 'pro',
  REPORTS_DIR: reports,
  WORKERS: '1',
  MAX_RETRY_AFTER_S: '5',
});

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

/** Certify, killed with SIGKILL (its whole process group: certify and its phases) at the `at`-th PATCH, once the store changed. */
async function killedRun(t: Target, ws: ReturnType<typeof workspace>, at: number): Promise<void> {
  const initial = t.store.text();
  const run = start([TSX, CHILD, ws.config], envOf(t, ws.reports));
  t.onPatch = (n) => {
    if (n === at) process.kill(-run.child.pid!, 'SIGKILL');
  };
  const ended = await run.done;
  t.onPatch = () => undefined;
  expect(ended.signal, `killed at PATCH ${at}:\n${ended.out.slice(-2000)}`).toBe('SIGKILL');
  // update.spec changes a pet (odd PATCHes), then puts it back (even ones): killed at a change, the
  // store stands changed; killed at a restore, the store is back but the entry is still open.
  if (at % 2 === 1) expect(t.store.text(), 'the kill left the store changed').not.toBe(initial);
  else expect(t.store.text(), 'killed while the restore was answered: the count is back').toBe(initial);
  expect(
    readJournals(ws.reports).some((j) => j.open.length > 0),
    'the killed run left an open entry',
  ).toBe(true);
  // The whole group (certify, its phases, their workers) is gone; let the proxy see their sockets close.
  await new Promise((r) => setTimeout(r, 300));
}

/** No key of the target, in any encoding, in any journal file. */
function expectNoKeyInJournal(reports: string, key: string): void {
  const needles = secretNeedles([{ name: 'API_KEY', value: key }]);
  const dir = path.join(reports, 'journal');
  const files = fs.readdirSync(dir);
  expect(files.length).toBeGreaterThan(0);
  for (const f of files) {
    const text = fs.readFileSync(path.join(dir, f), 'utf8');
    expect(
      needles.flatMap((n) => findNeedle(text, n)),
      `journal/${f} holds no key`,
    ).toEqual([]);
  }
}

// Three kill points, each judged once (the runs are costly): at a change (1, 3) and while a restore is answered (2).
for (const at of [1, 2]) {
  test(`journal: certify killed with SIGKILL at PATCH ${at} (answers slow); the next certify run repairs first and the store is as it started`, async () => {
    test.setTimeout(240_000);
    const t = await slowPatchTarget();
    const ws = workspace(['inventory/update.spec.ts']);
    try {
      const initial = t.store.text();
      await killedRun(t, ws, at);
      const next = start([TSX, CHILD, ws.next], envOf(t, ws.reports));
      const { out } = await next.done;
      expect(t.store.text(), out.slice(-3000)).toBe(initial);
      expect(out).toMatch(/repairing before anything else is sent/);
      expect(out).toMatch(/certify: repair: \d+ pet\(s\) put back and verified through the list/);
      const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
      expect(report.journal.repair.restored.length).toBeGreaterThan(0);
      expect(report.journal.repair.left).toEqual([]);
      expect(conformanceProblems(report), 'conformance.json follows its schema').toEqual([]);
      expect(fs.readFileSync(path.join(ws.reports, 'certificate.html'), 'utf8'), 'the certificate says so').toMatch(
        /<h2>Repaired first \(\d+\)<\/h2>/,
      );
      expect(fs.readFileSync(path.join(ws.reports, 'conformance.md'), 'utf8')).toMatch(/Repaired first: an earlier run did not finish/);
      expect(
        readJournals(ws.reports).filter((j) => j.open.length),
        'every entry is closed',
      ).toEqual([]);
      expectNoKeyInJournal(ws.reports, t.key);
    } finally {
      await t.close();
      fs.rmSync(ws.dir, { recursive: true, force: true });
    }
  });
}

for (const at of [3]) {
  test(`journal: certify killed with SIGKILL at PATCH ${at}; \`restore\` puts the store back as it started, then has nothing to do`, async () => {
    test.setTimeout(240_000);
    const t = await slowPatchTarget();
    const ws = workspace(['inventory/update.spec.ts']);
    try {
      const initial = t.store.text();
      await killedRun(t, ws, at);
      const env = { PATH: process.env.PATH, HOME: process.env.HOME, BASE_URL: t.baseUrl, API_KEY: t.key, REPORTS_DIR: ws.reports };
      const first = await start(['node', BIN, 'restore'], env).done;
      expect(first.code, first.out).toBe(0);
      expect(t.store.text(), first.out).toBe(initial);
      expect(first.out).toMatch(
        /restore: \d+ pet\(s\) put back and verified through the list: pet \d+ \(quantity \d+, (restored|unchanged)/,
      );
      expect(first.out.includes(t.key)).toBe(false);
      const again = await start(['node', BIN, 'restore'], env).done;
      expect(again.code).toBe(0);
      expect(again.out).toMatch(/nothing to restore/);
      expectNoKeyInJournal(ws.reports, t.key);
    } finally {
      await t.close();
      fs.rmSync(ws.dir, { recursive: true, force: true });
    }
  });
}

test('journal: a PATCH of a missing id that creates the pet (an upsert) and the messages posted are named at run level as "target left changed", with what to do by hand', async () => {
  test.setTimeout(240_000);
  const t = await slowPatchTarget(true, 0);
  const ws = workspace(['inventory/update.spec.ts', 'messages/send.spec.ts']);
  try {
    const run = await start([TSX, CHILD, ws.config], envOf(t, ws.reports)).done;
    const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
    const left = report.problems.find((p: { kind: string }) => p.kind === 'target-left-changed');
    const created = (left?.pets ?? []).filter((p: { created?: boolean }) => p.created);
    expect(created.length, run.out.slice(-3000)).toBeGreaterThan(0);
    expect(t.store.text()).toContain(`"petId":${created[0].petId}`);
    expect(created[0].action).toMatch(/created it \(an upsert\).*delete it by hand/);
    expect(run.code, 'a pet left created fails the gate').toBe(1);
    expect(run.out).toMatch(/✗ pet \d+: created by the run .*delete it by hand/);
    expect(report.journal.end.messages.length, 'the messages posted are named').toBeGreaterThan(0);
    expect(run.out).toMatch(/Left on the target, by design: \d+ messages? posted: .*\(to .*\/quickstart\/messages/);
    const html = fs.readFileSync(path.join(ws.reports, 'certificate.html'), 'utf8');
    expect(html).toContain('created by the run');
    expect(html).toMatch(/Left on the target, by design.*Every message \(\d+\)/s);
    expect(conformanceProblems(report), 'conformance.json follows its schema').toEqual([]);
    expect(
      certificateProblems(JSON.parse(fs.readFileSync(path.join(ws.reports, 'certificate.json'), 'utf8'))),
      'certificate.json follows its schema',
    ).toEqual([]);
    // The created pet's entry stays open: the next run, or restore, names it again until it is deleted by hand.
    expect(
      readJournals(ws.reports)
        .flatMap((j) => j.open)
        .some((e) => e.kind === 'change' && e.petId === created[0].petId),
    ).toBe(true);
    expectNoKeyInJournal(ws.reports, t.key);
  } finally {
    await t.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});

/** The pet whose count differs from `initial` (the store's text before the kill), with both counts. */
function changedPet(t: Target, initial: Map<bigint, number>): { id: bigint; original: number; now: number } {
  for (const [id, original] of initial) {
    const now = qty(t, id);
    if (now !== undefined && now !== original) return { id, original, now };
  }
  throw new Error('no pet changed');
}

/** The count of pet `id` in the target's store (undefined when it has none). */
const qty = (t: Target, id: bigint): number | undefined => (t.store.get(id) as InventoryItem | undefined)?.quantity;
const countsOf = (t: Target) => new Map([1n, 2n, 3n, 4n].map((id) => [id, qty(t, id)!]));

test("journal: certify killed with SIGKILL mid-change, then another writer sets the pet to 4243: the next certify leaves 4243 and names the pet with its original, the run's count and the count found; every other pet ends as it started", async () => {
  test.setTimeout(240_000);
  const t = await slowPatchTarget();
  const ws = workspace(['inventory/update.spec.ts']);
  try {
    const initial = countsOf(t);
    await killedRun(t, ws, 1);
    const pet = changedPet(t, initial);
    t.store.setQuantity(pet.id, 4243);
    const next = await start([TSX, CHILD, ws.next], envOf(t, ws.reports)).done;
    expect(qty(t, pet.id), next.out.slice(-3000)).toBe(4243);
    for (const [id, q] of initial) if (id !== pet.id) expect(qty(t, id), `pet ${id}`).toBe(q);
    const three = new RegExp(
      `pet ${pet.id} left alone: somebody else wrote it.*original ${pet.original}, the run wrote [^,]*\\b${pet.now}\\b[^,]*, found 4243`,
    );
    expect(next.out).toMatch(three);
    const report = JSON.parse(fs.readFileSync(path.join(ws.reports, 'conformance.json'), 'utf8'));
    expect(report.journal.repair.leftAlone).toMatchObject([{ petId: String(pet.id), original: String(pet.original), found: '4243' }]);
    expect(report.journal.repair.leftAlone[0].written).toContain(String(pet.now));
    expect(conformanceProblems(report), 'conformance.json follows its schema').toEqual([]);
    expect(fs.readFileSync(path.join(ws.reports, 'conformance.md'), 'utf8')).toMatch(
      new RegExp(`pet ${pet.id}: original ${pet.original}, the run wrote [^,]*${pet.now}[^,]*, found 4243`),
    );
    const html = fs.readFileSync(path.join(ws.reports, 'certificate.html'), 'utf8');
    expect(html).toMatch(/<h2>Left alone \(1\)<\/h2>/);
    expect(html).toContain('<td>4243</td>');
    expect(
      readJournals(ws.reports).filter((j) => j.open.length),
      'the entry is closed (left alone)',
    ).toEqual([]);
    expectNoKeyInJournal(ws.reports, t.key);
  } finally {
    await t.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});

test('journal: certify killed mid-change, then another writer sets the pet to 4243: `restore --dry-run` says it would leave it alone and sends no change; `restore` leaves 4243, names the three counts, exits 1', async () => {
  test.setTimeout(240_000);
  const t = await slowPatchTarget();
  const ws = workspace(['inventory/update.spec.ts']);
  try {
    const initial = countsOf(t);
    await killedRun(t, ws, 1);
    const pet = changedPet(t, initial);
    t.store.setQuantity(pet.id, 4243);
    let patches = 0;
    t.onPatch = () => patches++;
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, BASE_URL: t.baseUrl, API_KEY: t.key, REPORTS_DIR: ws.reports };
    const dry = await start(['node', BIN, 'restore', '--dry-run'], env).done;
    expect(dry.code, dry.out).toBe(0);
    expect(dry.out).toMatch(new RegExp(`pet ${pet.id}: would leave alone: pet ${pet.id} left alone: .*found 4243`));
    expect(patches, 'a dry run sends no change').toBe(0);
    expect(
      readJournals(ws.reports).some((j) => j.open.length),
      'a dry run closes nothing',
    ).toBe(true);
    const restore = await start(['node', BIN, 'restore'], env).done;
    expect(restore.code, restore.out).toBe(1);
    expect(restore.out).toMatch(
      new RegExp(
        `restore: pet ${pet.id} left alone: somebody else wrote it.*original ${pet.original}, the run wrote [^,]*${pet.now}[^,]*, found 4243`,
      ),
    );
    expect(restore.out).toMatch(/1 left alone/);
    expect(patches, "nothing is written over the other writer's count").toBe(0);
    expect(qty(t, pet.id)).toBe(4243);
    for (const [id, q] of initial) if (id !== pet.id) expect(qty(t, id), `pet ${id}`).toBe(q);
    expect(restore.out.includes(t.key)).toBe(false);
    const again = await start(['node', BIN, 'restore'], env).done;
    expect(again.out, 'the entry is closed').toMatch(/nothing to restore/);
  } finally {
    await t.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});

test('journal: certify killed mid-change, then another writer sets the pet back to its original: `restore` has nothing to write (closed unchanged), exit 0', async () => {
  test.setTimeout(240_000);
  const t = await slowPatchTarget();
  const ws = workspace(['inventory/update.spec.ts']);
  try {
    const initial = countsOf(t);
    await killedRun(t, ws, 1);
    const pet = changedPet(t, initial);
    t.store.setQuantity(pet.id, pet.original);
    let patches = 0;
    t.onPatch = () => patches++;
    const env = { PATH: process.env.PATH, HOME: process.env.HOME, BASE_URL: t.baseUrl, API_KEY: t.key, REPORTS_DIR: ws.reports };
    const restore = await start(['node', BIN, 'restore'], env).done;
    expect(restore.code, restore.out).toBe(0);
    expect(restore.out).toMatch(new RegExp(`pet ${pet.id} \\(quantity ${pet.original}, unchanged`));
    expect(patches).toBe(0);
    for (const [id, q] of initial) expect(qty(t, id), `pet ${id}`).toBe(q);
  } finally {
    await t.close();
    fs.rmSync(ws.dir, { recursive: true, force: true });
  }
});
