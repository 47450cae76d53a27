import { afterAll, describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { facetSortColumn } from '../../src/engine/facets/sort-column.js';
import { bestValue, buildSortColumn, MISSING_RANK, valuesOf, type SortColumn } from '../../src/engine/fulltext/field-values.js';
import { buildFromDocuments, recordOf, type IndexState } from '../../src/engine/fulltext/index-state.js';
import { Yielder } from '../../src/util/yielder.js';
import { FacetFixture } from './facet-fixture.js';
import { rng } from '../helpers/rng.js';

const fixtures: FacetFixture[] = [];
afterAll(async () => {
  for (const f of fixtures) await f.close();
});

const SETTINGS = { sortableAttributes: ['price', 'tag'], filterableAttributes: ['price'] };

async function recordState(fx: FacetFixture): Promise<IndexState> {
  const staged = await buildFromDocuments({ ...fx.settings }, [...fx.docs].sort((a, b) => a[0] - b[0]), new Yielder());
  staged.commitTables();
  return staged.state;
}

/** Rank and shown value of every docid, the way the sort rule reads a column. */
function readColumn(col: SortColumn, state: IndexState, field: string, ascending: boolean, capacity: number): [number, unknown][] {
  const out: [number, unknown][] = [];
  for (let d = 0; d < capacity; d++) {
    const rank = d < col.rank.length ? col.rank[d]! : MISSING_RANK;
    let value = col.valueOf(d);
    if (value === undefined) value = bestValue(valuesOf(recordOf(state, d), field), ascending)?.shown ?? null;
    out.push([rank, value]);
  }
  return out;
}

describe('sort order from the facet postings', () => {
  it('gives every document the rank and value that building it from the records gives', async () => {
    const fx = await FacetFixture.open(SETTINGS);
    fixtures.push(fx);
    const r = rng(17);
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
    const scalar = (): unknown =>
      pick<() => unknown>([
        () => Math.floor(r() * 30) - 5,
        () => Math.round(r() * 1000) / 100,
        () => -0,
        () => pick(['Red', 'red', 'RÉD', 'blue', ' Blue ', 'green', 'é', 'Zebra', 'zèbre', '10', '9', '   ', '', '😀 smile', '\uFFFD']),
        () => r() < 0.5,
        () => null,
      ])();
    const value = (depth: number): unknown => {
      const k = r();
      if (k < 0.55 || depth > 1) return scalar();
      if (k < 0.8) return Array.from({ length: Math.floor(r() * 4) }, () => (r() < 0.2 ? value(depth + 1) : scalar()));
      return { sub: scalar(), deep: { x: scalar() } };
    };
    const doc = (): Doc => {
      const d: Doc = { title: 'x' };
      if (r() < 0.9) d['price'] = value(0);
      if (r() < 0.9) d['tag'] = value(0);
      return d;
    };
    for (let batch = 0; batch < 6; batch++) {
      const changes: Record<number, Doc | null> = {};
      for (let k = 0; k < 400; k++) {
        const docid = Math.floor(r() * 9_000); // across three chunks of 4,096
        changes[docid] = r() < 0.15 && fx.docs.has(docid) ? null : doc();
      }
      await fx.apply(changes);
    }
    const state = await recordState(fx);
    const capacity = Math.max(state.capacity, fx.index.state.capacity());
    let several = 0;
    for (const field of ['price', 'tag']) {
      for (const ascending of [true, false]) {
        const fromFacets = facetSortColumn(fx.index.state, field, ascending);
        expect(fromFacets).not.toBeNull();
        const fromRecords = buildSortColumn(state.capacity, (d) => recordOf(state, d), field, ascending);
        expect(readColumn(fromFacets!, state, field, ascending, capacity)).toEqual(readColumn(fromRecords, state, field, ascending, capacity));
        for (let d = 0; d < capacity; d++) if (fromFacets!.valueOf(d) === undefined) several++;
      }
    }
    // Documents that spelled their best string several ways were met (their record tells the shown one).
    expect(several).toBeGreaterThan(0);
    // The column is kept until the facets change.
    expect(facetSortColumn(fx.index.state, 'price', true)).toBe(facetSortColumn(fx.index.state, 'price', true));
    const before = facetSortColumn(fx.index.state, 'price', true);
    await fx.apply({ 1: { price: -1000 } });
    const after = facetSortColumn(fx.index.state, 'price', true)!;
    expect(after).not.toBe(before);
    expect(after.rank[1]).toBe(0);
    expect(after.valueOf(1)).toBe(-1000);
  });

  it('leaves the order to the records when a string may have been cut to the facet key limit', async () => {
    const fx = await FacetFixture.open(SETTINGS);
    fixtures.push(fx);
    await fx.apply({ 0: { tag: 'a'.repeat(600) + 'b' }, 1: { tag: 'a'.repeat(600) + 'a' }, 2: { tag: 'short', price: 3 } });
    expect(facetSortColumn(fx.index.state, 'tag', true)).toBeNull();
    expect(facetSortColumn(fx.index.state, 'price', true)).not.toBeNull();
  });
});
