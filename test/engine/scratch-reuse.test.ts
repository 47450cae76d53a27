// One SearchScratch serves every search of an engine: the tables a search borrows from it
// (pair costs, the level cache, decoded tokens, the match table's arrays) come back dirty and
// must rank the next search exactly as fresh ones would.

import { describe, expect, it } from 'vitest';
import { executeSearch, type SearchOutcome, type SearchRequest } from '../../src/engine/search/rank-query.js';
import { SearchScratch } from '../../src/engine/search/scratch.js';
import type { IndexState } from '../../src/engine/fulltext/index-state.js';
import { rng } from '../helpers/rng.js';
import { buildIndex } from './search-helpers.js';

const COMMON = ['the', 'of', 'a', 'to', 'in', 'or'];
const RARE = ['stone', 'river', 'lamp', 'amber', 'cloud', 'glass', 'sunflower', 'harbour', 'violin', 'copper'];

function request(q: string): SearchRequest {
  return {
    q, offset: 0, limit: 20, evaluate: 0, matchingStrategy: 'last', attributesToSearchOn: null, sort: [], distinct: null,
    rankingScoreThreshold: null, locales: null, allowed: null, exhaustiveCount: false, scores: true,
  };
}

function outcome(o: SearchOutcome): unknown {
  return { hits: o.hits.map((h) => [h.docid, h.score, h.details]), candidates: o.candidates, universe: [...o.universe] };
}

function run(state: IndexState, q: string, scratch: SearchScratch): unknown {
  return outcome(executeSearch(state, state.settings, request(q), scratch));
}

describe('a search scratch used by search after search', () => {
  it('ranks every search as a fresh scratch does', async () => {
    const r = rng(11);
    const pick = (xs: string[]) => xs[Math.floor(r() * xs.length)]!;
    // Common words in most documents (buckets of thousands: pair costs from the lists, kept
    // between searches), rare ones in a few (pair costs of the least-typo derivations).
    const words = (n: number) => Array.from({ length: n }, () => (r() < 0.5 ? pick(COMMON) : pick(RARE))).join(' ');
    const docs = Array.from({ length: 3000 }, (_, i) => ({ id: i, title: words(2 + Math.floor(r() * 3)), body: words(10 + Math.floor(r() * 40)) }));
    const state = await buildIndex(docs, { searchableAttributes: ['title', 'body'] });
    const queries = [
      'the of a', 'stone of the', 'in or the', 'river lamp', 'the amber', 'of a cloud', 'glass to the', 'sunflower in a',
      'a to', 'harbour the violin', 'of the', 'copper or', 'the stone river', 'lamps of', 'to in or', 'a',
    ];
    const shared = new SearchScratch();
    let compared = 0;
    for (const pass of [0, 1]) {
      for (const q of queries) {
        expect(run(state, q, shared), `pass ${pass}: "${q}"`).toEqual(run(state, q, new SearchScratch()));
        compared++;
      }
    }
    expect(compared).toBe(2 * queries.length);
  });
});
