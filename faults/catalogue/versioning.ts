/**
 * Faults of the Versioning section: the `/v1` segment, the deprecated operation's `Deprecation`
 * and `Sunset` headers (RFC 9745, RFC 8594).
 */
import { headers } from '../proxy.ts';
import { answer, mapHeader } from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

export const faults: FaultDefinition[] = [
  {
    name: 'versioning-no-v1-segment',
    description: 'The deployment serves the inventory under `/api` with no version segment; `/v1/...` is 404.',
    expect: ['VER-01'],
    basePath: '/api',
    proxy: () => ({
      request(req) {
        if (req.path === '/api' || req.path.startsWith('/api/')) return { ...req, path: `/v1${req.path.slice(4)}` };
        if (req.path === '/v1' || req.path.startsWith('/v1/'))
          return answer(404, { code: 'not_found', message: 'no such route', status: 404 });
        return req;
      },
    }),
  },
  {
    name: 'deprecation-sunset-iso-date',
    description: 'The deprecated `GET /pets/{petId}` carries `Sunset` as an ISO 8601 date instead of an HTTP-date.',
    expect: ['VER-05'],
    proxy: () => ({ response: (res) => mapHeader(res, 'sunset', (v) => new Date(Date.parse(v)).toISOString()) }),
  },
  {
    name: 'deprecation-sunset-before-deprecation',
    description: '`Sunset` is earlier than `Deprecation` (RFC 9745 §3).',
    expect: ['VER-05'],
    proxy: () => ({
      response(res) {
        const dep = headers.get(res.headers, 'deprecation')?.match(/^@(\d+)$/);
        if (!dep) return res;
        return mapHeader(res, 'sunset', () => new Date((Number(dep[1]) - 86_400 * 30) * 1000).toUTCString());
      },
    }),
  },
  {
    name: 'deprecation-malformed',
    description: '`Deprecation` is neither a structured date nor an obsolete form: `Deprecation: yes`.',
    expect: ['VER-04'],
    proxy: () => ({ response: (res) => mapHeader(res, 'deprecation', () => 'yes') }),
  },
];
