/**
 * Debian's HAProxy before the bundled reference server, as a gateway with a per-source gate of its
 * own: past 120 requests in 10 s from one address it answers 429 itself, with an HTML page, no
 * `Retry-After` and no `X-RateLimit-*` (a real deviation of the front door). The config is written
 * to a temporary folder; HAProxy runs in the foreground (`-db`) on a free port of 127.0.0.1.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startReferenceTarget, targetEnvOf, type ReferenceTarget } from '../../certify/reference-target.ts';

export const HAPROXY = '/usr/sbin/haproxy';

/** A free port of 127.0.0.1, picked at run time. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The gateway's config: one frontend, the per-source gate, the reference server behind it. */
export function gatewayConfig(listen: number, upstream: URL): string {
  return [
    'global',
    '  maxconn 512',
    'defaults',
    '  mode http',
    '  timeout connect 5s',
    '  timeout client 60s',
    '  timeout server 60s',
    '  timeout http-keep-alive 10s',
    'backend per_source',
    '  stick-table type ip size 1k expire 30s store http_req_rate(10s)',
    'frontend gateway',
    `  bind 127.0.0.1:${listen}`,
    '  http-request track-sc0 src table per_source',
    '  http-request return status 429 content-type text/html string "<html><body><h1>429 Too Many Requests</h1></body></html>" if { sc_http_req_rate(0) gt 120 }',
    '  default_backend api',
    'backend api',
    `  server reference ${upstream.hostname}:${upstream.port}`,
    '',
  ].join('\n');
}

export interface Gateway {
  target: ReferenceTarget;
  process: ChildProcess;
  /** The inventory as the reference server holds it (read past the gateway, with LOAD_KEY). */
  inventory(): Promise<string>;
  /** Ends HAProxy (SIGTERM, then SIGKILL) and the reference server; safe to call twice. */
  close(): Promise<void>;
}

/** Ends `child` for sure: SIGTERM, SIGKILL after 2 s, resolved once it exited. */
async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
  await exited;
  clearTimeout(timer);
}

/** Starts the reference server and HAProxy in front of it; the target's addresses are HAProxy's. */
export async function startGateway(): Promise<Gateway> {
  if (!fs.existsSync(HAPROXY)) throw new Error(`haproxy is missing: ${HAPROXY} not found (Debian's haproxy; .ci/run installs it)`);
  const ref = await startReferenceTarget();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'haproxy-gate-'));
  let child: ChildProcess | undefined;
  const close = async () => {
    if (child) await stop(child);
    await ref.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  try {
    const port = await freePort();
    const cfg = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(cfg, gatewayConfig(port, new URL(ref.server.baseUrl)));
    child = spawn(HAPROXY, ['-f', cfg, '-db'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-2000)));
    const origin = `http://127.0.0.1:${port}`;
    await waitForListener(port, child, () => stderr);
    const upstream = new URL(ref.server.baseUrl);
    const server = {
      ...ref.server,
      baseUrl: ref.server.baseUrl.replace(upstream.origin, origin),
      apiUrl: ref.server.apiUrl.replace(new URL(ref.server.apiUrl).origin, origin),
    };
    // The gateway outlives the certify run that uses its target: `close` of the gateway ends both.
    const target: ReferenceTarget = { ...ref, server, env: targetEnvOf(server, ref.settings.apiPlan), close: async () => {} };
    const inventory = async () => {
      const res = await fetch(`${ref.server.baseUrl}/inventory`, { headers: { authorization: `Bearer ${ref.env.LOAD_KEY}` } });
      if (res.status !== 200) throw new Error(`reading the upstream inventory: status ${res.status}`);
      return res.text();
    };
    return { target, process: child, inventory, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Until HAProxy accepts connections on `port` (30 s at most: a busy runner), or it exited. */
async function waitForListener(port: number, child: ChildProcess, stderr: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`haproxy exited (${child.exitCode}): ${stderr()}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = net.connect(port, '127.0.0.1', () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
    });
    if (up) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`haproxy did not listen on 127.0.0.1:${port} within 30 s: ${stderr()}`);
}
