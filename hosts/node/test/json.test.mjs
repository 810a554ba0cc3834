// The JSON the Node host reads and writes is serde_json's, byte for byte.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { compareCodePoints, F64, keepKeyOrder, parse, stringify } from '../src/json.mjs';

test('integers keep their kind and floats print as serde_json prints them', () => {
  const value = parse('{"b":1,"a":[1.0,-0,1e21,1e-7,18446744073709551615,-9223372036854775808,0.1]}');
  assert.equal(stringify(value), '{"a":[1.0,-0.0,1e+21,1e-7,18446744073709551615,-9223372036854775808,0.1],"b":1}');
  assert.ok(value.a[0] instanceof F64);
  assert.equal(typeof value.a[4], 'bigint');
  assert.equal(value.b, 1);
});

test('literals past u64 are scaled once, as serde_json does (not correctly rounded)', () => {
  assert.equal(stringify(parse('123456789012345680000')), '1.2345678901234567e+20');
});

test('keys sort by code point, not by UTF-16 unit', () => {
  assert.equal(compareCodePoints('\u{1F600}', '\uFFFD'), 1);
  assert.equal(stringify(parse('{"\uFFFD":1,"\u{1F600}":2,"a":3}')), '{"a":3,"\uFFFD":1,"\u{1F600}":2}');
});

test('a key named __proto__ is data', () => {
  assert.equal(stringify(parse('{"__proto__":{"x":1}}')), '{"__proto__":{"x":1}}');
});

test('what serde_json refuses is refused', () => {
  for (const text of ['01', '1.', '[1,]', '"\\udc00"', '"\\ud800"', '1e400', '"a\u0001"', '[' .repeat(129) + ']'.repeat(129), '{} x']) {
    assert.throws(() => parse(text), undefined, text);
  }
});

test('at most 127 nested arrays and objects, as serde_json allows', () => {
  assert.equal(stringify(parse(`${'['.repeat(127)}${']'.repeat(127)}`)), `${'['.repeat(127)}${']'.repeat(127)}`);
  assert.throws(() => parse(`${'['.repeat(128)}${']'.repeat(128)}`), /recursion limit exceeded at line 1 column 128/);
});

test('keys given twice keep their last value', () => {
  const value = parse('{"a":1,"b":2,"a":3,"c":{"d":1,"d":2}}');
  assert.equal(stringify(value), '{"a":3,"b":2,"c":{"d":2}}');
});

test('the tool value keeps its documented key order; every other object is sorted', () => {
  const ok = keepKeyOrder({ name: 'a', provider: 'p', resourceBase: { kind: 'url', url: 'u' }, content: 'C' });
  const record = { text: 't', ok };
  assert.equal(
    stringify(record),
    '{"ok":{"name":"a","provider":"p","resourceBase":{"kind":"url","url":"u"},"content":"C"},"text":"t"}',
  );
});
