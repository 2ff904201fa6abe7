/**
 * Where each microsecond of a request goes: `npx tsx bench/profile.ts <profile or dir> <requests> [top]`.
 *
 * Reads a V8 CPU profile (`node --cpu-prof`, as `BENCH_PROFILE=<dir> npm run bench` writes one per
 * target and engine; given a directory, the `.cpuprofile` that spent most time outside idle, the
 * main thread's: tsx's loader thread writes one too) and divides the sampled time by the number of requests the target
 * answered (the bench prints it). Prints the time per request by area (the project's own code,
 * node's HTTP, streams, events and ticks, buffers, the garbage collector, native code outside
 * JavaScript, idle), then the `top` functions by self time, then the project's own functions by
 * inclusive time. Start-up (module loading, tsx) falls into `start-up`: run the load long enough
 * that it is small.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Sampled time outside idle (µs). */
function busyTime(profile: CpuProfile): number {
  const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === '(idle)').map((n) => n.id));
  let busy = 0;
  for (let i = 0; i < profile.samples.length; i++) if (!idle.has(profile.samples[i])) busy += profile.timeDeltas[i] ?? 0;
  return busy;
}

/** The profile file: `path` itself, or the busiest `.cpuprofile` in the directory `path`. */
export function profileFile(path: string): string {
  if (!statSync(path).isDirectory()) return path;
  const files = readdirSync(path)
    .filter((f) => f.endsWith('.cpuprofile'))
    .map((f) => join(path, f));
  if (files.length === 0) throw new Error(`${path}: no .cpuprofile in it`);
  const busy = new Map(files.map((f) => [f, busyTime(JSON.parse(readFileSync(f, 'utf8')) as CpuProfile)]));
  return files.sort((a, b) => busy.get(b)! - busy.get(a)!)[0];
}

/** The repository's own code: the engine and its core, the suites, the reference server, the bench. */
const OWN_CODE = /\/(reference-server|bench|core|suites)\//;

/** The area a frame's time counts to. */
export function areaOf(frame: CallFrame): string {
  const { url, functionName } = frame;
  if (functionName === '(garbage collector)') return 'garbage collector';
  if (functionName === '(idle)') return 'idle (waiting for the socket)';
  if (functionName === '(program)') return 'native, outside JavaScript (syscalls, parser)';
  if (OWN_CODE.test(url) && !/node_modules/.test(url)) return 'this repository (engine, suites, reference server, bench)';
  if (/tsx|esbuild|modules\/|yaml\//.test(url)) return 'start-up (module loading)';
  if (/^node:_http_/.test(url)) return "node's HTTP (node:_http_*)";
  if (/^node:internal\/streams\//.test(url)) return 'streams (node:internal/streams)';
  if (/^node:(events|internal\/process\/task_queues|internal\/timers|timers)/.test(url)) return 'events, ticks, timers';
  if (/^node:(buffer|internal\/buffer)/.test(url)) return 'buffers';
  if (url === '') return 'V8 builtins (RegExp, string and buffer copies)';
  return 'other node internals';
}

const label = (f: CallFrame): string =>
  `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*?\/(reference-server|bench|core|suites|node_modules)\//, '$1/')}:${f.lineNumber + 1}`;

/** Time per request (µs) by area, by function (self) and by the repository's functions (inclusive). */
export function summarize(profile: CpuProfile, requests: number) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const perNode = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    perNode.set(id, (perNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const areas = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  const add = (m: Map<string, number>, k: string, t: number): void => void m.set(k, (m.get(k) ?? 0) + t / requests);
  for (const [id, t] of perNode) {
    const frame = byId.get(id)!.callFrame;
    total += t / requests;
    add(areas, areaOf(frame), t);
    add(self, label(frame), t);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      const k = label(f);
      if (seen.has(k) || !OWN_CODE.test(f.url) || /node_modules/.test(f.url)) continue;
      seen.add(k);
      add(inclusive, k, t);
    }
  }
  const sorted = (m: Map<string, number>) => [...m].sort((a, b) => b[1] - a[1]);
  return { total, areas: sorted(areas), self: sorted(self), inclusive: sorted(inclusive) };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [path, requestsArg, topArg] = process.argv.slice(2);
  const requests = Number(requestsArg);
  if (path === undefined || !(requests > 0)) {
    console.error('usage: npx tsx bench/profile.ts <profile.cpuprofile | dir> <requests answered> [top functions, 30]');
    process.exit(2);
  }
  const file = profileFile(path);
  const s = summarize(JSON.parse(readFileSync(file, 'utf8')) as CpuProfile, requests);
  const row = ([k, v]: [string, number]): string => `  ${v.toFixed(2).padStart(6)} µs  ${k}`;
  console.log(`${file}: ${s.total.toFixed(2)} µs of sampled time per request over ${requests} requests`);
  console.log('by area:');
  for (const r of s.areas) console.log(row(r));
  console.log(`top ${Number(topArg ?? 30)} functions by self time:`);
  for (const r of s.self.slice(0, Number(topArg ?? 30))) console.log(row(r));
  console.log("this repository's functions by inclusive time:");
  for (const r of s.inclusive.filter(([, v]) => v >= 0.005)) console.log(row(r));
}
