/**
 * Faults of HTTP musts that bear on every response (RFC 9110): the `Date` header.
 */
import { headers } from '../proxy.ts';
import { respond } from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

export const faults: FaultDefinition[] = [
  {
    name: 'http-no-date',
    description: 'Error responses carry no `Date` header (the error writer turns it off; RFC 9110 §6.6.1 requires it on 4xx).',
    expect: ['HTTP-01'],
    proxy: () =>
      respond(
        (res) => res.status >= 400 && res.status < 500,
        (res) => ({ ...res, headers: headers.remove(res.headers, 'date') }),
      ),
  },
];
