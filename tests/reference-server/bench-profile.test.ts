/**
 * `bench/profile.ts` (the README's "where each microsecond goes"): sampled time divided by the
 * requests answered, by area, by function (self) and by this repository's functions (inclusive).
 */
import { expect, test } from '../test.ts';
import { areaOf, summarize } from '../../bench/profile.ts';

const frame = (functionName: string, url: string) => ({ functionName, url, lineNumber: 0 });

test.describe('bench profile summary', () => {
  test('BENCH-PROFILE time per request by area, self and inclusive, from a synthetic profile', () => {
    // root → onRequest (repository) → send (repository) → writev (builtin); root → (idle); root → (garbage collector)
    const profile = {
      nodes: [
        { id: 1, callFrame: frame('(root)', ''), children: [2, 5, 6] },
        { id: 2, callFrame: frame('onRequest', 'file:///x/reference-server/app.ts'), children: [3] },
        { id: 3, callFrame: frame('send', 'file:///x/reference-server/http/response.ts'), children: [4] },
        { id: 4, callFrame: frame('writev', '') },
        { id: 5, callFrame: frame('(idle)', '') },
        { id: 6, callFrame: frame('(garbage collector)', '') },
      ],
      samples: [2, 3, 4, 4, 5, 6],
      timeDeltas: [100, 200, 300, 300, 1000, 100],
    };
    const s = summarize(profile, 10);
    expect(s.total).toBeCloseTo(200);
    const areas = Object.fromEntries(s.areas);
    expect(areas['this repository (engine, suites, reference server, bench)']).toBeCloseTo(30);
    expect(areas['V8 builtins (RegExp, string and buffer copies)']).toBeCloseTo(60);
    expect(areas['idle (waiting for the socket)']).toBeCloseTo(100);
    expect(areas['garbage collector']).toBeCloseTo(10);
    const self = Object.fromEntries(s.self);
    expect(self['onRequest reference-server/app.ts:1']).toBeCloseTo(10);
    expect(self['send reference-server/http/response.ts:1']).toBeCloseTo(20);
    const inclusive = Object.fromEntries(s.inclusive);
    expect(inclusive['onRequest reference-server/app.ts:1']).toBeCloseTo(90);
    expect(inclusive['send reference-server/http/response.ts:1']).toBeCloseTo(80);
    expect(Object.keys(inclusive)).toHaveLength(2);
  });

  test('BENCH-PROFILE node internals fall into their areas', () => {
    const table: [string, string][] = [
      ['node:_http_server', "node's HTTP (node:_http_*)"],
      ['node:internal/streams/readable', 'streams (node:internal/streams)'],
      ['node:events', 'events, ticks, timers'],
      ['node:internal/process/task_queues', 'events, ticks, timers'],
      ['node:buffer', 'buffers'],
      ['node:internal/stream_base_commons', 'other node internals'],
      ['file:///x/node_modules/tsx/dist/register.cjs', 'start-up (module loading)'],
      ['file:///x/core/http1-pool.ts', 'this repository (engine, suites, reference server, bench)'],
      ['file:///x/suites/load/engine.ts', 'this repository (engine, suites, reference server, bench)'],
    ];
    for (const [url, area] of table) expect(areaOf(frame('f', url)), url).toBe(area);
  });
});
