// The map from documents' ids to their internal docids is stored in chunks of docids. After
// every kind of change a restarted node finds each document by its id, replaces rather than
// duplicates it, and stores exactly the chunks the live documents need; an index stored with
// one key per id (earlier versions) is read and converted at open.

import { afterAll, describe, expect, it } from 'vitest';
import { RocksStore } from '../../src/store/rocks-store.js';
import { encodeUint } from '../../src/store/keys.js';
import { CHUNK_DOCIDS, chunkMarkerKey, chunkSpaceOf, legacySpaceOf } from '../../src/engine/indexes/external-ids.js';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { call, write } from '../helpers/vector-api.js';

const dir = tempDir('trine-ext-ids-');
let t: TestNode;

afterAll(async () => {
  await t?.close();
});

async function restart(): Promise<void> {
  await t.close({ keepData: true });
  t = await startTestNode([], dir);
}

/** Ids of every document, through the documents list. */
async function allIds(index: string): Promise<string[]> {
  const r = (await call(t, 'POST', `/indexes/${index}/documents/fetch`, { limit: 100_000, fields: ['id'] })).body as { results: { id: string | number }[] };
  return r.results.map((d) => String(d.id)).sort();
}

async function idOf(index: string, id: string): Promise<number> {
  return (await fetch(`${t.url}/indexes/${index}/documents/${encodeURIComponent(id)}`)).status;
}

/** Docids per stored chunk, straight from the store (the node closed). */
async function storedChunks(): Promise<Map<number, number>> {
  await t.close({ keepData: true });
  const store = await RocksStore.open(dir);
  const out = new Map<number, number>();
  try {
    const space = chunkSpaceOf(0);
    for await (const e of store.scan({ prefix: space.prefix })) out.set(space.strip(e.key).readUInt32BE(0), e.value.readUInt32LE(0));
    expect(await store.get(chunkMarkerKey(0))).not.toBeNull();
  } finally {
    await store.close();
  }
  t = await startTestNode([], dir);
  return out;
}

describe('document ids across restarts', () => {
  it('finds, replaces and deletes documents by id after additions, replacements, deletions and a clear', async () => {
    t = await startTestNode([], dir);
    const n = CHUNK_DOCIDS + 500;
    // Ids of several shapes, in two batches that straddle a chunk boundary.
    const ids = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? String(i) : i % 3 === 1 ? `doc-${i}` : `Id_${i}-x`));
    await write(t, 'POST', '/indexes/items/documents', ids.slice(0, 3000).map((id, i) => ({ id, n: i })));
    await write(t, 'POST', '/indexes/items/documents', ids.slice(3000).map((id, i) => ({ id, n: 3000 + i })));
    // Replace some (same docids), delete some by id and by filter, then add one back.
    await write(t, 'POST', '/indexes/items/documents', ids.slice(10, 20).map((id) => ({ id, n: -1 })));
    await write(t, 'POST', '/indexes/items/documents/delete-batch', ids.slice(100, 200));
    await write(t, 'PATCH', '/indexes/items/settings', { filterableAttributes: ['n'] });
    await write(t, 'POST', '/indexes/items/documents/delete', { filter: `n >= ${CHUNK_DOCIDS} AND n < ${CHUNK_DOCIDS + 100}` });
    await write(t, 'POST', '/indexes/items/documents', [{ id: ids[150], n: 150 }]);
    const expected = ids.filter((_, i) => !(i >= 100 && i < 200 && i !== 150) && !(i >= CHUNK_DOCIDS && i < CHUNK_DOCIDS + 100)).sort();
    expect(await allIds('items')).toEqual(expected);

    await restart();
    expect(await allIds('items')).toEqual(expected);
    expect(await idOf('items', ids[150]!)).toBe(200);
    expect(await idOf('items', ids[120]!)).toBe(404);
    expect(await idOf('items', ids[CHUNK_DOCIDS + 50]!)).toBe(404);
    expect(await idOf('items', ids[n - 1]!)).toBe(200);
    // A replacement after the restart is one, not a second document.
    await write(t, 'POST', '/indexes/items/documents', [{ id: ids[5], n: 5, again: true }, { id: ids[n - 1], n: n - 1, again: true }]);
    expect((await call(t, 'GET', '/indexes/items/stats')).body).toMatchObject({ numberOfDocuments: expected.length });
    expect((await call(t, 'GET', `/indexes/items/documents/${encodeURIComponent(ids[5]!)}`)).body).toMatchObject({ again: true });

    // The chunks hold exactly the live documents (the re-added one under its new docid).
    const chunks = await storedChunks();
    expect([...chunks.values()].reduce((a, b) => a + b, 0)).toBe(expected.length);

    // Deleting every document leaves no chunk; documents added after that are found.
    await write(t, 'DELETE', '/indexes/items/documents', undefined);
    await write(t, 'POST', '/indexes/items/documents', [{ id: 'after-clear', n: 1 }]);
    expect(await storedChunks()).toEqual(new Map([[Math.floor((n + 1) / CHUNK_DOCIDS), 1]]));
    expect(await allIds('items')).toEqual(['after-clear']);
    expect(await idOf('items', ids[0]!)).toBe(404);
  });

  it('reads an index stored with one key per id and converts it at open', async () => {
    await t.close();
    t = await startTestNode([], dir);
    await write(t, 'POST', '/indexes/old/documents', [{ id: 'a', n: 1 }, { id: 'b', n: 2 }, { id: 'c', n: 3 }]);
    await t.close({ keepData: true });
    // Back to the earlier layout: the chunks and their marker replaced by one key per id.
    const store = await RocksStore.open(dir);
    const wb = store.batch();
    wb.delPrefix(chunkSpaceOf(0).prefix);
    wb.del(chunkMarkerKey(0));
    ['a', 'b', 'c'].forEach((id, docid) => wb.put(legacySpaceOf(0).key(id), encodeUint(docid, 4)));
    await wb.commit();
    await store.close();

    t = await startTestNode([], dir);
    expect((await call(t, 'GET', '/indexes/old/documents/b')).body).toMatchObject({ n: 2 });
    await write(t, 'POST', '/indexes/old/documents', [{ id: 'b', n: 20 }, { id: 'd', n: 4 }]);
    expect(await allIds('old')).toEqual(['a', 'b', 'c', 'd']);
    const chunks = await storedChunks();
    expect(chunks).toEqual(new Map([[0, 4]]));
    await t.close({ keepData: true });
    const after = await RocksStore.open(dir);
    let legacy = 0;
    for await (const _ of after.scan({ prefix: legacySpaceOf(0).prefix })) legacy++;
    await after.close();
    expect(legacy).toBe(0);
    t = await startTestNode([], dir);
    expect((await call(t, 'GET', '/indexes/old/documents/b')).body).toMatchObject({ n: 20 });
  });
});
