// The parser's words for broken JSON, as the reference's (serde_json) words them: what is wrong,
// at which line and column (bytes from the line start).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { endOfValue, jsonSyntaxError, serdeUnexpected } from '../../src/util/json-syntax.js';

describe('jsonSyntaxError', () => {
  it.each([
    ['[{"id": 1}, {id: 2}]', 'key must be a string at line 1 column 14'],
    ['{id: 2}', 'key must be a string at line 1 column 2'],
    ['', 'EOF while parsing a value at line 1 column 0'],
    ['{"a":', 'EOF while parsing a value at line 1 column 5'],
    ['{"a"', 'EOF while parsing an object at line 1 column 4'],
    ['{"a" 1}', 'expected `:` at line 1 column 6'],
    ['{"a":1 "b":2}', 'expected `,` or `}` at line 1 column 8'],
    ['{"a":1,}', 'trailing comma at line 1 column 8'],
    ['[1,]', 'trailing comma at line 1 column 4'],
    ['[1 2]', 'expected `,` or `]` at line 1 column 4'],
    ['[1', 'EOF while parsing a list at line 1 column 2'],
    ['[1,', 'EOF while parsing a value at line 1 column 3'],
    ['[tru]', 'expected ident at line 1 column 5'],
    ['[nul', 'EOF while parsing a value at line 1 column 4'],
    ['[01]', 'invalid number at line 1 column 3'],
    ['[1.]', 'invalid number at line 1 column 4'],
    ['[1e]', 'invalid number at line 1 column 4'],
    ['[-x]', 'invalid number at line 1 column 3'],
    ['[1e999]', 'number out of range at line 1 column 6'],
    ['["a', 'EOF while parsing a string at line 1 column 3'],
    ['["\\x"]', 'invalid escape at line 1 column 4'],
    ['["\\u12G4"]', 'invalid escape at line 1 column 7'],
    ['["\\uDC00"]', 'lone leading surrogate in hex escape at line 1 column 8'],
    ['["a\u0001"]', 'control character (\\u0000-\\u001F) found while parsing a string at line 1 column 4'],
    ['[1] x', 'trailing characters at line 1 column 5'],
    ['@', 'expected value at line 1 column 1'],
    ['{\n  "title": "é",\n  oops\n}', 'key must be a string at line 3 column 3'],
    ['["éé" x]', 'expected `,` or `]` at line 1 column 9'],
    ['['.repeat(128), 'recursion limit exceeded at line 1 column 128'],
  ])('%j → %s', (text, message) => {
    expect(jsonSyntaxError(text)).toBe(message);
  });

  it('finds an error exactly where JSON.parse finds one', () => {
    const broken = fc.tuple(fc.json({ depthSize: 'small' }), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', ':', 'x', '\\', '1', ' ', '\n', '\u0001'), fc.boolean());
    fc.assert(
      fc.property(broken, ([json, at, insert, cut]) => {
        const p = at % (json.length + 1);
        const text = cut ? json.slice(0, p) : json.slice(0, p) + insert + json.slice(p);
        let parsed = true;
        try {
          JSON.parse(text);
        } catch {
          parsed = false;
        }
        const error = jsonSyntaxError(text);
        // JSON.parse reads a number too large for a double as Infinity; the reference refuses it.
        if (parsed && error?.startsWith('number out of range')) return;
        expect(error === null).toBe(parsed);
      }),
      { numRuns: 2000 },
    );
  });
});

describe('type errors', () => {
  it('word values as serde does and find where a value ends', () => {
    expect(['doggo', 1, 1.5, true, null, {}, []].map(serdeUnexpected)).toEqual([
      'string "doggo"', 'integer `1`', 'floating point `1.5`', 'boolean `true`', 'unit value', 'map', 'sequence',
    ]);
    expect(endOfValue('  "doggo"  ')).toBe(9);
    expect(endOfValue('12')).toBe(2);
  });
});
