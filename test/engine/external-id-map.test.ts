import { describe, expect, it } from 'vitest';
import { ExternalIdMap } from '../../src/engine/indexes/external-id-map.js';
import { Yielder } from '../../src/util/yielder.js';
import { rng } from '../helpers/rng.js';

function expectSame(m: ExternalIdMap, ref: Map<string, number>): void {
  expect(m.size).toBe(ref.size);
  expect(new Map(m.entries())).toEqual(ref);
  expect([...m.keys()].sort()).toEqual([...ref.keys()].sort());
  expect([...m.values()].sort((a, b) => a - b)).toEqual([...ref.values()].sort((a, b) => a - b));
  for (const id of ['id0', 'id5', 'id77', 'nope']) {
    expect(m.get(id)).toBe(ref.get(id));
    expect(m.has(id)).toBe(ref.has(id));
  }
}

describe('the external id map', () => {
  it('reads as a plain map after each published batch, while its changes are folded in and after', async () => {
    const r = rng(5);
    const ref = new Map<string, number>();
    const m = new ExternalIdMap();
    let next = 0;
    for (let batch = 0; batch < 60; batch++) {
      const cleared = r() < 0.05;
      const changes = new Map<string, number | null>();
      const size = Math.floor(r() * 6000);
      for (let i = 0; i < size; i++) {
        const id = `id${Math.floor(r() * 20_000)}`;
        const x = r();
        // Additions, replacements (same docid), removals, and an id removed then added again.
        changes.set(id, x < 0.6 ? (ref.get(id) ?? next++) : x < 0.9 ? null : next++);
      }
      const layer = await m.prepare(changes, cleared, new Yielder(0));
      if (cleared) ref.clear();
      for (const [id, docid] of changes) {
        if (docid === null) ref.delete(id);
        else ref.set(id, docid);
      }
      m.publish(layer);
      // At once: the changes are read from the layer.
      expectSame(m, ref);
      if (r() < 0.5) {
        // Part way through folding, then after.
        await new Promise((res) => setImmediate(res));
        expectSame(m, ref);
        for (let k = 0; k < 20; k++) await new Promise((res) => setImmediate(res));
        expectSame(m, ref);
      }
    }
  });
});
