// JSON as the Rust host reads and writes it (serde_json 1 with default
// features), so that both hosts hand the plugin the same bytes and word the
// same errors:
// - numbers keep their kind: an integer literal is an integer (a JS number
//   when it is a safe integer, a BigInt when it needs 64 bits), anything
//   else is an `F64`, printed as Rust prints an f64 (`1.0`, `1e21`);
// - objects print with their keys sorted by code point (serde_json's map is
//   a BTreeMap), compactly;
// - the parser is strict where serde_json is: no lone surrogates, no control
//   characters in strings, no numbers out of the f64 range, at most 127
//   nested arrays and objects. Its error texts are serde_json's too: the
//   host quotes them when the plugin returns text that is not JSON
//   (docs/spec.md §8.5), a failure both hosts must word alike;
// - a key given twice is its last value, as in a `serde_json::Value`.

import { isDeepStrictEqual } from 'node:util';

/** A JSON number that serde_json holds as an f64 (it had a fraction or an exponent, or did not fit 64 bits). */
export class F64 {
  /** @param {number} value */
  constructor(value) {
    this.value = value;
  }
}

/** An error in JSON text, with serde_json's "at line L column C" suffix. */
export class JsonSyntaxError extends Error {}

const U64_MAX = (1n << 64n) - 1n;
const I64_MIN = -(1n << 63n);
// serde_json counts 128 down and refuses the container that reaches zero.
const MAX_DEPTH = 127;
const SIMPLE_ESCAPES = { __proto__: null, '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Whether `value` is a JSON object (not an array, not a number wrapper). */
export function isObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && !(value instanceof F64);
}

/** The bytes UTF-8 takes for the UTF-16 code unit `code` (a surrogate pair takes four, two each). */
const utf8Bytes = (code) => (code < 0x80 ? 1 : code < 0x800 || (code >= 0xd800 && code <= 0xdfff) ? 2 : 3);

/**
 * Parses JSON text as serde_json does; throws `JsonSyntaxError`.
 *
 * Errors are placed as serde_json places them reading the text's UTF-8
 * bytes: at the column, in bytes, just past the last byte it consumed (for an
 * error it finds on reading a byte) or just past the byte it peeked at (for an
 * error it finds on looking at one: one byte on, even when that byte starts a
 * longer character). A literal's letters, a number's digits and a `\u`
 * escape's four bytes are consumed before the error is found.
 */
export function parse(text) {
  let at = 0;
  // The error at UTF-16 index `position`, `extra` bytes on (a peeked byte, or
  // bytes consumed inside a character); the column is in bytes since the line break.
  const fail = (message, position = at, extra = 0) => {
    let line = 1;
    let column = 0;
    const end = Math.min(position, text.length);
    for (let i = 0; i < end; i++) {
      const code = text.charCodeAt(i);
      if (code === 0x0a) {
        line += 1;
        column = 0;
      } else {
        column += utf8Bytes(code);
      }
    }
    if (position < text.length && extra > 0) {
      // A peeked line break starts the next line, as serde_json counts.
      if (text.charCodeAt(position) === 0x0a) {
        line += 1;
        column = extra - 1;
      } else {
        column += extra;
      }
    }
    throw new JsonSyntaxError(`${message} at line ${line} column ${column}`);
  };
  // serde_json's peek_error: at the byte it looked at, one byte on (at the end: the end).
  const peekFail = (message, position = at) => fail(message, position, 1);
  const skipSpace = () => {
    while (at < text.length) {
      const c = text[at];
      if (c === ' ' || c === '\n' || c === '\r' || c === '\t') at += 1;
      else break;
    }
  };
  const isDigit = (i) => i < text.length && text.charCodeAt(i) >= 0x30 && text.charCodeAt(i) <= 0x39;
  // serde_json eats the first letter, then reads the rest one byte at a time.
  const literal = (word, value) => {
    for (let k = 1; k < word.length; k++) {
      if (at + k >= text.length) fail('EOF while parsing a value', text.length);
      if (text[at + k] !== word[k]) peekFail('expected ident', at + k);
    }
    at += word.length;
    return value;
  };
  const string = () => {
    at += 1; // the opening quote
    let out = '';
    let start = at;
    for (;;) {
      if (at >= text.length) fail('EOF while parsing a string');
      const code = text.charCodeAt(at);
      if (code === 0x22) {
        out += text.slice(start, at);
        at += 1;
        return out;
      }
      if (code < 0x20) peekFail('control character (\\u0000-\\u001F) found while parsing a string');
      if (code >= 0xd800 && code <= 0xdfff) {
        // The text came from UTF-8, so a surrogate here is half of a pair.
        const next = text.charCodeAt(at + 1);
        if (code > 0xdbff || !(next >= 0xdc00 && next <= 0xdfff)) peekFail('invalid unicode code point');
        at += 2;
        continue;
      }
      if (code !== 0x5c) {
        at += 1;
        continue;
      }
      out += text.slice(start, at);
      at += 1; // the backslash
      if (at >= text.length) fail('EOF while parsing a string');
      const escape = text[at];
      const simple = SIMPLE_ESCAPES[escape];
      if (simple !== undefined) {
        out += simple;
        at += 1;
      } else if (escape === 'u') {
        at += 1;
        const unit = hex4();
        if (unit >= 0xdc00 && unit <= 0xdfff) fail('lone leading surrogate in hex escape');
        if (unit >= 0xd800 && unit <= 0xdbff) {
          // serde_json reads the byte that is not `\` (or not `u`) before it fails.
          for (const expected of '\\u') {
            if (at >= text.length) fail('EOF while parsing a string');
            if (text[at] !== expected) peekFail('unexpected end of hex escape');
            at += 1;
          }
          const low = hex4();
          if (!(low >= 0xdc00 && low <= 0xdfff)) fail('lone leading surrogate in hex escape');
          out += String.fromCharCode(unit, low);
        } else {
          out += String.fromCharCode(unit);
        }
      } else {
        // The escape's first byte is read, whatever character it starts.
        peekFail('invalid escape');
      }
      start = at;
    }
  };
  // serde_json takes the next four bytes, and only then looks at them: too
  // few is the end of the text, four that are not hex digits an error after them.
  const hex4 = () => {
    const digits = text.slice(at, at + 4);
    if (/^[0-9a-fA-F]{4}$/.test(digits)) {
      at += 4;
      return parseInt(digits, 16);
    }
    let i = at;
    let bytes = 0;
    while (i < text.length && bytes + utf8Bytes(text.charCodeAt(i)) <= 4) bytes += utf8Bytes(text.charCodeAt(i++));
    if (i >= text.length && bytes < 4) fail('EOF while parsing a string', text.length);
    return fail('invalid escape', i, 4 - bytes);
  };
  // serde_json's parse_integer, parse_decimal and parse_exponent: where each
  // error is found; the value is then computed from the digits by `serdeNumber`.
  const number = () => {
    const begin = at;
    const minus = text[at] === '-' ? '-' : '';
    if (minus) at += 1;
    if (at >= text.length) fail('EOF while parsing a value', text.length);
    if (!isDigit(at)) peekFail('invalid number'); // the byte is read
    const integerStart = at;
    if (text[at] === '0') {
      at += 1;
      if (isDigit(at)) peekFail('invalid number');
    } else {
      while (isDigit(at)) at += 1;
    }
    const integer = text.slice(integerStart, at);
    let fraction;
    if (text[at] === '.') {
      at += 1;
      const fractionStart = at;
      while (isDigit(at)) at += 1;
      if (at === fractionStart) peekFail(at < text.length ? 'invalid number' : 'EOF while parsing a value');
      fraction = text.slice(fractionStart, at);
    }
    let exponentSign;
    let exponentDigits;
    if (text[at] === 'e' || text[at] === 'E') {
      at += 1;
      exponentSign = text[at] === '+' || text[at] === '-' ? text[at] : '';
      if (exponentSign) at += 1;
      if (at >= text.length) fail('EOF while parsing a value', text.length);
      if (!isDigit(at)) peekFail('invalid number'); // the byte is read
      const exponentStart = at;
      // Past i32, serde_json stops at the digit that overflows: out of range
      // there when the exponent would grow a significand that is not zero.
      let value = 0;
      for (; isDigit(at); at += 1) {
        const digit = text.charCodeAt(at) - 48;
        if (at > exponentStart && overflowsI32(value, digit)) {
          if (exponentSign !== '-' && /[1-9]/.test(text.slice(begin, exponentStart))) {
            fail('number out of range', at + 1);
          }
          while (isDigit(at)) at += 1;
          break;
        }
        value = value * 10 + digit;
      }
      exponentDigits = text.slice(exponentStart, at);
    }
    const parsed = serdeNumber([undefined, minus, integer, fraction, exponentSign, exponentDigits]);
    if (parsed === null) fail('number out of range');
    return parsed;
  };
  const value = (depth) => {
    skipSpace();
    if (at >= text.length) fail('EOF while parsing a value');
    const c = text[at];
    if (c === '{' || c === '[') {
      if (depth >= MAX_DEPTH) peekFail('recursion limit exceeded');
      return c === '{' ? object(depth + 1) : array(depth + 1);
    }
    if (c === '"') return string();
    if (c === 't') return literal('true', true);
    if (c === 'f') return literal('false', false);
    if (c === 'n') return literal('null', null);
    if (c === '-' || (c >= '0' && c <= '9')) return number();
    return peekFail('expected value');
  };
  // serde_json's SeqAccess and MapAccess: each says which end of the text it met.
  const array = (depth) => {
    at += 1;
    const items = [];
    skipSpace();
    if (at >= text.length) fail('EOF while parsing a list');
    if (text[at] === ']') {
      at += 1;
      return items;
    }
    for (;;) {
      items.push(value(depth));
      skipSpace();
      if (text[at] === ',') {
        at += 1;
        skipSpace();
        if (text[at] === ']') peekFail('trailing comma');
        continue;
      }
      if (text[at] === ']') {
        at += 1;
        return items;
      }
      peekFail(at >= text.length ? 'EOF while parsing a list' : 'expected `,` or `]`');
    }
  };
  const object = (depth) => {
    at += 1;
    // A null prototype: a key such as `__proto__` is data, as in serde_json.
    const fields = Object.create(null);
    skipSpace();
    if (text[at] === '}') {
      at += 1;
      return fields;
    }
    let first = true;
    for (;;) {
      skipSpace();
      if (text[at] !== '"') {
        if (at < text.length) peekFail('key must be a string');
        fail(first ? 'EOF while parsing an object' : 'EOF while parsing a value');
      }
      first = false;
      const key = string();
      skipSpace();
      if (text[at] !== ':') peekFail(at >= text.length ? 'EOF while parsing an object' : 'expected `:`');
      at += 1;
      fields[key] = value(depth);
      skipSpace();
      if (text[at] === ',') {
        at += 1;
        skipSpace();
        if (text[at] === '}') peekFail('trailing comma');
        continue;
      }
      if (text[at] === '}') {
        at += 1;
        return fields;
      }
      peekFail(at >= text.length ? 'EOF while parsing an object' : 'expected `,` or `}`');
    }
  };
  const result = value(0);
  skipSpace();
  if (at < text.length) peekFail('trailing characters');
  return result;
}

// Powers of ten as f64 literals, 1e0 ..= 1e308, as serde_json's table.
const POW10 = Array.from({ length: 309 }, (_, n) => Number(`1e${n}`));
const I32_MAX = 2 ** 31 - 1;

/** serde_json's `overflow!(a * 10 + b, max)`. */
function overflows(a, digit, max) {
  return a >= max / 10n && (a > max / 10n || digit > max % 10n);
}

/** serde_json's `overflow!(exp * 10 + digit, i32::MAX)`. */
function overflowsI32(value, digit) {
  const tenth = Math.floor(I32_MAX / 10);
  return value >= tenth && (value > tenth || digit > I32_MAX % 10);
}

/** serde_json's `f64_from_parts` (without `float_roundtrip`): one scaling by a power of ten. */
function f64FromParts(negative, significand, exponent) {
  let f = Number(significand);
  for (;;) {
    const pow = POW10[Math.abs(exponent)];
    if (pow !== undefined) {
      if (exponent >= 0) {
        f *= pow;
        if (!Number.isFinite(f)) return null;
      } else {
        f /= pow;
      }
      break;
    }
    if (f === 0) break;
    if (exponent >= 0) return null;
    f /= 1e308;
    exponent += 308;
  }
  return new F64(negative ? -f : f);
}

/**
 * A number literal as serde_json reads it: an integer that fits u64 (or i64
 * when negative) stays an integer; anything else becomes an f64 computed as
 * serde_json computes it (digits past u64 are dropped, then one scaling by a
 * power of ten), so both hosts see the same value. Null: out of range.
 */
function serdeNumber([, minus, integer, fraction, exponentSign, exponentDigits]) {
  const negative = minus === '-';
  let significand = 0n;
  let exponent = 0;
  let long = false;
  for (const char of integer) {
    const digit = BigInt(char.charCodeAt(0) - 48);
    if (long || overflows(significand, digit, U64_MAX)) {
      long = true;
      exponent += 1;
    } else {
      significand = significand * 10n + digit;
    }
  }
  if (fraction === undefined && exponentDigits === undefined) {
    if (long) return f64FromParts(negative, significand, exponent);
    if (!negative) return significand <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(significand) : significand;
    const value = -significand;
    // `-0` and values below i64 become f64, as in serde_json.
    if (value === 0n || value < I64_MIN) return new F64(-Number(significand));
    return value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value;
  }
  if (fraction !== undefined) {
    for (const char of fraction) {
      const digit = BigInt(char.charCodeAt(0) - 48);
      if (overflows(significand, digit, U64_MAX)) break;
      significand = significand * 10n + digit;
      exponent -= 1;
    }
  }
  if (exponentDigits !== undefined) {
    let value = 0;
    for (const char of exponentDigits) {
      const digit = char.charCodeAt(0) - 48;
      if (overflowsI32(value, digit)) {
        // An exponent past i32: zero, or out of range when it grows a non-zero value.
        if (significand !== 0n && exponentSign !== '-') return null;
        return new F64(negative ? -0 : 0);
      }
      value = value * 10 + digit;
    }
    const combined = exponentSign === '-' ? exponent - value : exponent + value;
    exponent = Math.max(-(2 ** 31), Math.min(I32_MAX, combined));
  }
  return f64FromParts(negative, significand, exponent);
}

/** Compares strings by Unicode code point, as Rust orders `String`s. */
export function compareCodePoints(a, b) {
  const length = Math.min(a.length, b.length);
  for (let i = 0; i < length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // UTF-16 order differs from code point order only when one side is a
    // surrogate (a code point above U+FFFF) and the other is at or above U+E000.
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys && (xs ? y >= 0xe000 : x >= 0xe000)) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** An f64 as serde_json writes it: shortest digits, `.0` on integral values, `e+N`/`e-N` outside 1e-5..1e16. */
export function formatF64(x) {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, exponentText] = Math.abs(x).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const length = digits.length;
  const kk = Number(exponentText) + 1; // 10^(kk-1) <= |x| < 10^kk
  let body;
  if (kk >= length && kk <= 16) body = digits + '0'.repeat(kk - length) + '.0';
  else if (kk > 0 && kk <= 16) body = `${digits.slice(0, kk)}.${digits.slice(kk)}`;
  else if (kk > -5 && kk <= 0) body = `0.${'0'.repeat(-kk)}${digits}`;
  else {
    const exponent = kk - 1 < 0 ? `e${kk - 1}` : `e+${kk - 1}`;
    body = length === 1 ? digits + exponent : `${digits[0]}.${digits.slice(1)}${exponent}`;
  }
  return sign + body;
}

function number(value) {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof F64) return formatF64(value.value);
  return Number.isInteger(value) ? String(value) : formatF64(value);
}

// Objects printed with their keys in insertion order, not sorted: the
// `skill` tool's value, which both hosts print in its documented order
// (`{name, provider, resourceBase?, content}`, docs/spec.md §3.3).
const inOrder = new WeakSet();

/** Marks `value` and every object in it to print its keys in insertion order; returns `value`. */
export function keepKeyOrder(value) {
  if (value !== null && typeof value === 'object' && !(value instanceof F64)) {
    inOrder.add(value);
    for (const item of Object.values(value)) keepKeyOrder(item);
  }
  return value;
}

function keysOf(value) {
  const keys = Object.keys(value).filter((key) => value[key] !== undefined);
  return inOrder.has(value) ? keys : keys.sort(compareCodePoints);
}

/** serde_json's `Value::to_string()`: compact, keys sorted (but see `keepKeyOrder`). */
export function stringify(value) {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'boolean': return value ? 'true' : 'false';
    case 'number':
    case 'bigint': return number(value);
    default:
  }
  if (value instanceof F64) return number(value);
  if (Array.isArray(value)) return `[${value.map(stringify).join(',')}]`;
  const keys = keysOf(value);
  return `{${keys.map((key) => `${JSON.stringify(key)}:${stringify(value[key])}`).join(',')}}`;
}

/**
 * Whether two plain values (what jco lifts and JSON parses: objects, arrays,
 * strings, numbers, BigInts, booleans, null, undefined) are equal, key sets
 * included; object key order does not count. Node's own deep equality.
 */
export const sameValue = isDeepStrictEqual;
