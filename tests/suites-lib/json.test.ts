import nock from 'nock';
import { test, expect } from '@playwright/test';
import { parseJson, stringifyJson } from '../../suites/lib/json.ts';

test.afterEach(() => nock.cleanAll());

const BODY =
  '[{"petId":9007199254740993,"quantity":7,"status":"available"},{"petId":9223372036854775807,"quantity":1.5,"status":"sold"},{"petId":1,"quantity":-3,"status":"pending"}]';

test('ids above 2^53 from a real response stay exact; JSON.parse would round them', async ({ request }) => {
  nock('http://json.test').get('/v1/inventory').reply(200, BODY, { 'Content-Type': 'application/json' });
  const text = await (await request.get('http://json.test/v1/inventory')).text();
  const items = parseJson(text) as Array<{ petId: unknown; quantity: unknown }>;
  expect(items.map((i) => i.petId)).toEqual([9007199254740993n, 9223372036854775807n, 1]);
  expect(items.map((i) => i.quantity)).toEqual([7, 1.5, -3]);
  expect(String(JSON.parse(text)[0].petId)).toBe('9007199254740992');
  expect(stringifyJson(items)).toBe(BODY);
});

test('a rounded id and an id beyond int64 are visible as such', () => {
  expect(parseJson('{"petId":9223372036854776000}')).toEqual({ petId: 9223372036854776000n });
  expect((parseJson('{"petId":9223372036854776000}') as { petId: bigint }).petId > 2n ** 63n - 1n).toBe(true);
});

for (const bad of ['', 'not json', '{"a":1', '<html></html>', '[1,]']) {
  test(`invalid JSON ${JSON.stringify(bad)} throws a SyntaxError`, () => {
    expect(() => parseJson(bad)).toThrow(SyntaxError);
  });
}
