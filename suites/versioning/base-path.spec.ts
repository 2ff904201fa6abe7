/** Spec: Versioning ("The base addresses carry the path segment `/v1`"). */
import { test, expectFact, expectStatus, missingPrerequisiteReason } from '../fixtures.ts';

test('VER-01 the base address ends in /v1 and serves the inventory', async ({ api, notCertified }) => {
  const base = api.env.baseUrl ?? notCertified(missingPrerequisiteReason('BASE_URL'));
  const path = new URL(base).pathname.replace(/\/+$/, '');
  expectFact(path.endsWith('/v1'), { what: "BASE_URL's path", expected: 'a path ending in /v1', observed: `"${path || '/'}"` });
  const res = await api.listInventory();
  expectStatus(res, 200, 'GET /inventory under the /v1 base');
});
