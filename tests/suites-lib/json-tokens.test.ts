import nock from 'nock';
import { test, expect } from '@playwright/test';
import { rawIntegerTokens } from '../../suites/lib/json-tokens.ts';

test.afterEach(() => nock.cleanAll());

test('raw petId tokens as the server wrote them, from a real body', async ({ request }) => {
  nock('http://tok.test')
    .get('/v1/inventory')
    .reply(200, '[{"petId": 9007199254740993,"quantity":1},{"petId":1e3},{"petId" : 4.0},{"petId":"7"},{"petId":null},{"petId":-12}]');
  const text = await (await request.get('http://tok.test/v1/inventory')).text();
  expect(rawIntegerTokens(text, 'petId')).toEqual(['9007199254740993', '1e3', '4.0', undefined, undefined, '-12']);
  expect(rawIntegerTokens(text, 'quantity')).toEqual(['1']);
  expect(rawIntegerTokens('[]', 'petId')).toEqual([]);
});

test('field names are matched literally (regex characters escaped)', () => {
  expect(rawIntegerTokens('{"a.b":1,"axb":2}', 'a.b')).toEqual(['1']);
});
