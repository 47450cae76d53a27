// The words a prefix or a typo derives are read as one union per typo count where their
// lists are short: every rule must see the same matches, costs and positions as from each
// word's own list.

import { describe, expect, it } from 'vitest';
import { buildUnits, type Source, type Unit } from '../../src/engine/search/derivations.js';
import { MatchTable } from '../../src/engine/search/match-table.js';
import { bulkPairCosts, MAX_PAIR_COST } from '../../src/engine/search/pair-proximity.js';
import { parseQuery } from '../../src/engine/search/query-parser.js';
import { searchOnWeights } from '../../src/engine/search/rank-query.js';
import { SearchScratch } from '../../src/engine/search/scratch.js';
import { unionPostings, type Posting } from '../../src/engine/fulltext/postings.js';
import type { IndexState } from '../../src/engine/fulltext/index-state.js';
import { rng } from '../bench/wordnet.js';
import { buildIndex } from './search-helpers.js';

function unitsOf(state: IndexState, q: string): Unit[] {
  const terms = parseQuery(state.tokenizer.tokenize(q), { wordsLimit: 10, prefixAllowed: true }).terms;
  return buildUnits(state, terms, { typoEnabled: true, thresholds: { oneTypo: 5, twoTypos: 9 }, disableOnWords: new Set(), disableOnNumbers: false });
}

/** The unit with each union replaced by its words' own lists, as they were read before. */
function expanded(u: Unit): Unit {
  const sources: Source[] = u.sources.flatMap((s) => s.members
    ? s.members.lists.map((posting, i) => ({ posting, typo: s.typo, exact: false, wordId: s.members!.wordIds[i]! }))
    : [s]);
  return { ...u, sources };
}

function table(state: IndexState, units: Unit[]): MatchTable {
  const weights = searchOnWeights(state, state.settings, null);
  const opts = { weights, rankWeights: null, exactFields: new Uint8Array(weights.length), admitted: null, anchored: false };
  return new MatchTable(state, units, opts, false, new SearchScratch());
}

describe('short lists read as one', () => {
  it('unite entries in document then occurrence order', () => {
    const r = rng(31);
    for (let round = 0; round < 50; round++) {
      const all: [number, number][] = [];
      const lists: Posting[] = Array.from({ length: 1 + Math.floor(r() * 6) }, () => {
        const entries = new Map<number, number[]>();
        for (let k = Math.floor(r() * 30); k > 0; k--) {
          const d = Math.floor(r() * 40);
          const fp = (Math.floor(r() * 3) << 16) | Math.floor(r() * 70000) % 0x10000;
          if (all.some(([x, y]) => x === d && y === fp)) continue;
          all.push([d, fp]);
          (entries.get(d) ?? entries.set(d, []).get(d)!).push(fp);
        }
        const docs: number[] = [];
        const fps: number[] = [];
        for (const d of [...entries.keys()].sort((a, b) => a - b)) for (const fp of entries.get(d)!.sort((a, b) => a - b)) (docs.push(d), fps.push(fp));
        return { docs: Uint32Array.from(docs), fps: Uint32Array.from(fps), ndocs: entries.size };
      });
      all.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      const u = unionPostings(lists);
      expect(Array.from(u.docs)).toEqual(all.map(([d]) => d));
      expect(Array.from(u.fps)).toEqual(all.map(([, fp]) => fp));
      expect(u.ndocs).toBe(new Set(all.map(([d]) => d)).size);
    }
  });

  it('give every rule the matches of each word’s own list', async () => {
    // "the" nearly everywhere and sixty rare words it prefixes; "lantern" and rare words one
    // typo away from it; common filler between them at seeded distances.
    const r = rng(37);
    const rnd = (n: number) => Math.floor(r() * n);
    const letters = 'abcdefghijklmnopqrstuvwxyz';
    const theWords = Array.from({ length: 60 }, (_, i) => `the${letters[i % 26]}${letters[Math.floor(i / 26)]}`);
    const lanterns = Array.from({ length: 12 }, (_, i) => `lantern${letters[i]}`);
    const fill = ['lamp', 'river', 'stone', 'cloud', 'glass', 'wheat', 'amber'];
    const docs = Array.from({ length: 1500 }, (_, i) => {
      const words = Array.from({ length: 15 + rnd(30) }, () => fill[rnd(fill.length)]!);
      const put = (w: string) => words.splice(rnd(words.length + 1), 0, w);
      if (i % 9 !== 0) put('the');
      if (i % 4 === 0) put(theWords[rnd(theWords.length)]!);
      if (i % 5 === 0) put(i % 3 === 0 ? 'lantern' : lanterns[rnd(lanterns.length)]!);
      return { id: i, title: words.slice(0, 3).join(' '), body: words.slice(3).join(' ') };
    });
    const state = await buildIndex(docs, { searchableAttributes: ['title', 'body'] });
    const units = unitsOf(state, 'lantern the');
    const merged = units.slice(0, 2).map((u) => u.sources.find((s) => s.members));
    expect(merged[0]?.typo).toBe(1);
    expect(merged[1]?.typo).toBe(0);
    expect(merged[1]!.members!.wordIds.length).toBeGreaterThan(40);
    const plain = units.map(expanded);
    expect(plain[1]!.sources.length).toBeGreaterThan(units[1]!.sources.length + 40);

    // Aggregates from the whole lists (one table) and from each document's record (another).
    const all = state.docids;
    for (const [a, b] of [[units, plain], [plain, units]] as const) {
      const scanned = table(state, [...a]);
      const read = table(state, [...b]);
      try {
        scanned.ensure(all);
        for (let i = 0; i < all.length; i += 16) read.ensure(all.subarray(i, i + 16));
        const U = scanned.U;
        let matched = 0;
        for (const d of all) {
          for (let u = 0; u < U; u++) expect(read.agg[d * U + u], `doc ${d} unit ${u}`).toBe(scanned.agg[d * U + u]);
          if (scanned.agg[d * U + 1] !== 0) matched++;
        }
        expect(matched).toBeGreaterThan(1000);
      } finally {
        scanned.release();
        read.release();
      }
    }

    // Pair costs over the whole set and over a small bucket.
    const weights = state.rules.weightTable();
    const n = state.capacity + 1;
    for (const bucket of [all, all.filter((_, i) => i % 11 === 0)]) {
      const costs = (l: Unit, r: Unit) => {
        const out = new Uint8Array(n).fill(MAX_PAIR_COST);
        bulkPairCosts(l, r, bucket, out, weights, false);
        return Array.from(bucket, (d) => out[d]);
      };
      const want = costs(plain[0]!, plain[1]!);
      expect(costs(units[0]!, units[1]!)).toEqual(want);
      expect(want.some((c) => c! < MAX_PAIR_COST)).toBe(true);
    }
  });
});
