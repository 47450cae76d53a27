import { describe, expect, it } from 'vitest';
import { proximityRule } from '../../src/engine/ranking/proximity.js';
import { KEPT_PAIR_COSTS, type KeptPairCostTable } from '../../src/engine/search/pair-proximity.js';
import { PendingTable } from '../../src/engine/search/pending-entries.js';
import { PENDING, type RankingRule } from '../../src/engine/ranking/rule.js';
import { globalScore, mergeRank } from '../../src/engine/ranking/rank.js';
import { rng } from '../bench/wordnet.js';
import { buildIndex, ids, search } from './search-helpers.js';

describe('words', () => {
  const docs = [
    { id: 'a', t: 'black cat' },
    { id: 'b', t: 'black dog cat' },
    { id: 'c', t: 'black' },
    { id: 'd', t: 'cat' },
  ];
  it('ranks documents with more query terms first, dropping terms from the end (last)', async () => {
    const s = await buildIndex(docs);
    expect(ids(s, docs, 'black cat')).toEqual(['a', 'b', 'c']);
  });
  it('keeps only full matches with `all`', async () => {
    const s = await buildIndex(docs);
    expect(ids(s, docs, 'black cat', { matchingStrategy: 'all' })).toEqual(['a', 'b']);
  });
  it('drops the most frequent term first with `frequency`', async () => {
    const d2 = [...docs, { id: 'e', t: 'black' }, { id: 'f', t: 'black bird' }];
    const s = await buildIndex(d2);
    // "black" is the most frequent: it goes first, so documents with only "cat" stay.
    expect(ids(s, d2, 'black cat', { matchingStrategy: 'frequency' })).toEqual(['a', 'b', 'd']);
  });
});

describe('typo', () => {
  it('puts exact matches before one typo and one typo before two', async () => {
    const docs = [{ id: 1, t: 'mountains' }, { id: 2, t: 'mountainz' }, { id: 3, t: 'mountain' }, { id: 4, t: 'mountainxx' }];
    const s = await buildIndex(docs);
    expect(ids(s, docs, 'mountains ')).toEqual([1, 2, 3, 4]);
    const r = search(s, 'mountains ');
    expect(r.hits.map((h) => h.details['typo']!['typoCount'])).toEqual([0, 1, 1, 2]);
  });
});

describe('proximity', () => {
  it('ranks closer terms first, and a pair in query order before the reverse', async () => {
    const docs = [
      { id: 'far', t: 'quick one two three four brown' },
      { id: 'near', t: 'quick brown' },
      { id: 'gap', t: 'quick red brown' },
      { id: 'reverse', t: 'brown quick' },
    ];
    const s = await buildIndex(docs);
    expect(ids(s, docs, 'quick brown ')).toEqual(['near', 'gap', 'reverse', 'far']);
    const scores = search(s, 'quick brown ').hits.map((h) => h.details['proximity']!['score']);
    expect(scores[0]).toBe(1);
    expect(scores[3]).toBeLessThan(scores[1] as number);
  });

  it('ranks a large bucket the same when it reads the pairs in stages as when it costs every document', async () => {
    // 3,000 documents holding "in", "or" and a word starting with "th" at seeded distances:
    // the bucket is large enough for the staged reading, and deep pages reach its pending part.
    const r = rng(5);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'cloud', 'glass', 'wheat', 'amber', 'coral'];
    const ths = ['the', 'then', 'there', 'their', 'thorn', 'thistle', 'thaw'];
    const docs = Array.from({ length: 3000 }, (_, i) => {
      const words = Array.from({ length: 30 + rnd(20) }, () => fill[rnd(fill.length)]!);
      const at = rnd(words.length - 20);
      const or = at + 1 + rnd(12);
      words[at] = 'in';
      words[or] = 'or';
      words[or + 1 + rnd(6)] = ths[rnd(ths.length)]!;
      return { id: i, t: words.join(' '), g: i % 40 };
    });
    const s = await buildIndex(docs, { filterableAttributes: ['g'] });
    const staged = proximityRule.partialCosts!;
    const rule = proximityRule as { partialCosts?: RankingRule['partialCosts'] };
    let pending = 0;
    let expanded = 0;
    rule.partialCosts = (ctx, docs, need) => {
      const out = staged(ctx, docs, need);
      if (out?.costs.includes(PENDING)) {
        pending++;
        return { costs: out.costs, rest: (p) => (expanded++, out.rest(p)) };
      }
      return out;
    };
    // Pages within the cheapest documents, past them, and with distinct values (the duplicates
    // dropped leave the page to be filled from the pending documents).
    const pages = [[0, 10, null], [0, 1, null], [40, 20, null], [700, 30, null], [2900, 100, null], [0, 10, 'g'], [20, 15, 'g']] as const;
    const ranked = ([offset, limit, distinct]: (typeof pages)[number]) =>
      search(s, 'in or th', { offset, limit, distinct, scores: false }).hits.map((h) => h.docid);
    const withStages = pages.map(ranked);
    expect(pending).toBeGreaterThan(0);
    expect(expanded).toBeGreaterThan(0);
    delete rule.partialCosts;
    try {
      expect(pages.map(ranked)).toEqual(withStages);
    } finally {
      rule.partialCosts = staged;
    }
    expect(withStages[0]).toHaveLength(10);
    expect(withStages[4]!.length).toBeGreaterThan(0);
    expect(withStages[6]).toHaveLength(15);
  });

  it('ranks the same with the word-pair (and word-prefix) costs a state keeps as when it joins each bucket\'s entries', async () => {
    // "in" and "or" in every document, at seeded distances: their pair costs are kept by the
    // first query and read back by the next ones; a second state with no room left for kept
    // costs joins the entries every time.
    const r = rng(11);
    const rnd = (n: number) => Math.floor(r() * n);
    const fill = ['lamp', 'river', 'stone', 'cloud', 'glass', 'wheat', 'amber', 'coral'];
    const docs = Array.from({ length: 2600 }, (_, i) => {
      const words = Array.from({ length: 20 + rnd(20) }, () => fill[rnd(fill.length)]!);
      const at = rnd(words.length - 8);
      words[at] = i % 3 === 0 ? 'or' : 'in';
      words[at + 1 + rnd(5)] = i % 3 === 0 ? 'in' : 'or';
      if (i % 5 === 0) words[rnd(words.length)] = 'lamps';
      return { id: i, t: words.join(' ') };
    });
    const kept = await buildIndex(docs);
    const joined = await buildIndex(docs);
    joined.memo.set(KEPT_PAIR_COSTS, new PendingTable(0));
    const pages = [[0, 10], [0, 1], [300, 20], [2500, 100]] as const;
    // A short last word reads its indexed prefix list ("l" holds lamp and lamps), kept too.
    const queries = ['in or', 'or in', 'in or lamp', 'lamp in or ', 'in l', 'or i', 'lamp in o'];
    const ranked = (s: typeof kept) => queries.flatMap((q) => pages.map(([offset, limit]) => search(s, q, { offset, limit }).hits.map((h) => [h.docid, h.score])));
    const first = ranked(kept);
    const keys = (s: typeof kept) => [...(s.memo.get(KEPT_PAIR_COSTS) as KeptPairCostTable).entries.keys()];
    expect(keys(kept).length).toBeGreaterThan(0);
    expect(keys(kept).some((k) => /^\d+:p\d+:/.test(k))).toBe(true);
    expect(keys(joined)).toEqual([]);
    expect(ranked(kept)).toEqual(first);
    expect(ranked(joined)).toEqual(first);
    expect(first[0]).toHaveLength(10);
  });
});

describe('attribute', () => {
  const docs = [
    { id: 1, title: 'nothing', overview: 'dragon' },
    { id: 2, title: 'a dragon story', overview: 'nothing' },
    { id: 3, title: 'dragon', overview: 'nothing' },
  ];
  it('follows searchableAttributes order, then the word position', async () => {
    const s = await buildIndex(docs, { searchableAttributes: ['title', 'overview'] });
    expect(ids(s, docs, 'dragon ')).toEqual([3, 2, 1]);
    const d = search(s, 'dragon ').hits[2]!.details['attribute']!;
    expect(d['attributeRankingOrderScore']).toBe(0.5);
    expect(d).toHaveProperty('queryWordDistanceScore');
  });
  it('does not discriminate attributes with the wildcard', async () => {
    const s = await buildIndex(docs);
    // Only word positions count: docs 1 and 3 have the word first.
    expect(ids(s, docs, 'dragon ')).toEqual([1, 3, 2]);
  });
});

describe('exactness', () => {
  it('puts an exact attribute before one that starts with the query, before the rest', async () => {
    const docs = [
      { id: 'contains', t: 'the black hole' },
      { id: 'starts', t: 'black hole sun' },
      { id: 'exact', t: 'black hole' },
    ];
    const s = await buildIndex(docs, { rankingRules: ['words', 'exactness'] });
    expect(ids(s, docs, 'black hole')).toEqual(['exact', 'starts', 'contains']);
    const types = search(s, 'black hole').hits.map((h) => h.details['exactness']!['matchType']);
    expect(types).toEqual(['exactMatch', 'matchesStart', 'noExactMatch']);
  });
  it('prefers exact words to prefixes', async () => {
    const docs = [{ id: 'prefix', t: 'catalog' }, { id: 'exact', t: 'cat' }];
    const s = await buildIndex(docs, { rankingRules: ['words', 'exactness'] });
    expect(ids(s, docs, 'cat')).toEqual(['exact', 'prefix']);
  });
});

describe('sort rules', () => {
  const docs = [
    { id: 1, t: 'shoe', price: 30 },
    { id: 2, t: 'shoe', price: 10 },
    { id: 3, t: 'shoe', price: 'twenty' },
    { id: 4, t: 'shoe' },
  ];
  it('applies a custom field:asc rule: numbers, then strings, then missing', async () => {
    const s = await buildIndex(docs, { rankingRules: ['words', 'price:asc'] });
    expect(ids(s, docs, 'shoe')).toEqual([2, 1, 3, 4]);
    expect(search(s, 'shoe').hits[0]!.details['price:asc']).toEqual({ order: 1, value: 10 });
  });
  it('applies the sort parameter where `sort` is, and orders a placeholder search', async () => {
    const s = await buildIndex(docs, { sortableAttributes: ['price'] });
    expect(ids(s, docs, null, { sort: [{ field: 'price', ascending: false }] })).toEqual([1, 2, 3, 4]);
    expect(ids(s, docs, 'shoe', { sort: [{ field: 'price', ascending: true }] })).toEqual([2, 1, 3, 4]);
  });
});

describe('scores', () => {
  it('merges ranks lexicographically', () => {
    expect(mergeRank({ rank: 2, max: 3 }, { rank: 1, max: 2 })).toEqual({ rank: 3, max: 6 });
    expect(globalScore([{ rank: 2, max: 2 }, { rank: 2, max: 3 }])).toBeCloseTo(5 / 6);
  });
  it('gives 1.0 to a placeholder search and drops hits under the threshold from results and totals', async () => {
    const docs = [{ id: 1, t: 'mountains' }, { id: 2, t: 'mountainz' }];
    const s = await buildIndex(docs);
    expect(search(s, null).hits.map((h) => h.score)).toEqual([1, 1]);
    const all = search(s, 'mountains ');
    const cut = search(s, 'mountains ', { rankingScoreThreshold: (all.hits[0]!.score + all.hits[1]!.score) / 2 });
    expect(cut.hits.map((h) => h.docid)).toEqual([0]);
    expect(cut.candidates).toBe(1);
  });
  it('stops refining buckets at searchCutoffMs and returns what it has, in docid order', async () => {
    const docs = [{ id: 1, t: 'mountainz' }, { id: 2, t: 'mountains' }];
    const s = await buildIndex(docs, { searchCutoffMs: 0 });
    const r = search(s, 'mountains ');
    expect(r.degraded).toBe(true);
    expect(r.hits.map((h) => h.docid)).toEqual([0, 1]);
    const normal = await buildIndex(docs);
    expect(search(normal, 'mountains ').hits.map((h) => h.docid)).toEqual([1, 0]);
  });

  it('keeps one document per distinct value', async () => {
    const docs = [{ id: 1, t: 'shoe', brand: 'x' }, { id: 2, t: 'shoe', brand: 'x' }, { id: 3, t: 'shoe', brand: 'y' }];
    const s = await buildIndex(docs, { filterableAttributes: ['brand'] });
    expect(ids(s, docs, 'shoe', { distinct: 'brand' })).toEqual([1, 3]);
  });
});

describe('score maxima follow the query paths of the bucket', () => {
  // "sun flower" can be read as two words or as the 2-gram "sunflower" (base cost 2, one
  // typo allowed): 2 + 1 against 1 + 1 for the words (a short word counts one typo for
  // being splittable).
  const docs = [
    { id: 'words', t: 'sun flower field' },
    { id: 'gram', t: 'sunflower field' },
    { id: 'apart', t: 'the sun is a flower' },
  ];
  const details = (s: Awaited<ReturnType<typeof buildIndex>>, q: string, opts = {}) =>
    Object.fromEntries(search(s, q, opts).hits.map((h) => [docs[h.docid]!.id, h.details]));

  it('counts the n-gram path in the typo maximum only when a document of the bucket took it', async () => {
    const s = await buildIndex(docs);
    const both = details(s, 'sun flower');
    expect(both['words']!['typo']).toMatchObject({ typoCount: 0, maxTypoCount: 3 });
    expect(both['gram']!['typo']).toMatchObject({ typoCount: 2, maxTypoCount: 3 });
    // The n-gram's own proximity path: one extra word, nothing else.
    expect(both['gram']!['proximity']).toMatchObject({ score: 0.5 });
    expect(both['apart']!['proximity']).toMatchObject({ score: 0.5 });
    const onlyWords = await buildIndex([docs[0]!, docs[2]!]);
    expect(search(onlyWords, 'sun flower').hits.map((h) => h.details['typo'])).toEqual([
      { order: 1, typoCount: 0, maxTypoCount: 2, score: 1 },
      { order: 1, typoCount: 0, maxTypoCount: 2, score: 1 },
    ]);
  });

  it('counts every path the query allows when no words rule narrowed it (matching strategy all)', async () => {
    const s = await buildIndex([docs[0]!]);
    expect(search(s, 'sun flower', { matchingStrategy: 'all' }).hits[0]!.details['typo']).toEqual({ order: 0, typoCount: 0, maxTypoCount: 3, score: 1 });
  });

  it('allows typos by word length, none for phrases, one for words too short or exempt', async () => {
    const s = await buildIndex([{ id: 1, t: 'abcdefghij abcde abc exempt' }], { typoTolerance: { ...(await buildIndex([])).settings.typoTolerance, disableOnWords: ['exempt'] } });
    const typo = (q: string) => search(s, q).hits[0]!.details['typo']!['maxTypoCount'];
    expect(typo('abcdefghij')).toBe(2);
    expect(typo('abcde')).toBe(1);
    expect(typo('abc')).toBe(1);
    expect(typo('exempt')).toBe(1);
    expect(typo('"abcde abc"')).toBe(0);
  });
});

describe('frequency matching strategy', () => {
  const docs = [
    { id: '1', title: 'Shazam!' },
    { id: '2', title: 'Captain Planet' },
    { id: '3', title: 'Captain Marvel' },
    { id: '4', title: 'a Captain Marvel ersatz' },
    { id: '5', title: "He's not part of the Marvel Cinematic Universe" },
    { id: '6', title: 'a Shazam ersatz, but better than Captain Planet' },
    { id: '7', title: 'Capitain CAAAAAVEEERNE!!!!' },
  ];
  it('drops words no document holds first, then the most frequent ones', async () => {
    const s = await buildIndex(docs);
    expect(ids(s, docs, 'Captain Supercopter Marvel', { matchingStrategy: 'frequency' })).toEqual(['3', '4', '5']);
    expect(ids(s, docs, 'Captain Supercopter Marvel', { matchingStrategy: 'last' })).toEqual(['2', '3', '4', '6', '7']);
    expect(ids(s, docs, 'Captain Supercopter Marvel', { matchingStrategy: 'all' })).toEqual([]);
    expect(ids(s, docs, 'Capitain Marvel', { matchingStrategy: 'frequency' })).toEqual(['3', '4', '5']);
  });
  it('drops equally frequent words together', async () => {
    const d = [
      { id: 'a1', t: 'alpha' }, { id: 'a2', t: 'alpha' }, { id: 'a3', t: 'alpha' },
      { id: 'bg', t: 'beta gamma' }, { id: 'b', t: 'beta' }, { id: 'g', t: 'gamma' },
    ];
    const s = await buildIndex(d);
    // alpha (3 documents) goes first; beta and gamma (2 each) would go together, the last
    // group, which always stays: documents with only one of them never match.
    const r = search(s, 'alpha beta gamma', { matchingStrategy: 'frequency' });
    expect(r.hits.map((h) => [d[h.docid]!.id, h.details['words']!['matchingWords']])).toEqual([['bg', 2]]);
  });
});
