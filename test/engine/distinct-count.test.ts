import { describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { distinctKeys } from '../../src/engine/fulltext/field-values.js';
import { applyChanges, distinctColumn, recordOf, type IndexState } from '../../src/engine/fulltext/index-state.js';
import type { DocChange } from '../../src/engine/structures/search-index.js';
import { firstOfDistinct } from '../../src/engine/search/bucket-sort.js';
import { Yielder } from '../../src/util/yielder.js';
import { buildIndex, search } from './search-helpers.js';
import { rng } from '../helpers/rng.js';

const SETTINGS = { filterableAttributes: ['brand'] };

/** The documents kept when distinct runs over `universe` in docid order, one record at a time. */
function bruteCount(state: IndexState, universe: Uint32Array, attr: string): number {
  const seen = new Set<string>();
  let n = 0;
  for (const d of universe) if (firstOfDistinct(seen, distinctKeys(recordOf(state, d), attr))) n++;
  return n;
}

describe('exhaustive distinct counts', () => {
  it('count what distinct keeps over every candidate, in fresh and carried states', async () => {
    const r = rng(5);
    const pick = <T>(xs: T[]): T => xs[Math.floor(r() * xs.length)]!;
    const value = (): unknown =>
      pick<() => unknown>([
        () => pick(['Acme', 'acme', 'ACMÉ', 'Bolt', ' bolt ', '', '   ', 'Zed']),
        () => Math.floor(r() * 6),
        () => -0,
        () => r() < 0.5,
        () => null,
        () => [pick(['Acme', 'Bolt', '']), Math.floor(r() * 3)],
        () => ({ sub: pick(['Acme', 'Qux']), n: Math.floor(r() * 3) }),
        () => [],
      ])();
    const doc = (i: number): Doc => {
      const d: Doc = { id: i, title: pick(['red shoe', 'blue shoe', 'red hat', 'green sock']) };
      if (r() < 0.85) d['brand'] = value();
      return d;
    };
    let docs: (Doc | null)[] = Array.from({ length: 300 }, (_, i) => doc(i));
    let state = await buildIndex(docs as Doc[], SETTINGS);
    const check = (s: IndexState) => {
      for (const q of [null, 'shoe', 'red']) {
        const out = search(s, q, { distinct: 'brand', exhaustiveCount: true, limit: 5 });
        expect(out.candidates, String(q)).toBe(bruteCount(s, out.universe, 'brand'));
      }
    };
    check(state);
    expect(distinctColumn(state, 'brand').ids.size).toBeGreaterThan(5);
    // Batches after the column exists carry it: changed, added and deleted documents.
    for (let batch = 0; batch < 4; batch++) {
      const changes: DocChange[] = [];
      const touched = new Set<number>();
      for (let k = 0; k < 40; k++) {
        const d = Math.floor(r() * (docs.length + 10));
        if (touched.has(d)) continue;
        touched.add(d);
        const before = docs[d] ?? null;
        const after = before && r() < 0.3 ? null : doc(d);
        changes.push({ docid: d, before, after });
        docs = [...docs];
        docs[d] = after;
      }
      const staged = await applyChanges(state, changes, new Yielder());
      staged.commitTables();
      const carried = staged.state.memo.has('distinct:brand');
      expect(carried).toBe(true);
      state = staged.state;
      check(state);
    }
  });
});
