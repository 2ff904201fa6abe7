/**
 * Spec: Authentication; Errors (401). RFC 9110 §11.1 (scheme case-insensitive), §15.5.2
 * (WWW-Authenticate on 401), RFC 6750 §3 (Bearer challenge, invalid_token).
 * The matrix runs on every operation: list, update and the quickstart messages.
 */
import { test, expectNoDeviation, expectStatus, expectErrorBody, countAfterRefused, type ApiClient, type Credential } from '../fixtures.ts';
import { countText } from '../lib/unrestored.ts';
import { bearerChallenge } from '../lib/headers.ts';
import { OPERATIONS, petFor, swapCase } from './operations.ts';

interface BadCredential {
  name: string;
  credential: (api: ApiClient) => Credential;
  /** An invalid (not merely absent) credential: the challenge should say invalid_token. */
  invalid: boolean;
}

/** AUTH-03: missing or invalid keys. */
const BAD_CREDENTIALS: BadCredential[] = [
  { name: 'no Authorization header', credential: () => 'none', invalid: false },
  { name: 'an empty Authorization header', credential: () => ({ authorization: '' }), invalid: false },
  {
    name: 'the key under another scheme (Basic)',
    credential: () => ({ key: 'api', format: (k) => `Basic ${Buffer.from(`${k}:`).toString('base64')}` }),
    invalid: false,
  },
  { name: 'the bare key without a scheme', credential: () => ({ key: 'api', format: (k) => k }), invalid: false },
  { name: 'an unknown key', credential: (api) => ({ authorization: `Bearer ${api.unknownKey}` }), invalid: true },
];

for (const op of OPERATIONS) {
  test.describe(op.name, () => {
    for (const bad of BAD_CREDENTIALS) {
      test(`AUTH-03 ${op.name}: ${bad.name} yields 401 with an Error body`, async ({ api, stock }) => {
        const pet = await petFor(op, stock, 'AUTH-03');
        const res = await op.send(api, bad.credential(api), pet);
        expectStatus(res, 401, `${op.name} with ${bad.name}`);
        expectErrorBody(res, `${op.name} with ${bad.name}`);
      });
    }

    test(`AUTH-06 ${op.name}: every 401 carries a Bearer challenge`, async ({ api, stock }) => {
      const pet = await petFor(op, stock, 'AUTH-06');
      const problems: string[] = [];
      for (const bad of BAD_CREDENTIALS) {
        const res = await op.send(api, bad.credential(api), pet);
        if (res.status !== 401) continue; // AUTH-03 reports the status
        const value = res.header('www-authenticate');
        if (!bearerChallenge(value)) {
          problems.push(
            `${bad.name}: WWW-Authenticate is ${value === undefined ? 'missing' : JSON.stringify(value)}, expected a Bearer challenge`,
          );
        }
      }
      expectNoDeviation(problems, 'every 401 carries WWW-Authenticate with a Bearer challenge (RFC 9110 §15.5.2, RFC 6750 §3)', op.name);
    });

    test(`AUTH-02 ${op.name}: a request without a key is refused with 401`, async ({ api, stock }) => {
      const pet = await petFor(op, stock, 'AUTH-02');
      const res = await op.send(api, 'none', pet);
      expectStatus(res, 401, `${op.name} without Authorization`);
    });

    test(`AUTH-09 ${op.name}: Bearer without a token yields 400 or 401 with an Error body`, async ({ api, stock }) => {
      const pet = await petFor(op, stock, 'AUTH-09');
      const res = await op.send(api, { authorization: 'Bearer' }, pet);
      expectStatus(res, [400, 401], `${op.name} with "Authorization: Bearer"`);
      expectErrorBody(res, `${op.name} with "Authorization: Bearer"`);
    });

    test(`AUTH-01 ${op.name}: Authorization: Bearer <API_KEY> authenticates`, { tag: op.mutates ? ['@mutates'] : [] }, async ({
      api,
      stock,
    }) => {
      const pet = await petFor(op, stock, 'AUTH-01');
      const res = await op.send(api, 'api', pet);
      expectStatus(res, '2xx', `${op.name} with "Authorization: Bearer <API_KEY>"`);
    });

    for (const scheme of ['bearer', 'BEARER']) {
      test(`AUTH-05 ${op.name}: the scheme written "${scheme}" authenticates`, { tag: op.mutates ? ['@mutates'] : [] }, async ({
        api,
        stock,
      }) => {
        const pet = await petFor(op, stock, 'AUTH-05');
        const res = await op.send(api, { key: 'api', format: (k) => `${scheme} ${k}` }, pet);
        expectStatus(res, '2xx', `${op.name} with "${scheme} <API_KEY>" (schemes are case-insensitive, RFC 9110 §11.1)`);
      });
    }
  });
}

test('AUTH-07 the key with its case changed is refused with 401', async ({ api, notCertified }) => {
  const probe = await api.listInventory('api', { evidence: false });
  expectStatus(probe, 200, 'the valid key first');
  let swappable = true;
  const res = await api.listInventory({
    key: 'api',
    format: (k) => {
      const swapped = swapCase(k);
      if (swapped === undefined) swappable = false;
      return `Bearer ${swapped ?? k}`;
    },
  });
  if (!swappable) {
    notCertified('API_KEY has no letters: the case-sensitivity of the token cannot be observed with it');
  }
  expectStatus(res, 401, 'Bearer <API_KEY with letter case swapped> (tokens are case-sensitive)');
});

test('AUTH-08 an unknown key is challenged with error="invalid_token"', async ({ api, warn }) => {
  const res = await api.listInventory({ authorization: `Bearer ${api.unknownKey}` });
  // Should-level: only ever a warning (AUTH-03 and AUTH-06 judge the status and the challenge).
  if (res.status !== 401) {
    warn(`AUTH-08: an unknown key answered ${res.status}, not 401; the challenge was not judged`);
    return;
  }
  const challenge = bearerChallenge(res.header('www-authenticate'));
  if (challenge?.params.error !== 'invalid_token') {
    warn(
      `AUTH-08: the Bearer challenge for an unknown key should carry error="invalid_token" (RFC 6750 §3.1), observed ${JSON.stringify(res.header('www-authenticate') ?? null)}`,
    );
  }
});

test('AUTH-12 updates refused for authentication leave the stock unchanged', async ({ api, stock, notCertified }) => {
  const pet = await stock.claim();
  const sent = pet.quantity + 7;
  const changed: string[] = [];
  for (const bad of BAD_CREDENTIALS) {
    const send = () => api.updateInventory(pet.id, { quantity: sent }, { credential: bad.credential(api) });
    const res = await send();
    const seen = await countAfterRefused(stock, pet, [sent], send);
    if (seen.notCertified) notCertified(`${bad.name}: ${seen.notCertified}`);
    if (seen.origin === 'original') continue;
    changed.push(
      `${bad.name} (${res.status}): quantity ${pet.quantity} became ${seen.origin === 'missing' ? 'missing' : countText(seen.observed)}`,
    );
    await stock.restore();
  }
  expectNoDeviation(changed, `refused updates leave quantity ${pet.quantity}`, `pet ${pet.id}`);
});
