import { describe, expect, it } from 'vitest';

import {
  TypoMatcher, boundedDamerau, charCount, damerauLevenshtein, isNumeric, typoBudget,
} from '../../src/engine/tokenizer/index.js';

describe('typoBudget', () => {
  it('uses the default 5 / 9 character thresholds', () => {
    expect(typoBudget('abcd')).toBe(0);
    expect(typoBudget('abcde')).toBe(1);
    expect(typoBudget('abcdefgh')).toBe(1);
    expect(typoBudget('abcdefghi')).toBe(2);
  });

  it('counts characters, not bytes or UTF-16 units', () => {
    expect(typoBudget('éééé')).toBe(0);
    expect(typoBudget('😀😀😀😀')).toBe(0);
    expect(charCount('a😀b')).toBe(3);
  });

  it('accepts custom thresholds', () => {
    expect(typoBudget('abc', { oneTypo: 2, twoTypos: 3 })).toBe(2);
    expect(typoBudget('abcdefghij', { oneTypo: 20, twoTypos: 30 })).toBe(0);
  });
});

describe('isNumeric', () => {
  it('recognizes digit-only words', () => {
    expect(isNumeric('2024')).toBe(true);
    expect(isNumeric('١٢٣')).toBe(true);
    expect(isNumeric('12a')).toBe(false);
    expect(isNumeric('3.14')).toBe(false);
    expect(isNumeric('')).toBe(false);
  });
});

describe('damerauLevenshtein', () => {
  it('counts substitutions, insertions and deletions', () => {
    expect(damerauLevenshtein('kitten', 'sitting')).toBe(3);
    expect(damerauLevenshtein('', 'abc')).toBe(3);
    expect(damerauLevenshtein('same', 'same')).toBe(0);
  });

  it('counts an adjacent transposition as one edit', () => {
    expect(damerauLevenshtein('ab', 'ba')).toBe(1);
    expect(damerauLevenshtein('hello', 'hlelo')).toBe(1);
    // Optimal string alignment: a transposed pair is not edited again.
    expect(damerauLevenshtein('ca', 'abc')).toBe(3);
  });

  it('agrees with the bounded matcher on random strings', () => {
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const word = (n: number) => Array.from({ length: n }, () => 'abc😀'[Math.floor(rand() * 4)]).join('');
    for (let k = 0; k < 3000; k++) {
      const a = word(Math.floor(rand() * 8));
      const b = word(Math.floor(rand() * 10));
      const max = 1 + (k % 2);
      const d = damerauLevenshtein(a, b);
      expect(boundedDamerau(a, b, max)).toBe(d <= max ? d : -1);
      const cps = [...b];
      let best = Infinity;
      for (let i = 0; i <= cps.length; i++) best = Math.min(best, damerauLevenshtein(a, cps.slice(0, i).join('')));
      expect(boundedDamerau(a, b, max, true)).toBe(best <= max ? best : -1);
    }
  });
});

describe('TypoMatcher', () => {
  it('matches exactly with a zero budget', () => {
    const m = new TypoMatcher('star', 0);
    expect(m.match('star')).toBe(0);
    expect(m.match('stars')).toBe(-1);
    expect(m.match('stor')).toBe(-1);
  });

  it('accepts one substitution, insertion, deletion or transposition', () => {
    const m = new TypoMatcher('hello', 1);
    expect(m.match('hello')).toBe(0);
    expect(m.match('hallo')).toBe(1);
    expect(m.match('helloo')).toBe(1);
    expect(m.match('helo')).toBe(1);
    expect(m.match('hlelo')).toBe(1);
    expect(m.match('hlleo')).toBe(-1);
    expect(m.match('halloo')).toBe(-1);
  });

  it('accepts two typos with a two-typo budget', () => {
    const m = new TypoMatcher('hamburger', 2);
    expect(m.match('hamborgar')).toBe(2);
    expect(m.match('hambrugre')).toBe(2);
    expect(m.match('hamburgers')).toBe(1);
    expect(m.match('hxmbxrgxr')).toBe(-1);
  });

  it('matches prefixes of dictionary words in prefix mode', () => {
    expect(new TypoMatcher('hel', 0, { prefix: true }).match('hello')).toBe(0);
    expect(new TypoMatcher('hel', 0, { prefix: true }).match('help')).toBe(0);
    expect(new TypoMatcher('hel', 0, { prefix: true }).match('hxl')).toBe(-1);
    const m = new TypoMatcher('choclate', 1, { prefix: true });
    expect(m.match('chocolates')).toBe(1);
    expect(m.match('choclates')).toBe(0);
    expect(m.match('choclatier')).toBe(1);
    expect(m.match('chocolate')).toBe(1);
    expect(m.match('chalet')).toBe(-1);
    expect(new TypoMatcher('hello', 1).match('hellos')).toBe(1);
    expect(new TypoMatcher('hello', 1).match('helloworld')).toBe(-1);
    expect(new TypoMatcher('hello', 1, { prefix: true }).match('helloworld')).toBe(0);
    expect(new TypoMatcher('wrold', 1, { prefix: true }).match('worldwide')).toBe(1);
  });

  it('applies the first-letter rule', () => {
    // With a one-typo budget the first letter cannot change.
    expect(new TypoMatcher('mello', 1).match('hello')).toBe(-1);
    expect(new TypoMatcher('ehllo', 1).match('hello')).toBe(-1);
    // With two typos it may, within distance 1, and then costs 2.
    const m = new TypoMatcher('hamburger', 2);
    expect(m.match('gamburger')).toBe(2);
    expect(m.match('ahmburger')).toBe(2);
    expect(m.match('gamburgar')).toBe(-1);
    expect(m.match('amburger')).toBe(2);
    expect(new TypoMatcher('hamburger', 2, { prefix: true }).match('gamburgers')).toBe(2);
  });

  it('works with non-Latin and astral characters', () => {
    expect(new TypoMatcher('москва', 1).match('масква')).toBe(1);
    expect(new TypoMatcher('a😀bcd', 1).match('a😀bce')).toBe(1);
    expect(new TypoMatcher('a😀bcd', 1).match('a😁bce')).toBe(-1);
  });
});
