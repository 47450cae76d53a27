// Buckets whose documents all take one tiling are costed as columns (typo constant, attribute
// along the tiling, proximity as a sum of pair columns read for every document); smaller
// buckets are costed document by document. Both give the order the rules define.

import { describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { buildIndex, search } from './search-helpers.js';

/** Document i: "alpha", then i % 5 filler words, then "beta", then 1 to 7 more words (no field equals a query). */
function corpus(n: number): Doc[] {
  return Array.from({ length: n }, (_, i) => ({
    id: i,
    text: ['alpha', ...Array.from({ length: i % 5 }, () => 'filler'), 'beta', ...Array.from({ length: 1 + (i % 7) }, () => 'tail')].join(' '),
  }));
}

/** Proximity cost of document i: the distance minus one, capped at 3. */
const cost = (i: number): number => Math.min(i % 5, 3);

describe('buckets costed as columns', () => {
  for (const n of [600, 6000]) {
    it(`rank ${n} documents that tie on every rule but proximity by their pair's distance`, async () => {
      const docs = corpus(n);
      const state = await buildIndex(docs);
      // The first three proximity buckets (costs 0, 1, 2) in docid order, across page bounds.
      const expected = docs.map((_, i) => i).filter((i) => cost(i) <= 2).sort((a, b) => cost(a) - cost(b) || a - b);
      for (const [offset, limit] of [[0, 30], [n / 5 - 10, 20], [(2 * n) / 5 - 5, 15], [(3 * n) / 5 - 20, 20]] as const) {
        const r = search(state, 'alpha beta', { offset, limit });
        expect(r.candidates).toBe(n);
        expect(r.hits.map((h) => h.docid)).toEqual(expected.slice(offset, offset + limit));
      }
      // Reversed, every pair costs one more (capped): the order of the buckets stays.
      const rev = search(state, 'beta alpha', { offset: 0, limit: 10 });
      expect(rev.hits.map((h) => h.docid)).toEqual(expected.slice(0, 10));
    });
  }

  for (const n of [600, 6000]) {
    it(`rank ${n} documents whose query words sit further from the start after those where they sit at it`, async () => {
      // Document i: i % 3 leading words, then "alpha beta" (adjacent: proximity ties), then a tail.
      const docs: Doc[] = Array.from({ length: n }, (_, i) => ({
        id: i,
        text: [...Array.from({ length: i % 3 }, () => 'lead'), 'alpha', 'beta', ...Array.from({ length: 1 + (i % 7) }, () => 'tail')].join(' '),
      }));
      const state = await buildIndex(docs);
      const expected = docs.map((_, i) => i).sort((a, b) => (a % 3) - (b % 3) || a - b);
      for (const [offset, limit] of [[0, 25], [Math.floor(n / 3) - 10, 20], [Math.floor((2 * n) / 3) - 10, 20]] as const) {
        const r = search(state, 'alpha beta', { offset, limit });
        expect(r.hits.map((h) => h.docid)).toEqual(expected.slice(offset, offset + limit));
      }
    });
  }

  it('rank documents matched with a typo after the others, the bucket sharing one tiling', async () => {
    // Every fourth document misspells "alpha": the typo rule must tell them apart.
    const docs: Doc[] = Array.from({ length: 4000 }, (_, i) => ({ id: i, text: `${i % 4 === 0 ? 'alpja' : 'alpha'} beta tail` }));
    // Without exactness, which would put them last on its own.
    const state = await buildIndex(docs, { rankingRules: ['words', 'typo', 'proximity', 'attribute'] });
    const expected = docs.map((_, i) => i).sort((a, b) => Number(a % 4 === 0) - Number(b % 4 === 0) || a - b);
    for (const [offset, limit] of [[0, 20], [2990, 20]] as const) {
      expect(search(state, 'alpha beta', { offset, limit }).hits.map((h) => h.docid)).toEqual(expected.slice(offset, offset + limit));
    }
  });
});
