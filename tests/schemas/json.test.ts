import { test, expect } from '../test.ts';
import { parseJson, stringifyJson } from '../../suites/lib/json.ts';

test('integers outside the safe range become bigint, exactly', () => {
  const cases: [string, unknown][] = [
    ['9007199254740993', 9007199254740993n],
    ['-9007199254740993', -9007199254740993n],
    ['9223372036854775807', 2n ** 63n - 1n],
    ['-9223372036854775808', -(2n ** 63n)],
    ['123456789012345678901234567890', 123456789012345678901234567890n],
  ];
  for (const [text, expected] of cases) expect(parseJson(text), text).toBe(expected);
  // The reason for the helper: JSON.parse rounds the same id.
  expect(BigInt(JSON.parse('9007199254740993'))).toBe(9007199254740992n);
});

test('safe integers and floats stay numbers', () => {
  const cases: [string, number][] = [
    ['9007199254740991', 9007199254740991],
    ['-12', -12],
    ['1.5', 1.5],
    ['1e3', 1000],
    ['2.0', 2],
    ['0', 0],
  ];
  for (const [text, expected] of cases) expect(parseJson(text), text).toBe(expected);
});

test('9007199254740993 round-trips exactly through parseJson and stringifyJson', () => {
  for (const text of ['{"petId":9007199254740993}', '[{"petId":9223372036854775807,"quantity":1}]', '-9223372036854775808']) {
    expect(stringifyJson(parseJson(text))).toBe(text);
  }
  expect(stringifyJson({ petId: 9007199254740993n })).toBe('{"petId":9007199254740993}');
});

test('parses like JSON.parse otherwise', () => {
  const texts = [
    '{"a":[1,2,{"b":null}],"c":"\\u00e9\\n","d":true}',
    '"x"',
    ' [ ] ',
    '{"__proto__":{"x":1}}',
    '{"a":1,"a":2}',
    '[1e400, -0.5e-3]',
  ];
  // Each text also with a 16-digit run inside a string, which takes the lossless path.
  for (const text of [...texts, ...texts.map((t) => `[${t}, "1234567890123456"]`)]) {
    expect(parseJson(text), text).toEqual(JSON.parse(text));
  }
  expect(Object.getPrototypeOf(parseJson('{"__proto__":{"x":1}}'))).toBe(Object.prototype);
});

test('invalid JSON throws SyntaxError', () => {
  const texts = ['', '{', '[1,]', "{'a':1}", 'NaN', '01', '{"a":1}x', 'undefined', '\uFEFF{}'];
  for (const text of [...texts, ...texts.map((t) => `[9007199254740993, ${t}]`)]) {
    expect(() => parseJson(text), JSON.stringify(text)).toThrow(SyntaxError);
  }
});

test('stringifyJson writes like JSON.stringify and refuses undefined', () => {
  const value = { a: [1, 'x', null], b: { c: 1.5 } };
  expect(stringifyJson(value)).toBe(JSON.stringify(value));
  expect(stringifyJson(value, 2)).toBe(JSON.stringify(value, null, 2));
  expect(() => stringifyJson(undefined)).toThrow(TypeError);
});
