import { describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { buildSortColumn } from '../../src/engine/fulltext/field-values.js';
import { recordOf } from '../../src/engine/fulltext/index-state.js';
import { rng } from '../helpers/rng.js';
import { buildIndex, search } from './search-helpers.js';

describe('a sort over a large bucket', () => {
  it('costs only the documents that can reach the page, in the order of costing them all', async () => {
    const r = rng(11);
    const docs: Doc[] = Array.from({ length: 9000 }, (_, i) => {
      const d: Doc = { id: i, title: r() < 0.5 ? 'red shoe' : 'blue shoe' };
      const k = r();
      // Ties, clusters of equal prices, strings after numbers, documents without a price.
      if (k < 0.6) d['price'] = Math.floor(r() * 3000) / 10;
      else if (k < 0.75) d['price'] = 42;
      else if (k < 0.85) d['price'] = ['alpha', 'Beta', 'gamma'][Math.floor(r() * 3)]!;
      return d;
    });
    const state = await buildIndex(docs, { sortableAttributes: ['price'] });
    for (const ascending of [true, false]) {
      const col = buildSortColumn(state.capacity, (d) => recordOf(state, d), 'price', ascending);
      const expected = docs.map((_, d) => d).sort((a, b) => col.rank[a]! - col.rank[b]! || a - b);
      for (const [offset, limit] of [[0, 10], [0, 1], [20, 20], [990, 20], [5000, 30], [8990, 20], [0, 1000]] as const) {
        const hits = search(state, null, { sort: [{ field: 'price', ascending }], offset, limit }).hits.map((h) => h.docid);
        expect(hits, `${ascending} ${offset} ${limit}`).toEqual(expected.slice(offset, offset + limit));
      }
      // Behind a words bucket too ("shoe" matches every document alike).
      const worded = search(state, 'shoe', { sort: [{ field: 'price', ascending }], offset: 0, limit: 15 }).hits.map((h) => h.docid);
      expect(worded).toEqual(expected.slice(0, 15));
    }
  });
});
