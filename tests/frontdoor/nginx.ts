/**
 * Debian's nginx as a front door for the tests: a private CA made at run time (openssl), nginx
 * terminating TLS on 127.0.0.1 with default settings and kept-alive upstreams, every file it
 * writes (pid, logs, temp paths) in a folder of its own. `close` stops it, whatever happened.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';

export const NGINX = '/usr/sbin/nginx';

export interface RunningNginx {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  /** The private CA's certificate (for NODE_EXTRA_CA_CERTS). */
  caFile: string;
  /** nginx's error log so far. */
  errorLog(): string;
  close(): Promise<void>;
}

/** A CA and a leaf for 127.0.0.1 and localhost, signed by it, in `dir`. */
export function makePrivateCa(dir: string): { caFile: string; certFile: string; keyFile: string } {
  const f = (name: string) => path.join(dir, name);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { stdio: 'pipe' });
  ssl(
    ...['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2'],
    ...['-subj', '/CN=front door test CA', '-keyout', f('ca-key.pem'), '-out', f('ca.pem')],
    ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
  );
  ssl(
    'req',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-keyout',
    f('leaf-key.pem'),
    '-out',
    f('leaf.csr'),
  );
  fs.writeFileSync(f('leaf.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
  ssl(
    ...['x509', '-req', '-in', f('leaf.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca-key.pem'), '-CAcreateserial'],
    ...['-days', '2', '-extfile', f('leaf.ext'), '-out', f('leaf.pem')],
  );
  return { caFile: f('ca.pem'), certFile: f('leaf.pem'), keyFile: f('leaf-key.pem') };
}

/** A port free on 127.0.0.1 now (nginx binds it a moment later). */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The configuration: defaults everywhere but the paths, TLS and the kept-alive upstream. */
function config(dir: string, port: number, upstream: URL, certs: { certFile: string; keyFile: string }, logLevel: NginxLogLevel): string {
  const p = (name: string) => path.join(dir, name);
  return `worker_processes 1;
pid ${p('nginx.pid')};
error_log ${p('error.log')} ${logLevel};
events { worker_connections 512; }
http {
  access_log ${p('access.log')};
  client_body_temp_path ${p('client_body')};
  proxy_temp_path ${p('proxy')};
  fastcgi_temp_path ${p('fastcgi')};
  uwsgi_temp_path ${p('uwsgi')};
  scgi_temp_path ${p('scgi')};
  upstream service {
    server ${upstream.host};
    keepalive 16;
  }
  server {
    listen 127.0.0.1:${port} ssl;
    server_name localhost;
    ssl_certificate ${certs.certFile};
    ssl_certificate_key ${certs.keyFile};
    location / {
      proxy_pass http://service;
      proxy_http_version 1.1;
      proxy_set_header Connection "";
    }
  }
}
`;
}

/** Resolves once a TLS handshake with the CA succeeds on `port`; throws past `deadlineMs`. */
async function handshake(port: number, ca: Buffer, child: ChildProcess, deadlineMs: number, log: () => string): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`nginx exited with ${child.exitCode} before it listened:\n${log()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' }, () => {
        s.destroy();
        resolve(true);
      });
      s.on('error', () => resolve(false));
      s.setTimeout(1_000, () => {
        s.destroy();
        resolve(false);
      });
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`nginx did not answer a TLS handshake on 127.0.0.1:${port} within ${deadlineMs} ms:\n${log()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Stops nginx's process group: SIGTERM (fast shutdown), then SIGKILL after `graceMs`. */
async function stop(child: ChildProcess, graceMs = 3_000): Promise<void> {
  const group = (sig: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, sig);
    } catch {
      /* already gone */
    }
  };
  if (child.exitCode !== null || child.signalCode !== null) return group('SIGKILL');
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  group('SIGTERM');
  const timer = setTimeout(() => group('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
  group('SIGKILL'); // a worker left behind
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of running) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
});

/** nginx's error-log levels the tests use: `info` names each upstream connection reset or closed early; `debug` would log request headers (keys), never. */
export type NginxLogLevel = 'warn' | 'info';

/** Starts nginx before `upstream` (an http origin), TLS with a CA made here. Fails, naming nginx, when it is missing. */
export async function startNginx(upstream: string, options: { logLevel?: NginxLogLevel } = {}): Promise<RunningNginx> {
  if (!fs.existsSync(NGINX)) throw new Error(`${NGINX} is missing: install Debian's nginx-light (.ci/run does when it is missing)`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'frontdoor-nginx-'));
  // Run as root, nginx's workers run as nobody: they must reach the temp paths the master makes here.
  fs.chmodSync(dir, 0o755);
  const certs = makePrivateCa(dir);
  const log = () => (fs.existsSync(path.join(dir, 'error.log')) ? fs.readFileSync(path.join(dir, 'error.log'), 'utf8') : '');
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const conf = path.join(dir, 'nginx.conf');
    fs.writeFileSync(conf, config(dir, port, new URL(upstream), certs, options.logLevel ?? 'warn'));
    const child = spawn(NGINX, ['-p', dir, '-c', conf, '-e', path.join(dir, 'error.log'), '-g', 'daemon off;'], {
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    running.add(child);
    let stderr = '';
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    try {
      await handshake(port, fs.readFileSync(certs.caFile), child, 10_000, () => `${stderr}${log()}`);
    } catch (e) {
      await stop(child);
      running.delete(child);
      if (attempt < 3 && /Address already in use/.test(stderr + log())) continue;
      fs.rmSync(dir, { recursive: true, force: true });
      throw e;
    }
    return {
      url: `https://127.0.0.1:${port}`,
      caFile: certs.caFile,
      errorLog: log,
      async close() {
        await stop(child);
        running.delete(child);
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  }
}
