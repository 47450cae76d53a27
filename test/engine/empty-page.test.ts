import { describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { bucketSort } from '../../src/engine/search/bucket-sort.js';
import type { RankingContext, RankingRule } from '../../src/engine/ranking/rule.js';
import { rng } from '../helpers/rng.js';
import { buildIndex, search } from './search-helpers.js';

describe('a search for a page of no hits', () => {
  it('counts the candidates without ordering any of them', () => {
    const refused = (): never => {
      throw new Error('a page of no hits ranked a document');
    };
    const rule: RankingRule = { name: 'refuses', isSort: false, usesMatches: false, costs: refused, ranks: refused, detail: refused };
    const universe = Uint32Array.from([3, 5, 8, 13]);
    const input = { ctx: {} as RankingContext, rules: [rule], universe, distinct: null, threshold: null, deadline: Infinity, evaluate: 0 };
    expect(bucketSort({ ...input, offset: 0, limit: 0 })).toEqual({ hits: [], traces: null, candidates: 4, degraded: false });
    // Anything to rank still ranks: the rule is asked.
    expect(() => bucketSort({ ...input, offset: 0, limit: 1 })).toThrow('ranked a document');
    expect(() => bucketSort({ ...input, offset: 0, limit: 0, evaluate: 2 })).toThrow('ranked a document');
  });

  it('answers the count that a page of hits gives', async () => {
    const r = rng(17);
    const words = ['red', 'blue', 'shoe', 'hat', 'sock', 'reds', 'blues'];
    const docs: Doc[] = Array.from({ length: 600 }, (_, i) => ({
      id: i,
      title: Array.from({ length: 1 + Math.floor(r() * 4) }, () => words[Math.floor(r() * words.length)]).join(' '),
      brand: ['acme', 'bolt', 'zed'][Math.floor(r() * 3)],
    }));
    const state = await buildIndex(docs, { filterableAttributes: ['brand'] });
    for (const q of ['red shoe', 'blu', 'sock hat red', null]) {
      for (const strategy of ['last', 'all'] as const) {
        const page = search(state, q, { matchingStrategy: strategy, limit: 20 });
        const none = search(state, q, { matchingStrategy: strategy, limit: 0 });
        expect(none.hits).toEqual([]);
        expect(none.candidates, `${q} ${strategy}`).toBe(page.candidates);
        expect(none.candidates).toBeGreaterThan(0);
      }
      // With distinct, only the documents ranked are told apart: none here (as when one was ranked).
      const none = search(state, q, { distinct: 'brand', limit: 0 });
      expect(none.candidates).toBe(none.universe.length);
    }
  });
});
