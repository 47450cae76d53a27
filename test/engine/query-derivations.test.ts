import { describe, expect, it } from 'vitest';
import { SortedWords } from '../../src/engine/fulltext/word-table.js';
import { parseQuery } from '../../src/engine/search/query-parser.js';
import { typoDerivations } from '../../src/engine/search/typo-search.js';
import { getDefaultTokenizer, TypoMatcher } from '../../src/engine/tokenizer/index.js';
import { buildIndex, search } from './search-helpers.js';

function dict(words: string[]): SortedWords {
  return SortedWords.build({ words });
}

function derive(words: string[], q: string, budget: number, prefix = false): { one: string[]; two: string[] } {
  const d = dict(words);
  const r = typoDerivations(d, q, budget, prefix, () => true);
  return { one: r.one.map((i) => d.words[i]!), two: r.two.map((i) => d.words[i]!) };
}

describe('typo derivations', () => {
  const words = ['house', 'horse', 'hose', 'mouse', 'houses', 'hosue', 'ouse', 'houseboat', 'hhouse', 'douse'];

  it('finds one-typo derivations (substitution, insertion, deletion, transposition) with the same first letter', () => {
    expect(derive(words, 'house', 1)).toEqual({ one: ['hhouse', 'horse', 'hose', 'hosue', 'houses'], two: [] });
  });

  it('never changes the first letter with one typo; with two it costs two and needs distance one', () => {
    expect(derive(words, 'house', 1).one).not.toContain('mouse');
    const two = derive(words, 'house', 2);
    expect(two.two).toEqual(expect.arrayContaining(['mouse', 'douse', 'ouse']));
    expect(two.one).not.toContain('mouse');
  });

  it('matches prefixes of longer words in prefix mode and skips the exact prefix ones', () => {
    const r = derive(['housebound', 'horseback', 'hotel', 'housing'], 'housb', 1, true);
    expect(r.one).toEqual(['housebound', 'housing']);
    expect(derive(['housebound', 'house'], 'house', 1, true).one).toEqual([]);
  });

  it('keeps at most 150 one-typo derivations, in dictionary order', () => {
    const many = Array.from({ length: 300 }, (_, i) => `ab${String.fromCharCode(97 + (i % 26))}${i}`).concat(['abc']);
    const r = typoDerivations(dict(many), 'abc', 1, true, () => true);
    expect(r.one.length).toBeLessThanOrEqual(150);
  });

  it('agrees with a word-by-word matcher on random dictionaries, in both modes', () => {
    let seed = 7;
    const rand = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
    const word = () => Array.from({ length: 2 + Math.floor(rand() * 8) }, () => 'abcde'[Math.floor(rand() * 5)]).join('');
    const words = [...new Set(Array.from({ length: 3000 }, word))];
    const d = dict(words);
    for (let n = 0; n < 60; n++) {
      const q = word();
      for (const budget of [1, 2]) {
        for (const prefix of [false, true]) {
          const m = new TypoMatcher(q, budget, { prefix });
          const expect1: string[] = [];
          const expect2: string[] = [];
          for (const w of d.words) {
            const t = m.match(w);
            if (t === 1) expect1.push(w);
            if (t === 2) expect2.push(w);
          }
          const r = typoDerivations(d, q, budget, prefix, () => true);
          expect(r.one.map((i) => d.words[i]), `${q} ${budget} ${prefix}`).toEqual(expect1.slice(0, 150));
          expect(r.two.map((i) => d.words[i]), `${q} ${budget} ${prefix}`).toEqual(expect2.slice(0, 50));
        }
      }
    }
  });

  it('skips words that no document uses any more', () => {
    const d = dict(['house', 'horse']);
    const r = typoDerivations(d, 'house', 1, false, (i) => d.words[i] !== 'horse');
    expect(r.one).toEqual([]);
  });
});

describe('query parsing', () => {
  const t = getDefaultTokenizer();
  const parse = (q: string, prefixAllowed = true) => parseQuery(t.tokenize(q), { wordsLimit: 10, prefixAllowed });

  it('makes only the last word a prefix, unless the query ends with a separator', () => {
    expect(parse('hello wor').terms).toEqual([
      { kind: 'word', lemma: 'hello', position: 0, isPrefix: false },
      { kind: 'word', lemma: 'wor', position: 1, isPrefix: true },
    ]);
    expect(parse('hello wor ').terms[1]).toMatchObject({ isPrefix: false });
    expect(parse('hello wor', false).terms[1]).toMatchObject({ isPrefix: false });
  });

  it('keeps the first ten terms only', () => {
    expect(parse('a b c d e f g h i j k l').terms.map((x) => (x.kind === 'word' ? x.lemma : ''))).toEqual(
      'a b c d e f g h i j'.split(' '),
    );
  });

  it('reads phrases, negated words and negated phrases', () => {
    const p = parse('"new york" -city -"big apple" pizza');
    expect(p.terms[0]).toEqual({ kind: 'phrase', words: ['new', 'york'], start: 0, end: 1 });
    expect(p.negativeWords).toEqual(['city']);
    expect(p.negativePhrases).toEqual([['big', 'apple']]);
    expect(p.terms[1]).toMatchObject({ kind: 'word', lemma: 'pizza', isPrefix: true });
    expect(parse('well-known').negativeWords).toEqual([]);
  });

  it('splits a phrase at a hard separator and adds a position gap', () => {
    const p = parse('"one. two"');
    expect(p.terms.map((x) => x.kind)).toEqual(['phrase', 'phrase']);
    expect(parse('one. two').terms[1]).toMatchObject({ position: 8 });
  });

  it('runs an unclosed quote to the end of the query', () => {
    expect(parse('"a b').terms).toEqual([{ kind: 'phrase', words: ['a', 'b'], start: 0, end: 1 }]);
  });
});

describe('derivations on an index', () => {
  it('applies the typo thresholds: 1 typo from 5 characters, 2 from 9', async () => {
    const docs = [{ id: 1, t: 'cat kitty' }, { id: 2, t: 'kittens' }, { id: 3, t: 'wonderfully' }];
    const s = await buildIndex(docs);
    expect(search(s, 'cst ').hits).toHaveLength(0);
    expect(search(s, 'kitten ').hits.map((h) => docs[h.docid]!.id)).toEqual([2]);
    expect(search(s, 'kiten ').hits.map((h) => docs[h.docid]!.id)).toEqual([]);
    expect(search(s, 'wondrefuly ').hits.map((h) => docs[h.docid]!.id)).toEqual([3]);
    const custom = await buildIndex(docs, { typoTolerance: { enabled: true, minWordSizeForTypos: { oneTypo: 3, twoTypos: 4 }, disableOnWords: [], disableOnAttributes: [], disableOnNumbers: false } });
    expect(search(custom, 'cst ').hits.map((h) => docs[h.docid]!.id)).toEqual([1]);
  });

  it('matches split and concatenated words', async () => {
    const docs = [{ id: 1, t: 'a sun flower field' }, { id: 2, t: 'the sunflower seeds' }];
    const s = await buildIndex(docs);
    expect(search(s, 'sunflower ').hits.map((h) => docs[h.docid]!.id).sort()).toEqual([1, 2]);
    expect(search(s, 'sun flower ').hits.map((h) => docs[h.docid]!.id).sort()).toEqual([1, 2]);
  });

  it('expands synonyms, including multi-word ones', async () => {
    const docs = [{ id: 1, t: 'New York pizza' }, { id: 2, t: 'NYC bagels' }];
    const s = await buildIndex(docs, { synonyms: { nyc: ['new york'], 'new york': ['nyc'] } });
    expect(search(s, 'nyc ').hits.map((h) => docs[h.docid]!.id).sort()).toEqual([1, 2]);
    expect(search(s, 'new york ').hits.map((h) => docs[h.docid]!.id).sort()).toEqual([1, 2]);
  });
});
