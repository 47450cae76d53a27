// Splitting only the cheapest groups of a bucket off must give the same groups, in the same
// order, as splitting all of them once the rest is asked for.

import { describe, expect, it } from 'vitest';
import { groupByCost } from '../../src/engine/search/bucket-sort.js';
import { SearchScratch } from '../../src/engine/search/scratch.js';
import { rng } from '../helpers/rng.js';

type Plain = { cost: number; docs: number[] }[];

function expand(groups: ReturnType<typeof groupByCost>): Plain {
  const out: Plain = [];
  const all = [...groups];
  for (let k = 0; k < all.length; k++) {
    const g = all[k]!;
    if (g.more) {
      all.push(...g.more());
      continue;
    }
    out.push({ cost: g.cost, docs: [...g.docs] });
  }
  return out;
}

describe('groupByCost', () => {
  it('splits the cheapest groups first and the rest on demand, as one full split would', () => {
    const r = rng(20261129);
    for (let round = 0; round < 300; round++) {
      const n = 1 + Math.floor(r() * 400);
      const spread = 1 + Math.floor(r() * 40);
      const docs = new Uint32Array(n);
      let d = 0;
      for (let i = 0; i < n; i++) docs[i] = d += 1 + Math.floor(r() * 3);
      const costs = Int32Array.from({ length: n }, () => Math.floor(r() * spread) - 5);
      const need = 1 + Math.floor(r() * n * 1.2);
      const scratch = new SearchScratch();
      const full = expand(groupByCost(docs, costs, scratch));
      const lazy = groupByCost(docs, costs, scratch, need);
      // The cheapest groups, before any `more`, already hold what was asked for.
      let before = 0;
      for (const g of lazy) if (!g.more) before += g.docs.length;
      expect(before).toBeGreaterThanOrEqual(Math.min(need, n));
      expect(lazy.filter((g) => g.more).length).toBeLessThanOrEqual(1);
      if (lazy.some((g) => g.more)) expect(lazy[lazy.length - 1]!.more).toBeDefined();
      expect(expand(lazy)).toEqual(full);
    }
  });

  it('splits everything at once when the cheapest groups are the whole bucket', () => {
    const scratch = new SearchScratch();
    const groups = groupByCost(Uint32Array.of(1, 2, 3, 4), Int32Array.of(0, 0, 1, 1), scratch, 4);
    expect(groups.some((g) => g.more)).toBe(false);
    expect(groups.map((g) => [...g.docs])).toEqual([[1, 2], [3, 4]]);
  });
});
