import { describe, expect, it } from 'vitest';

import {
  MAX_DISTANCE, Tokenizer, getDefaultTokenizer, isSupportedLocale, normalize, normalizeFacet,
  toIso639_1, toIso639_3, SUPPORTED_LOCALES, canonicalLocales,
} from '../../src/engine/tokenizer/index.js';
import type { Token, TokenizeOptions } from '../../src/engine/tokenizer/index.js';

const tk = getDefaultTokenizer();
const wordTokens = (tokens: Token[]) => tokens.filter((t) => t.kind !== 'separator');
const lemmas = (text: string, t: Tokenizer = tk, opts?: TokenizeOptions) =>
  wordTokens(t.tokenize(text, opts)).map((x) => x.lemma);
const positions = (text: string, t: Tokenizer = tk) =>
  wordTokens(t.tokenize(text)).map((x) => [x.lemma, x.position]);

describe('normalization', () => {
  it('lowercases and strips accents', () => {
    expect(lemmas('Ébène Ça')).toEqual(['ebene', 'ca']);
    expect(normalize('Café')).toBe('cafe');
    expect(normalize('NAÏVE')).toBe('naive');
    expect(normalize('Ångström')).toBe('angstrom');
  });

  it('applies the reference character conversions', () => {
    expect(normalize('Œuvre')).toBe('oeuvre');
    expect(normalize('Æsir')).toBe('aesir');
    expect(normalize('Straße')).toBe('straße');
    expect(normalize('Đà Nẵng')).toBe('da nang');
    expect(normalize('ＡＢＣ１２３')).toBe('abc123');
    expect(normalize('ﬁne')).toBe('fine');
  });

  it('handles Greek sigma, Cyrillic case, Hebrew and Arabic marks', () => {
    expect(normalize('ΑΓΑΠΗΤΟΣ')).toBe('αγαπητοσ');
    expect(normalize('Αγαπητός')).toBe('αγαπητοσ');
    expect(normalize('МОСКВА')).toBe('москва');
    expect(normalize('כָּבוֹד')).toBe('כבוד');
    expect(normalize('أَب')).toBe('اب');
  });

  it('keeps marks for scripts that need them', () => {
    // Devanagari vowel signs and viramas are not accents.
    expect(normalize('हिन्दी')).toBe('हिन्दी'.normalize('NFKD'));
  });

  it('recomposes å ä ö for Swedish only', () => {
    expect(normalize('Åsa', { locales: ['swe'] })).toBe('åsa');
    expect(normalize('Åsa')).toBe('asa');
  });

  it('normalizes facet values without stripping accents', () => {
    expect(normalizeFacet('  Café  ')).toBe('cafe\u0301');
    expect(normalizeFacet('ABC')).toBe('abc');
    expect(normalizeFacet('Ｆｏｏ')).toBe('foo');
  });
});

describe('separators and positions', () => {
  it('gives consecutive positions across soft separators', () => {
    expect(positions('hello world-wide_web')).toEqual([['hello', 0], ['world', 1], ['wide', 2], ['web', 3]]);
  });

  it('adds MAX_DISTANCE after a hard separator', () => {
    expect(MAX_DISTANCE).toBe(4);
    expect(positions('hello. world')).toEqual([['hello', 0], ['world', 4]]);
    expect(positions('stop! go; now? yes')).toEqual([['stop', 0], ['go', 4], ['now', 8], ['yes', 12]]);
    expect(positions('a, b')).toEqual([['a', 0], ['b', 4]]);
    expect(positions('wait… what。next')).toEqual([['wait', 0], ['what', 4], ['next', 8]]);
  });

  it('treats newline and bare dot/comma as soft', () => {
    expect(positions('end\nnext')).toEqual([['end', 0], ['next', 1]]);
    expect(positions('end.\nnext')).toEqual([['end', 0], ['next', 1]]);
    expect(positions('a,b')).toEqual([['a', 0], ['b', 1]]);
  });

  it('splits numbers on dots like the reference', () => {
    expect(lemmas('pi is 3.14 in 2024')).toEqual(['pi', 'is', '3', '14', 'in', '2024']);
  });

  it('keeps a hard gap when soft separators follow the hard one', () => {
    expect(positions('a ; , b')).toEqual([['a', 0], ['b', 4]]);
  });

  it('ignores leading separators', () => {
    expect(positions('  ...!! hello world')).toEqual([['hello', 0], ['world', 1]]);
  });

  it('classifies separator tokens as soft or hard', () => {
    const seps = tk.tokenize('a. b-c!').filter((t) => t.kind === 'separator');
    expect(seps.map((s) => [s.original, s.separatorKind])).toEqual([['. ', 'hard'], ['-', 'soft'], ['!', 'hard']]);
  });

  it('does not split on < = > ^ | ~ $', () => {
    expect(lemmas('a=b x<y>z p^q l|r ~t $5')).toEqual(['a=b', 'x<y>z', 'p^q', 'l|r', '~t', '$5']);
  });

  it('splits on apostrophes, quotes, brackets, plus and backtick', () => {
    expect(lemmas("l'école (\"x\") a+b `code`")).toEqual(['l', 'ecole', 'x', 'a', 'b', 'code']);
  });

  it('splits words at script changes', () => {
    expect(lemmas('abc東京def')).toEqual(['abc', '東京', 'def']);
    expect(lemmas('abc123')).toEqual(['abc123']);
  });
});

describe('settings', () => {
  it('nonSeparatorTokens keep words whole', () => {
    const t = new Tokenizer({ nonSeparatorTokens: ['-'] });
    expect(lemmas('e-mail me', t)).toEqual(['e-mail', 'me']);
    expect(lemmas('e-mail me')).toEqual(['e', 'mail', 'me']);
  });

  it('separatorTokens add single and multi-character separators', () => {
    const t = new Tokenizer({ separatorTokens: ['|', '&&', 'ZZ'] });
    expect(lemmas('a|b&&c xZZy', t)).toEqual(['a', 'b', 'c', 'x', 'y']);
    const seps = t.tokenize('a&&b').filter((x) => x.kind === 'separator');
    expect(seps[0]!.separatorKind).toBe('soft');
  });

  it('a custom separator that is a reference hard separator stays hard', () => {
    const t = new Tokenizer({ nonSeparatorTokens: ['!'], separatorTokens: ['¡'] });
    expect(positions('a!b ¡c', t)).toEqual([['a!b', 0], ['c', 4]]);
  });

  it('dictionary entries stay single tokens', () => {
    const t = new Tokenizer({ dictionary: ['J. R. R.', 'C#', 's.n.c.f'] });
    expect(lemmas('J. R. R. Tolkien likes C# and the s.n.c.f', t))
      .toEqual(['j. r. r.', 'tolkien', 'likes', 'c#', 'and', 'the', 's.n.c.f']);
    expect(lemmas('J. R. R. Tolkien')).toEqual(['j', 'r', 'r', 'tolkien']);
    // Dictionary matching is case-sensitive on the original text, like the reference.
    expect(lemmas('c#', t)).toEqual(['c']);
  });

  it('stop words are classified, consume positions and are not indexed', () => {
    const t = new Tokenizer({ stopWords: ['the', 'of'] });
    const toks = wordTokens(t.tokenize('the art of war'));
    expect(toks.map((x) => [x.lemma, x.kind, x.position])).toEqual([
      ['the', 'stopWord', 0], ['art', 'word', 1], ['of', 'stopWord', 2], ['war', 'word', 3],
    ]);
    expect(t.words('the art of war')).toEqual([{ lemma: 'art', position: 1 }, { lemma: 'war', position: 3 }]);
    // Case-sensitive, as in the reference: "The" is not the stop word "the".
    expect(t.words('The art')[0]).toEqual({ lemma: 'the', position: 0 });
  });
});

describe('languages without spaces', () => {
  it('segments Chinese', () => {
    const words = lemmas('我爱北京天安门');
    expect(words.length).toBeGreaterThanOrEqual(3);
    expect(words).toContain('北京');
    expect(words.join('')).toBe('我爱北京天安门');
  });

  it('segments Japanese, with kana detected or the jpn locale', () => {
    const text = '東京都に住んでいます';
    const words = lemmas(text);
    expect(words.length).toBeGreaterThanOrEqual(3);
    expect(words).toContain('東京');
    expect(lemmas('東京大学', tk, { locales: ['jpn'] }).length).toBeGreaterThanOrEqual(1);
  });

  it('segments Thai', () => {
    const words = lemmas('ภาษาไทยง่ายนิดเดียว');
    expect(words.length).toBeGreaterThanOrEqual(3);
    expect(words[0]).toBe('ภาษา');
  });

  it('keeps numbers whole next to ideographs', () => {
    expect(lemmas('東京 2024')).toEqual(['東京', '2024']);
  });
});

describe('offsets', () => {
  it('reports code point and UTF-8 byte offsets', () => {
    const toks = tk.tokenize('café 東京 x😀y');
    const view = toks.map((t) => [t.original, t.charStart, t.charEnd, t.byteStart, t.byteEnd]);
    expect(view).toEqual([
      ['café', 0, 4, 0, 5],
      [' ', 4, 5, 5, 6],
      ['東京', 5, 7, 6, 12],
      [' ', 7, 8, 12, 13],
      ['x😀y', 8, 11, 13, 19],
    ]);
    const text = 'café 東京 x😀y';
    for (const t of toks) {
      expect(Buffer.from(text).subarray(t.byteStart, t.byteEnd).toString()).toBe(t.original);
    }
  });
});

describe('indexing path', () => {
  it('matches tokenize() for regular words', () => {
    const text = 'The Quick brown fox. Jumps over, the lazy dog! Ünïcödé 東京タワー';
    const fromTokens = wordTokens(tk.tokenize(text)).map((t) => ({ lemma: t.lemma, position: t.position }));
    expect(tk.words(text)).toEqual(fromTokens);
  });

  it('drops words longer than 250 bytes but keeps their position', () => {
    const long = 'a'.repeat(251);
    expect(tk.words(`x ${long} y`)).toEqual([{ lemma: 'x', position: 0 }, { lemma: 'y', position: 2 }]);
    expect(tk.words('é'.repeat(125))[0]!.lemma).toBe('e'.repeat(125));
  });

  it('removes control characters', () => {
    expect(tk.words('ab\u0001c')).toEqual([{ lemma: 'abc', position: 0 }]);
    expect(lemmas('a\u0000b')).toEqual(['a', 'b']);
  });
});

describe('locales', () => {
  it('validates 3- and 2-letter codes', () => {
    expect(SUPPORTED_LOCALES).toHaveLength(69);
    expect(isSupportedLocale('jpn')).toBe(true);
    expect(isSupportedLocale('ja')).toBe(true);
    expect(isSupportedLocale('cmn')).toBe(true);
    expect(isSupportedLocale('xx')).toBe(false);
    expect(isSupportedLocale('JPN')).toBe(false);
    expect(toIso639_1('cmn')).toBe('zh');
    expect(toIso639_3('fa')).toBe('pes');
    expect(canonicalLocales(['ja', 'jpn', 'zz'])).toEqual(['jpn']);
    expect(canonicalLocales([])).toBeNull();
  });
});
