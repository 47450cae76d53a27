// The one pass over a JSON text before it is parsed: how deep it nests, and whether a number
// long enough to be an integer past 2^53 stands outside its strings.

import { describe, expect, it } from 'vitest';
import { jsonDepthExceeded, jsonShape } from '../../src/util/json-depth.js';

describe('jsonShape', () => {
  it('spots runs of 16 digits outside strings only', () => {
    expect(jsonShape('[{"id": 9007199254740993}]').longNumbers).toBe(true);
    expect(jsonShape('{"n": -18446744073709551615}').longNumbers).toBe(true);
    expect(jsonShape('{"pi": "3.14159265358979323846", "k": "12345678901234567890"}').longNumbers).toBe(false);
    expect(jsonShape('{"n": 900719925474099, "m": 1.5}').longNumbers).toBe(false);
    // A long fraction is a false alarm, which parsing then clears.
    expect(jsonShape('{"f": 0.12345678901234567}').longNumbers).toBe(true);
  });

  it('reads NDJSON a line at a time: a broken string ends with its line', () => {
    expect(jsonShape('{"a": "unterminated\n{"id": 12345678901234567890}', undefined, true).longNumbers).toBe(true);
  });

  it('still finds where a text nests too deep', () => {
    const deep = '['.repeat(5) + ']'.repeat(5);
    expect(jsonShape(deep, 4).tooDeep).toEqual({ line: 1, column: 5 });
    expect(jsonDepthExceeded(deep, 4)).toEqual({ line: 1, column: 5 });
    expect(jsonShape(deep, 5).tooDeep).toBeNull();
    // Columns count bytes, as the reference's parser does: `é` takes two, `😀` four.
    expect(jsonDepthExceeded('{"é😀": ' + deep + '}', 4)).toEqual({ line: 1, column: 15 });
    expect(jsonDepthExceeded('[1,\n "é", ' + deep + ']', 4)).toEqual({ line: 2, column: 11 });
  });
});
