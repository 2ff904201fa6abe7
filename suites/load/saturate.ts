/**
 * The load engine at saturation for `npm run bench` (bench/ may not import the suites, so it runs
 * this file as a process of its own): one closed-model run per line of stdin,
 * `{"url", "durationS", "connections", "authorization"?, "caFile"?}`, answered by one line of
 * figures on stdout with the CPU time this process spent in the run. Loopback targets only; the
 * key arrives on the pipe and leaves only as the Authorization header.
 */
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { runLoad } from './engine.ts';

interface SaturateRequest {
  url: string;
  durationS: number;
  connections: number;
  authorization?: string;
  caFile?: string;
}

for await (const line of createInterface({ input: process.stdin })) {
  const r = JSON.parse(line) as SaturateRequest;
  const before = process.cpuUsage();
  const { figures } = await runLoad({
    label: 'bench saturation',
    url: r.url,
    steps: [{ name: 'GET', path: new URL(r.url).pathname }],
    authorization: r.authorization,
    model: { kind: 'closed', durationS: r.durationS },
    connections: r.connections,
    maxRequests: 1e9,
    maxDurationS: r.durationS + 30,
    sampleSize: 0,
    loopbackOnly: true,
    tls: r.caFile ? { ca: readFileSync(r.caFile, 'utf8') } : undefined,
    progress: () => undefined,
  });
  const cpu = process.cpuUsage(before);
  const out = {
    requests: figures.requests,
    durationS: figures.durationS,
    cpuUs: cpu.user + cpu.system,
    statusCodes: figures.statusCodes,
    errors: figures.socketErrors + figures.timeouts + figures.unanswered,
    p50: figures.latencyMs.p50,
    p99: figures.latencyMs.p99,
    tls: figures.tls,
  };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}
