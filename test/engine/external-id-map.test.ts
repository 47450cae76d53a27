import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { ExternalIdMap } from '../../src/engine/indexes/external-id-map.js';
import { chunkSpaceOf, readExternalIds, writeExternalIds } from '../../src/engine/indexes/external-ids.js';
import { encodeUint } from '../../src/store/keys.js';
import { RocksStore } from '../../src/store/rocks-store.js';
import { tempDir } from '../helpers/node.js';
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

describe('an index map read from its stored chunks', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  async function storeWith(ids: Map<string, number>): Promise<RocksStore> {
    const dir = tempDir('trine-ext-ids-');
    dirs.push(dir);
    const store = await RocksStore.open(dir);
    const wb = store.batch();
    await writeExternalIds(store, wb, 7, ids, () => undefined, true);
    await wb.commit();
    return store;
  }

  it('knows its size at once, builds in slices, and is built at once by whoever needs it first', async () => {
    const ref = new Map(Array.from({ length: 10_000 }, (_, i) => [`doc-${i}`, i] as [string, number]));
    const store = await storeWith(ref);
    try {
      // Needed before any slice ran: built there and then.
      const a = new ExternalIdMap((await readExternalIds(store, 7)).ext);
      expect(a.size).toBe(10_000);
      expect(a.get('doc-9999')).toBe(9999);
      await a.loadInTurns(new Yielder(0));
      expectSame(a, ref);

      // Built in slices while a batch is prepared and published over it.
      const b = new ExternalIdMap((await readExternalIds(store, 7)).ext);
      const loading = b.loadInTurns(new Yielder(0));
      await new Promise((res) => setImmediate(res));
      const changes = new Map<string, number | null>([['doc-1', null], ['new', 10_000]]);
      b.publish(await b.prepare(changes, false, new Yielder(0)));
      await loading;
      const after = new Map(ref);
      after.delete('doc-1');
      after.set('new', 10_000);
      expectSame(b, after);

      // Cleared by a batch before its slices finished: the batch's map replaces it.
      const c = new ExternalIdMap((await readExternalIds(store, 7)).ext);
      const stopped = c.loadInTurns(new Yielder(0));
      c.publish(await c.prepare(new Map([['only', 1]]), true, new Yielder(0)));
      await stopped;
      expectSame(c, new Map([['only', 1]]));
    } finally {
      await store.close();
    }
  });

  it('whose chunk is damaged throws on every use, never answers from part of it', async () => {
    const store = await storeWith(new Map(Array.from({ length: 3000 }, (_, i) => [`id${i}`, i] as [string, number])));
    try {
      // The chunk claims more entries than it holds.
      const key = chunkSpaceOf(7).key(encodeUint(0, 4));
      const chunk = Buffer.from((await store.get(key))!);
      chunk.writeUInt32LE(5000, 0);
      await store.batch().put(key, chunk).commit();
      const damaged = new ExternalIdMap((await readExternalIds(store, 7)).ext);
      await expect(damaged.loadInTurns(new Yielder(0))).rejects.toThrow(RangeError);
      expect(() => damaged.get('id1')).toThrow(RangeError);
      expect(() => damaged.has('id2')).toThrow(RangeError);
    } finally {
      await store.close();
    }
  });
});
