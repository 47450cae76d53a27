// A batch that changes thousands of a field's numbers publishes a map built beside the live
// one; a small batch sets them in place. Filters must answer the same either way, and after
// a reopen from the store.

import { afterAll, describe, expect, it } from 'vitest';
import { FacetFixture } from './facet-fixture.js';
import { rng } from '../helpers/rng.js';

let fx: FacetFixture | null = null;
afterAll(async () => fx?.close());

describe('facet numbers after a large batch', () => {
  it('filter as the documents say, batch after batch and after a reopen', async () => {
    fx = await FacetFixture.open({ filterableAttributes: ['price'] });
    const r = rng(41);
    const price = () => Math.round(r() * 2_000_000) / 100;
    const brute = (lo: number, hi: number) => [...fx!.docs].filter(([, d]) => (d['price'] as number) >= lo && (d['price'] as number) < hi).map(([k]) => k).sort((a, b) => a - b);
    const check = (label: string) => {
      for (let k = 0; k < 25; k++) {
        const lo = Math.floor(r() * 20_000);
        const hi = lo + Math.floor(r() * 3000);
        expect(fx!.filter(`price >= ${lo} AND price < ${hi}`), `${label} ${lo}..${hi}`).toEqual(brute(lo, hi));
      }
      for (const [k, d] of [...fx!.docs].slice(0, 20)) expect(fx!.filter(`price = ${d['price']}`), label).toContain(k);
    };
    // Thousands of new values at once (the swap), then thousands changed and some documents
    // gone (values left without documents), then a handful (set in place).
    await fx.add(Array.from({ length: 6000 }, (_, i) => ({ id: i, price: price() })));
    check('added');
    const changes: Record<number, { id: number; price: number } | null> = {};
    for (let d = 0; d < 6000; d += 1) if (d % 3 !== 0) changes[d] = d % 7 === 0 ? null : { id: d, price: price() };
    await fx.apply(changes);
    check('changed');
    await fx.apply({ 1: { id: 1, price: 5 }, 2: null, 6001: { id: 6001, price: 5 } });
    check('few');
    expect(fx.filter('price = 5')).toEqual([1, 6001]);
    await fx.reopen();
    check('reopened');
  });
});
