/**
 * Spec: Versioning ("`GET /pets/{petId}` is deprecated and has a sunset date"); RFC 9745
 * (Deprecation), RFC 8594 (Sunset). The operation's path and payload are not shown: it is probed
 * with a listed pet id; when it is absent (404, 405, 410, 501) nothing fails.
 */
import { test, expectFact, expectNoDeviation, type ApiClient, type ApiResponse } from '../fixtures.ts';
import { parseDeprecation, judgeSunset } from '../lib/deprecation.ts';

const ABSENT = [404, 405, 410, 501];

async function probe(api: ApiClient, requirementId: string): Promise<ApiResponse> {
  const [first] = await api.inventory(requirementId);
  if (!first) throw new Error(`${requirementId}: the inventory list is empty; no pet id to probe GET /pets/{petId} with`);
  return api.send({ method: 'GET', base: 'inventory', path: `/pets/${first.id}` });
}

test('VER-04 GET /pets/{petId} marks its deprecation as @<epoch seconds> where present', async ({ api, warn }) => {
  const res = await probe(api, 'VER-04');
  const value = res.header('deprecation');
  if (value === undefined) {
    if (ABSENT.includes(res.status))
      warn(
        `VER-04: GET /pets/{petId} answered ${res.status} without Deprecation: the operation is absent here (its path is not shown by the spec)`,
      );
    else warn(`VER-04: GET /pets/{petId} answered ${res.status} without a Deprecation header (the spec says it is deprecated)`);
    return;
  }
  const parsed = parseDeprecation(value);
  expectFact(parsed.ok, { expected: 'Deprecation @<epoch seconds> (RFC 9745 §2.1)', observed: parsed.ok ? value : parsed.reason, res });
  if (parsed.ok && parsed.form === 'obsolete') warn(`VER-04: ${parsed.note}`);
});

test('VER-05 GET /pets/{petId} announces its Sunset as an HTTP-date not before Deprecation', async ({ api, warn }) => {
  const res = await probe(api, 'VER-05');
  const sunset = res.header('sunset');
  if (sunset === undefined) {
    warn(
      `VER-05: GET /pets/{petId} answered ${res.status} without a Sunset header${ABSENT.includes(res.status) ? ' (the operation is absent here)' : ''}`,
    );
    return;
  }
  const dep = res.header('deprecation');
  const parsedDep = dep === undefined ? undefined : parseDeprecation(dep);
  const depS = parsedDep?.ok ? parsedDep.epochS : undefined;
  const judgement = judgeSunset(sunset, res.header('date'), depS);
  for (const w of judgement.warnings) warn(`VER-05: ${w}`);
  expectNoDeviation(judgement.problems, 'a valid Sunset (an HTTP-date)', res.label, res);
});
