// JSON with integers beyond a double's exact range kept to the digit, as serde_json keeps
// u64 and i64 values; everything else reads and writes as JSON.parse and JSON.stringify do.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { integerValue, mayHoldBigIntegers, parseJson, stringifyJson, stringifyJsonNoting } from '../../src/util/exact-json.js';

const U64_MAX = 18446744073709551615n;
const I64_MIN = -9223372036854775808n;

describe('integerValue', () => {
  it('keeps safe integers as numbers, the u64/i64 range as bigints, and rounds beyond', () => {
    expect(integerValue('9007199254740991')).toBe(9007199254740991);
    expect(integerValue('-9007199254740991')).toBe(-9007199254740991);
    expect(integerValue('9007199254740992')).toBe(9007199254740992n);
    expect(integerValue('18446744073709551615')).toBe(U64_MAX);
    expect(integerValue('-9223372036854775808')).toBe(I64_MIN);
    // serde_json reads what neither u64 nor i64 holds as a double.
    expect(integerValue('18446744073709551616')).toBe(18446744073709551616);
    expect(integerValue('-9223372036854775809')).toBe(-9223372036854775809);
  });
});

describe('mayHoldBigIntegers', () => {
  it('answers false for digit runs that cannot start a number', () => {
    expect(mayHoldBigIntegers('{"pi": "3.14159265358979323846", "code": "AB12345678901234567890"}')).toBe(false);
    expect(mayHoldBigIntegers('{"id": 12345678901234567890}')).toBe(true);
    expect(mayHoldBigIntegers('[-12345678901234567890]')).toBe(true);
    expect(mayHoldBigIntegers('12345678901234567890')).toBe(true);
  });
});

describe('parseJson', () => {
  it('reads big integers as bigints wherever they stand', () => {
    const v = parseJson('[{"id": 18446744073709551615, "n": {"a": [1, -9223372036854775808, 9007199254740993]}}, 12345678901234567890]');
    expect(v).toEqual([{ id: U64_MAX, n: { a: [1, I64_MIN, 9007199254740993n] } }, 12345678901234567890n]);
  });

  it('leaves digits inside strings, keys, floats and exponents alone', () => {
    const text = '{"s": "18446744073709551615", "18446744073709551615": 1, "f": 18446744073709551615.5, "e": 18446744073709551615e0, "q": "a\\"12345678901234567890"}';
    expect(parseJson(text)).toEqual(JSON.parse(text));
  });

  it('tells two ids apart that differ past a double\'s precision', () => {
    const [a, b] = parseJson('[9007199254740993, 9007199254740992]') as bigint[];
    expect(a).not.toBe(b);
    expect(String(a)).toBe('9007199254740993');
  });

  it('reads numbers beyond u64 and below i64 as doubles, as serde_json does', () => {
    expect(parseJson('[18446744073709551616, -9223372036854775809]')).toEqual([18446744073709551616, -9223372036854775809]);
  });

  it('throws JSON.parse\'s own error for a malformed text', () => {
    const bad = '[12345678901234567890, {x: 1}]';
    let expected = '';
    try {
      JSON.parse(bad);
    } catch (e) {
      expected = (e as Error).message;
    }
    expect(() => parseJson(bad)).toThrow(expected);
    // A literal that is not JSON stays malformed.
    expect(() => parseJson('[0012345678901234567890]')).toThrow(SyntaxError);
  });

  it('reads any JSON without big integers exactly as JSON.parse', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        const text = JSON.stringify(v);
        fc.pre(!/\d{16}/.test(text));
        expect(parseJson(text)).toEqual(JSON.parse(text));
      }),
    );
  });
});

describe('stringifyJson', () => {
  it('writes bigints as their digits, numbers in JSON', () => {
    expect(stringifyJson({ id: U64_MAX, a: [I64_MIN, 1, 'x'], s: '18446744073709551615' })).toBe(
      '{"id":18446744073709551615,"a":[-9223372036854775808,1,"x"],"s":"18446744073709551615"}',
    );
  });

  it('writes what JSON.stringify writes when there is no bigint', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        expect(stringifyJson(v)).toBe(JSON.stringify(v));
      }),
    );
  });

  it('reads back what it wrote, big integers included', () => {
    const big = fc.bigInt({ min: I64_MIN, max: U64_MAX }).map((b) => (typeof integerValue(String(b)) === 'bigint' ? b : Number(b)));
    // Doubles past 2^53 are left out: written as integers, they read back as the exact integers they are.
    const double = fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0) && (!Number.isInteger(d) || Number.isSafeInteger(d)));
    const value = fc.letrec((tie) => ({
      leaf: fc.oneof(big, fc.string(), fc.integer(), double, fc.boolean(), fc.constant(null)),
      node: fc.oneof({ depthSize: 'small' }, tie('leaf'), fc.array(tie('node')), fc.dictionary(fc.string(), tie('node'))),
    })).node;
    fc.assert(
      fc.property(value, (v) => {
        expect(parseJson(stringifyJson(v))).toEqual(v);
      }),
    );
    fc.assert(
      fc.property(fc.array(fc.record({ id: big, t: fc.string() })), (docs) => {
        expect(parseJson(stringifyJson(docs))).toEqual(docs);
      }),
    );
  });

  it('says whether the value held a bigint', () => {
    expect(stringifyJsonNoting([{ id: 1 }])).toEqual({ text: '[{"id":1}]', bigIntegers: false });
    expect(stringifyJsonNoting([{ id: U64_MAX }])).toEqual({ text: `[{"id":${U64_MAX}}]`, bigIntegers: true });
  });

  it('still refuses a cycle', () => {
    const o: Record<string, unknown> = { id: 1n << 60n };
    o['self'] = o;
    expect(() => stringifyJson(o)).toThrow(TypeError);
  });
});
