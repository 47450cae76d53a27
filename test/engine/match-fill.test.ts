// A bucket's per-(document, unit) aggregates come from the documents' records (a few
// documents) or from the query words' posting lists (more): both must give the same values,
// whatever the size of the bucket that picks the way.

import { describe, expect, it } from 'vitest';
import { searchOnWeights } from '../../src/engine/search/rank-query.js';
import { buildUnits } from '../../src/engine/search/derivations.js';
import { MatchTable } from '../../src/engine/search/match-table.js';
import { parseQuery } from '../../src/engine/search/query-parser.js';
import { SearchScratch } from '../../src/engine/search/scratch.js';
import type { IndexState } from '../../src/engine/fulltext/index-state.js';
import { rng } from '../helpers/rng.js';
import { buildIndex } from './search-helpers.js';

const VOCABULARY = ['stone', 'river', 'lamp', 'lamps', 'sun', 'flower', 'sunflower', 'the', 'a', 'of', 'riverbank', 'stones', 'amber', 'cloud', 'glass'];

function tables(state: IndexState, q: string): [MatchTable, MatchTable] {
  const terms = parseQuery(state.tokenizer.tokenize(q), { wordsLimit: 10, prefixAllowed: true }).terms;
  const units = buildUnits(state, terms, { typoEnabled: true, thresholds: { oneTypo: 5, twoTypos: 9 }, disableOnWords: new Set(), disableOnNumbers: false });
  const weights = searchOnWeights(state, state.settings, null);
  const exactFields = new Uint8Array(weights.length);
  const opts = { weights, rankWeights: null, exactFields, admitted: null, anchored: false };
  return [new MatchTable(state, units, opts, false, new SearchScratch()), new MatchTable(state, units, opts, false, new SearchScratch())];
}

describe('match table fills', () => {
  it('gives the same aggregates from the records of a few documents as from the posting lists of many', async () => {
    const r = rng(5);
    const words = (n: number) => Array.from({ length: n }, () => VOCABULARY[Math.floor(r() * VOCABULARY.length)]!).join(' ');
    // Long bodies (every word many times), short titles: field weights and positions differ.
    const docs = Array.from({ length: 900 }, (_, i) => ({ id: i, title: words(1 + Math.floor(r() * 4)), body: words(20 + Math.floor(r() * 120)) }));
    const state = await buildIndex(docs, { searchableAttributes: ['title', 'body'] });
    let compared = 0;
    for (const q of ['stone river', 'rivr stone lamp', 'sun flower', 'the lamp', 'stones of amb', 'sunflower riverbank a', 'glases cloud']) {
      const [byRecord, byPostings] = tables(state, q);
      try {
        const matched = byRecord.docs.slice();
        expect(matched.length, q).toBeGreaterThan(64);
        // Records: a handful of documents at a time. Postings: hundreds at once.
        for (let i = 0; i < matched.length; i += 8) byRecord.ensure(matched.subarray(i, i + 8));
        for (let i = 0; i < matched.length; i += 300) byPostings.ensure(matched.subarray(i, i + 300));
        const U = byRecord.U;
        for (const d of matched) {
          for (let u = 0; u < U; u++) expect(byPostings.agg[d * U + u], `"${q}" doc ${d} unit ${u}`).toBe(byRecord.agg[d * U + u]);
          compared++;
        }
      } finally {
        byRecord.release();
        byPostings.release();
      }
    }
    expect(compared).toBeGreaterThan(2000);
  });
});

describe('a match table given back to its scratch', () => {
  it('leaves nothing behind, whether it held most of the index (cleared whole) or a few documents', async () => {
    const docs = Array.from({ length: 400 }, (_, i) => ({ id: i, title: i % 50 === 0 ? `rare stone ${i}` : `common river ${i % 7 === 0 ? 'stone' : 'lamp'}` }));
    const state = await buildIndex(docs);
    const shared = new SearchScratch();
    const weights = searchOnWeights(state, state.settings, null);
    const opts = { weights, rankWeights: null, exactFields: new Uint8Array(weights.length), admitted: null, anchored: false };
    const table = (q: string, scratch: SearchScratch) => {
      const terms = parseQuery(state.tokenizer.tokenize(q), { wordsLimit: 10, prefixAllowed: true }).terms;
      const units = buildUnits(state, terms, { typoEnabled: true, thresholds: { oneTypo: 5, twoTypos: 9 }, disableOnWords: new Set(), disableOnNumbers: false });
      return new MatchTable(state, units, opts, true, scratch);
    };
    const seen = (t: MatchTable) => [...t.docs].map((d) => [d, t.mask[d], ...Array.from({ length: t.U }, (_, u) => t.agg[d * t.U + u])]);
    // "common" holds 392 of 400 documents (the table is cleared whole), "rare" 8 (cleared one by one).
    for (const q of ['common', 'rare stone', 'common river', 'rare', 'stone lamp']) {
      const a = table(q, shared);
      const got = seen(a);
      a.release();
      const b = table(q, new SearchScratch());
      expect(got, q).toEqual(seen(b));
      b.release();
      // Every slot outside this query's documents is zero in the shared buffers.
      const after = table('rare', shared);
      const docsOf = new Set(after.docs);
      for (let d = 0; d < 401; d++) if (!docsOf.has(d)) expect(after.mask[d], `${q}: mask of ${d}`).toBe(0);
      after.release();
    }
  });
});
