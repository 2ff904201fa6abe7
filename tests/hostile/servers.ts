/**
 * Small deterministic hostile targets on 127.0.0.1 (port 0), and what the hostile-target tests
 * assert with them: how many requests arrived and how many carried a key, every encoding of a key
 * on stdout and in every file a run wrote, the run's wall time and exit code.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import AdmZip from 'adm-zip';
import { findNeedle, secretNeedles, SECRET_VARIABLES, type Secret } from '../../core/secrets.ts';
import { inheritedEnv } from '../../faults/harness.ts';
import { SETTINGS } from '../../settings/index.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
const TLS = path.join(ROOT, 'tests', 'fixtures', 'tls');

/**
 * How the target answers a request that carries a key (`keyed`) and one that does not (the
 * preflight's). Each answer is the same every time.
 * - `error-body`: 401 with an Error body (spec, Authentication rule 3), the conformant answer to a missing key;
 * - `trickle-headers`: the status line and headers, one byte a second, never finished;
 * - `endless-body`: 200 `application/json`, a body that never ends;
 * - `echo-key`: 401 with an Error body whose `status` is the key it got, its first character `\u`-escaped.
 */
export type Answer = 'error-body' | 'trickle-headers' | 'endless-body' | 'echo-key';

export interface HostileOptions {
  keyed: Answer;
  /** The answer to the first request that carries a key, when it differs from `keyed` (the later ones get `keyed`). */
  firstKeyed?: Answer;
  unkeyed?: Answer;
  /** Serve HTTPS with a self-signed certificate nothing trusts. */
  selfSigned?: boolean;
}

export interface Hostile {
  origin: string;
  /** Every request received. */
  requests: number;
  /** Requests that carried an `Authorization` header (any key, with or without a scheme). */
  keyed: number;
  close(): Promise<void>;
}

const ERROR_BODY = JSON.stringify({ code: 'unauthorized', message: 'missing or invalid key', status: 401 });

function answer(kind: Answer, req: http.IncomingMessage, res: http.ServerResponse, timers: Set<NodeJS.Timeout>): void {
  const every = (ms: number, tick: () => boolean) => {
    const t = setInterval(() => {
      if (!tick()) {
        clearInterval(t);
        timers.delete(t);
      }
    }, ms);
    timers.add(t);
  };
  if (kind === 'error-body') {
    res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' }).end(ERROR_BODY);
  } else if (kind === 'trickle-headers') {
    const head = Buffer.from(`HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Padding: ${'x'.repeat(4096)}`);
    let i = 0;
    every(1000, () => {
      if (req.socket.destroyed || i >= head.length) return false;
      req.socket.write(head.subarray(i, ++i));
      return true;
    });
  } else if (kind === 'endless-body') {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.write('[');
    every(20, () => {
      if (res.destroyed) return false;
      res.write('{"petId":1,"quantity":0},');
      return true;
    });
  } else {
    const key = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
    const escaped = key ? `\\u${key.charCodeAt(0).toString(16).padStart(4, '0')}${key.slice(1)}` : '';
    res.writeHead(401, { 'Content-Type': 'application/json', 'WWW-Authenticate': 'Bearer' });
    res.end(`{"code":"unauthorized","message":"invalid key","status":"${escaped}"}`);
  }
}

/** Starts one hostile target; `close` ends every connection and timer it holds. */
export async function startHostile(options: HostileOptions): Promise<Hostile> {
  const timers = new Set<NodeJS.Timeout>();
  const sockets = new Set<Socket>();
  const state = { requests: 0, keyed: 0 };
  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    state.requests++;
    const keyed = req.headers.authorization !== undefined;
    if (keyed) state.keyed++;
    const first = keyed && state.keyed === 1 && options.firstKeyed;
    answer(first || (keyed ? options.keyed : (options.unkeyed ?? 'error-body')), req, res, timers);
  };
  const server = options.selfSigned
    ? https.createServer(
        { cert: fs.readFileSync(path.join(TLS, 'untrusted.pem')), key: fs.readFileSync(path.join(TLS, 'untrusted-key.pem')) },
        handler,
      )
    : http.createServer(handler);
  server.on(options.selfSigned ? 'secureConnection' : 'connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return Object.assign(state, {
    origin: `${options.selfSigned ? 'https' : 'http'}://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((r) => {
        for (const t of timers) clearInterval(t);
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  });
}

/** Every file under `dir` (none if it does not exist). */
export function filesUnder(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name));
}

/** The texts a file holds: its bytes as UTF-8, and each entry of a zip. */
function textsOf(file: string): { where: string; text: string }[] {
  const bytes = fs.readFileSync(file);
  const out = [{ where: file, text: bytes.toString('utf8') }];
  if (bytes.subarray(0, 2).toString('latin1') === 'PK') {
    for (const e of new AdmZip(bytes).getEntries())
      if (!e.isDirectory) out.push({ where: `${file}!${e.entryName}`, text: e.getData().toString('utf8') });
  }
  return out;
}

/** Where any key occurs, in any encoding the core knows (raw, escaped, encoded, base64): `where: NAME (form)`. */
export function keyOccurrences(secrets: readonly Secret[], stdout: string, reportsDir: string): string[] {
  const needles = secretNeedles(secrets);
  const sources = [{ where: 'stdout', text: stdout }, ...filesUnder(reportsDir).flatMap(textsOf)];
  const out: string[] = [];
  for (const s of sources)
    for (const n of needles)
      for (const form of findNeedle(s.text, n)) out.push(`${path.relative(ROOT, s.where) || s.where}: ${n.name} (${form})`);
  return out;
}

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Wall time from spawn to exit. */
  ms: number;
  /** The process group (the child leads its own): alive now? */
  groupAlive: () => boolean;
  /** True once every process of the group has ended, waiting up to `graceMs` (a helper such as esbuild's service ends when its parent's pipe closes). */
  groupEnds: (graceMs?: number) => Promise<boolean>;
}

/**
 * Runs `inventory-conformance <args>` as a user would (cli/bin.mjs), in a clean environment (no run
 * variable inherited) plus `env`. `onStart` receives the child (e.g. to signal it); the run is
 * killed after `timeoutMs`, which the caller's wall-time bound stays well below.
 */
export function runCli(
  args: string[],
  env: Record<string, string>,
  options: { timeoutMs: number; onStart?: (pid: number) => void },
): Promise<CliRun> {
  const base = Object.fromEntries(
    Object.entries(inheritedEnv()).filter(
      ([k]) =>
        !SETTINGS.some((s) => s.name === k) && !(SECRET_VARIABLES as readonly string[]).includes(k) && k !== 'NODE_TLS_REJECT_UNAUTHORIZED',
    ),
  );
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'cli', 'bin.mjs'), ...args], {
      cwd: ROOT,
      env: { ...base, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const pid = child.pid!;
    const groupAlive = () => {
      try {
        process.kill(-pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const killer = setTimeout(() => {
      stderr += `\n[test] exceeded ${options.timeoutMs} ms: killed\n`;
      if (groupAlive()) process.kill(-pid, 'SIGKILL');
    }, options.timeoutMs);
    options.onStart?.(pid);
    child.on('close', (code) => {
      clearTimeout(killer);
      const groupEnds = async (graceMs = 2000) => {
        for (const until = Date.now() + graceMs; groupAlive() && Date.now() < until; ) await new Promise((r) => setTimeout(r, 50));
        return !groupAlive();
      };
      resolve({ code, stdout, stderr, ms: Date.now() - started, groupAlive, groupEnds });
    });
  });
}
