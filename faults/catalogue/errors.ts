/**
 * Faults of the Errors section: Error bodies (`code`, `message`, `status`) and their content type.
 */
import { headers, type FaultHooks, type ProxyResponse } from '../proxy.ts';
import { isError, isJson, isMessages, mapJson, respond } from '../lib.ts';
import type { FaultDefinition } from '../fault.ts';

/** Error bodies only: JSON responses with status >= 400. */
function mapErrorBody(fn: (body: Record<string, unknown>, res: ProxyResponse) => unknown): FaultHooks {
  return respond(
    (res) => isError(res) && isJson(res.headers),
    (res) => mapJson(res, (b) => (b && typeof b === 'object' && !Array.isArray(b) ? fn(b, res) : b)),
  );
}

export const faults: FaultDefinition[] = [
  {
    name: 'error-missing-code',
    description: 'The not-found handler writes `{ message, status }`: 404 Error bodies lack the required `code`.',
    expect: ['ERR-01'],
    proxy: () => mapErrorBody(({ code, ...rest }, res) => (res.status === 404 ? rest : { code, ...rest })),
  },
  {
    name: 'error-status-string',
    description: 'The quickstart service (a separate deployment) writes the Error `status` as a string (`"400"`), not an integer.',
    expect: ['ERR-01'],
    proxy: () =>
      respond(
        (res, req) => isMessages(req) && isError(res) && isJson(res.headers),
        (res) => mapJson(res, (b) => (b && typeof b === 'object' ? { ...b, status: String(b.status) } : b)),
      ),
  },
  {
    name: 'error-status-mismatch',
    description: 'The not-found handler was copied from the validation handler: a 404 carries an Error body with `status: 400`.',
    expect: ['ERR-03'],
    proxy: () => mapErrorBody((b, res) => (res.status === 404 ? { ...b, status: 400 } : b)),
  },
  {
    name: 'error-text-plain',
    description: 'The quickstart service labels its 400 Error bodies `text/plain` (a framework default) although they are JSON.',
    expect: ['ERR-02'],
    proxy: () =>
      respond(
        (res, req) => isMessages(req) && res.status === 400,
        (res) => ({ ...res, headers: headers.set(res.headers, 'Content-Type', 'text/plain; charset=utf-8') }),
      ),
  },
];
