/**
 * `stock` (suites/fixtures/stock.ts) at any store size: with 1 pet and several tests running at
 * once, each waits its turn and never records another's temporary quantity as the original;
 * every change is restored and verified; with 10,000 pets a claim reads the list once.
 */
import { test, expect } from '../test.ts';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPacerCoordinator } from '../../suites/pacing/coordinator.ts';
import { pacingClient } from '../../suites/pacing/client.ts';
import { createApi } from '../../suites/fixtures.ts';
import { countAfterRefused, countAfterUpdate, createStock, type Stock } from '../../suites/fixtures/stock.ts';
import { countOrigin } from '../../suites/lib/count-origin.ts';
import { readEnv } from '../../suites/lib/env.ts';

const KEY = 'stock-test-key-0123456789abcdef';

interface StoreOptions {
  /** A restore is written as 0. */
  breakRestore?: boolean;
  /** Answers 503 to a write back to the original quantity, changing nothing. */
  refuseRestore?: boolean;
  /** Answers 503, changing nothing, to this many write-backs to the original quantity, then accepts them. */
  refuseRestoreTimes?: number;
  /** Another client writes the pet (4242, then 4243, …) right after each of this many write-backs. */
  foreignAfterRestore?: number;
  /** After each update, this many list reads still show the list as it was before it. */
  lagReads?: number;
  /** The list writes quantities as strings (`"11"`) or with a fraction (`11.0`). */
  quantityAs?: 'string' | 'fraction';
}

/** An inventory of `size` pets (quantity 10 + id) with list and update; counts lists and logs updates. */
async function startStore(size: number, options: StoreOptions = {}) {
  const quantities = new Map<string, number>();
  for (let i = 1; i <= size; i++) quantities.set(String(i), 10 + i);
  const stats = { lists: 0, updates: [] as { id: string; quantity: number }[] };
  const written = (q: number) => (options.quantityAs === 'string' ? `"${q}"` : options.quantityAs === 'fraction' ? `${q}.0` : String(q));
  const listText = () => `[${[...quantities].map(([id, q]) => `{"petId":${id},"quantity":${written(q)},"status":"available"}`).join(',')}]`;
  const lag = { reads: 0, snapshot: '' };
  const foreign = { n: 0 };
  const refused = { n: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers = {
        'content-type': 'application/json',
        'x-ratelimit-limit': '100000',
        'x-ratelimit-remaining': '99999',
        'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 60),
        date: new Date().toUTCString(),
      };
      if (req.method === 'GET' && req.url === '/v1/inventory') {
        stats.lists++;
        const body = lag.reads > 0 ? (lag.reads--, lag.snapshot) : listText();
        res.writeHead(200, headers).end(body);
        return;
      }
      const m = /^\/v1\/inventory\/(\d+)$/.exec(req.url ?? '');
      if (req.method === 'PATCH' && m && quantities.has(m[1])) {
        const { quantity } = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { quantity: number };
        stats.updates.push({ id: m[1], quantity });
        const restoring = quantity === 10 + Number(m[1]);
        if (restoring && (options.refuseRestore || refused.n++ < (options.refuseRestoreTimes ?? 0))) {
          res.writeHead(503, headers).end('{"code":"unavailable","message":"try later","status":503}');
          return;
        }
        if (options.lagReads) lag.reads === 0 && (lag.snapshot = listText()), (lag.reads = options.lagReads);
        // A store that "forgets" restores: a quantity back at its original is written as 0.
        quantities.set(m[1], options.breakRestore && quantity === 10 + Number(m[1]) ? 0 : quantity);
        if (quantity === 10 + Number(m[1]) && foreign.n < (options.foreignAfterRestore ?? 0)) quantities.set(m[1], 4242 + foreign.n++);
        res.writeHead(200, headers).end(JSON.stringify({ petId: Number(m[1]), quantity: quantities.get(m[1]), status: 'available' }));
        return;
      }
      res.writeHead(404, headers).end('{"code":"not_found","message":"no","status":404}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    quantities,
    stats,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function setup(size: number, options: StoreOptions = {}) {
  const store = await startStore(size, options);
  const coordinator = await startPacerCoordinator();
  const env = readEnv({ BASE_URL: store.url, API_URL: store.url, API_KEY: KEY });
  const api = () => createApi({ env, pacing: pacingClient(coordinator.url), annotate: () => undefined });
  return {
    store,
    coordinator,
    api,
    close: async () => {
      await coordinator.close();
      await store.close();
    },
  };
}

test("one pet, four tests at once: each waits its turn, changes it, and restores it; no test sees another's temporary quantity", async () => {
  const s = await setup(1);
  try {
    const originals: number[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async (n) => {
        const api = s.api();
        const stock = createStock(api, `test-${n}`, 60_000, 'UPD-02');
        const pet = await stock.claim();
        originals.push(pet.quantity);
        const res = await api.updateInventory(pet.id, { quantity: 1000 + n });
        expect(res.status).toBe(200);
        await new Promise((r) => setTimeout(r, 30));
        await stock.end();
      }),
    );
    expect(originals).toEqual([11, 11, 11, 11]);
    expect(s.store.quantities.get('1')).toBe(11);
    // Never interleaved: every temporary quantity is followed by its own restore.
    const seq = s.store.stats.updates.map((u) => u.quantity);
    for (let i = 0; i < seq.length; i += 2) {
      expect(seq[i]).toBeGreaterThanOrEqual(1000);
      expect(seq[i + 1]).toBe(11);
    }
    expect(s.coordinator.report().pets).toMatchObject({ leases: 4, heldAtEnd: 0, retired: 0 });
  } finally {
    await s.close();
  }
});

test('three pets: tests running together hold different pets', async () => {
  const s = await setup(3);
  try {
    const stocks = [0, 1, 2].map((n) => createStock(s.api(), `t${n}`, 60_000, 'UPD-01'));
    const pets = await Promise.all(stocks.map((st) => st.claim()));
    expect(new Set(pets.map((p) => p.id)).size).toBe(3);
    await Promise.all(stocks.map((st) => st.end()));
  } finally {
    await s.close();
  }
});

test('10,000 pets: a claim reads the list once, and a restore that needs nothing reads it once', async () => {
  const s = await setup(10_000);
  try {
    const stock = createStock(s.api(), 'big', 60_000, 'UPD-01');
    const t0 = Date.now();
    const pet = await stock.claim();
    expect(s.store.stats.lists).toBe(1);
    await stock.end();
    expect(s.store.stats.lists).toBe(2);
    expect(pet.quantity).toBe(10 + Number(pet.id));
    expect(Date.now() - t0).toBeLessThan(5000);
  } finally {
    await s.close();
  }
});

test('a restore the store does not keep (the same count after two write-backs) fails naming the pet, and the pet is never handed out again', async () => {
  const s = await setup(1, { breakRestore: true });
  try {
    const api = s.api();
    const recorded: unknown[] = [];
    const stock = createStock(api, 'a', 60_000, 'UPD-02', (u) => recorded.push(u));
    const pet = await stock.claim();
    await api.updateInventory(pet.id, { quantity: 500 });
    await expect(stock.end()).rejects.toThrow(
      /UPD-02: state not restored: pet 1 could not be restored: original quantity 11, now 0 \(written back twice\)/,
    );
    expect(recorded).toEqual([{ petId: '1', original: '11', current: '0' }]);
    expect(s.coordinator.report().pets.retired).toBe(1);
    await expect(createStock(s.api(), 'b', 60_000, 'UPD-02').claim()).rejects.toThrow(/every listed pet is retired/);
  } finally {
    await s.close();
  }
});

test('another client writes the pet after each write-back (another count each time): recorded for the run, never the test failure', async () => {
  const s = await setup(1, { foreignAfterRestore: 2 });
  try {
    const api = s.api();
    const recorded: unknown[] = [];
    const stock = createStock(api, 'a', 60_000, 'UPD-02', (u) => recorded.push(u));
    const pet = await stock.claim();
    await api.updateInventory(pet.id, { quantity: 500 });
    await stock.end();
    expect(recorded).toEqual([{ petId: '1', original: '11', current: '4243' }]);
  } finally {
    await s.close();
  }
});

test('a list that lags behind updates: the changed pet is still written back and verified once the list catches up', async () => {
  const s = await setup(2, { lagReads: 2 });
  try {
    const api = s.api();
    const recorded: unknown[] = [];
    const stock = createStock(api, 'lag', 60_000, 'UPD-02', (u) => recorded.push(u));
    const pet = await stock.claim();
    await api.updateInventory(pet.id, { quantity: 500 });
    await stock.end();
    expect(s.store.quantities.get(pet.id)).toBe(10 + Number(pet.id));
    expect(recorded).toEqual([]);
  } finally {
    await s.close();
  }
});

for (const quantityAs of ['string', 'fraction'] as const) {
  test(`quantities listed as ${quantityAs === 'string' ? 'strings ("11")' : 'fractions (11.0)'} are restored as the integers they denote`, async () => {
    const s = await setup(1, { quantityAs });
    try {
      const api = s.api();
      const stock = createStock(api, 'q', 60_000, 'UPD-02');
      const pet = await stock.claim();
      await api.updateInventory(pet.id, { quantity: 500 });
      await stock.end();
      expect(s.store.quantities.get('1')).toBe(11);
      expect(s.store.stats.updates.at(-1)).toEqual({ id: '1', quantity: 11 });
    } finally {
      await s.close();
    }
  });
}

test('a refused restore fails the test naming the pet, and the pet is recorded as typed data: its id, original and current quantity', async () => {
  const s = await setup(1, { refuseRestore: true });
  try {
    const api = s.api();
    const recorded: unknown[] = [];
    const stock = createStock(api, 'typed', 60_000, 'UPD-02', (u) => recorded.push(u));
    const pet = await stock.claim();
    await api.updateInventory(pet.id, { quantity: 500 });
    await expect(stock.end()).rejects.toThrow(
      /UPD-02: state not restored: pet 1 could not be restored: original quantity 11, now 500; pet 1: restoring it to quantity 11 got 503/,
    );
    expect(recorded).toEqual([{ petId: '1', original: '11', current: '500' }]);
  } finally {
    await s.close();
  }
});

test('a restore answered 503 once is written back again and restores the pet: a transient 5xx is a warning, not a failure', async () => {
  const s = await setup(1, { refuseRestoreTimes: 1 });
  try {
    const api = s.api();
    const recorded: unknown[] = [];
    const warnings: string[] = [];
    const stock = createStock(
      api,
      'transient',
      60_000,
      'UPD-02',
      (u) => recorded.push(u),
      (m) => warnings.push(m),
    );
    const pet = await stock.claim();
    await api.updateInventory(pet.id, { quantity: 500 });
    await stock.end();
    expect(s.store.quantities.get('1')).toBe(11);
    expect(s.store.stats.updates.slice(1)).toEqual([
      { id: '1', quantity: 11 },
      { id: '1', quantity: 11 },
    ]);
    expect(recorded).toEqual([]);
    expect(warnings).toEqual([
      'restoring pet 1 to quantity 11 got 503, and 200 when sent once more: a valid request answered 5xx (HTTP rules: 2xx or 4xx)',
    ]);
  } finally {
    await s.close();
  }
});

/** A stock whose list shows `counts` in turn for its one pet (original 5), counting restores. */
function scripted(counts: unknown[]) {
  const pet = { petId: 1, quantity: 5, status: 'available', id: '1' };
  let restores = 0;
  const stock: Stock = {
    claim: async () => pet,
    restore: async () => {
      restores++;
    },
    read: async (p, carried) => {
      const observed = counts.shift();
      const origin = countOrigin(observed, p.quantity, carried);
      return { origin, observed, ...(origin === 'foreign' ? { notCertified: 'another client' } : {}) };
    },
  };
  return { pet, stock, restores: () => restores };
}

const REFUSED: { name: string; counts: unknown[]; origin: string; confirmed?: boolean; notCertified: boolean; sentAgain: number }[] = [
  { name: 'the original: kept', counts: [5], origin: 'original', notCertified: false, sentAgain: 0 },
  {
    name: 'the carried count twice: confirmed, the server applied it',
    counts: [7, 7],
    origin: 'ours',
    confirmed: true,
    notCertified: false,
    sentAgain: 1,
  },
  {
    name: 'the carried count once, then the original: not certified',
    counts: [7, 5],
    origin: 'original',
    notCertified: true,
    sentAgain: 1,
  },
  { name: "another client's count: not certified at once", counts: [4242], origin: 'foreign', notCertified: true, sentAgain: 0 },
  {
    name: "the carried count, then another client's: not certified",
    counts: [7, 4242],
    origin: 'foreign',
    notCertified: true,
    sentAgain: 1,
  },
];

for (const c of REFUSED) {
  test(`countAfterRefused: ${c.name}`, async () => {
    const s = scripted(c.counts);
    let sent = 0;
    const seen = await countAfterRefused(s.stock, s.pet, [7], async () => sent++);
    expect(seen.origin).toBe(c.origin);
    expect(!!seen.notCertified).toBe(c.notCertified);
    expect(!!seen.confirmed).toBe(!!c.confirmed);
    expect(sent).toBe(c.sentAgain);
    expect(s.restores()).toBe(c.sentAgain);
  });
}

const UPDATED: { name: string; counts: unknown[]; origin: string; written: number; notCertified: boolean }[] = [
  { name: 'the written count: seen', counts: [7], origin: 'ours', written: 7, notCertified: false },
  { name: 'the original, then the written count (a lagging list): seen', counts: [5, 7], origin: 'ours', written: 7, notCertified: false },
  {
    name: 'the original through every read of both updates: the server ignored them',
    counts: Array(10).fill(5),
    origin: 'original',
    written: 8,
    notCertified: false,
  },
  {
    name: 'the original for the first update, the second one seen: not certified',
    counts: [...Array(5).fill(5), 8],
    origin: 'ours',
    written: 8,
    notCertified: true,
  },
  { name: "another client's count: not certified", counts: [4242], origin: 'foreign', written: 7, notCertified: true },
];

for (const c of UPDATED) {
  test(`countAfterUpdate: ${c.name}`, async () => {
    const s = scripted(c.counts);
    const updates: number[] = [];
    const seen = await countAfterUpdate(s.stock, s.pet, 7, async (v) => updates.push(v));
    expect(seen.origin).toBe(c.origin);
    expect(seen.written).toBe(c.written);
    expect(!!seen.notCertified).toBe(c.notCertified);
    expect(updates).toEqual(c.written === 8 ? [8] : []);
  });
}
