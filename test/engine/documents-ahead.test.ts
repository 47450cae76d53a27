// New documents are stored ahead of their batch's atomic write (engine/apply/documents-ahead.ts).
// A batch whose atomic write never happens (a crash between the two) must leave nothing that
// reads see, and nothing behind once the index is opened again.

import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { Engine } from '../../src/engine/engine.js';
import { processBatch } from '../../src/engine/apply/apply-batch.js';
import type { BatchTask } from '../../src/engine/apply/types.js';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { IndexHandle } from '../../src/engine/indexes/index-handle.js';
import { RocksStore } from '../../src/store/rocks-store.js';
import { tempDir } from '../helpers/node.js';

const dirs: string[] = [];
const stores: RocksStore[] = [];

afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function open(dir: string): Promise<{ store: RocksStore; engine: Engine }> {
  const store = await RocksStore.open(dir);
  stores.push(store);
  return { store, engine: await Engine.open(store) };
}

function addTask(uid: number, docs: Doc[]): BatchTask {
  return {
    uid,
    type: 'documentAdditionOrUpdate',
    indexUid: 'books',
    params: { op: 'documents', method: 'replace', primaryKey: 'id' },
    details: null,
    documents: docs,
  };
}

const docs = (from: number, n: number): Doc[] => Array.from({ length: n }, (_, i) => ({ id: from + i, title: `book ${from + i} common` }));

/** Processes the batch; commits and publishes it unless `crash`, which stops after `write`. */
async function run(engine: Engine, store: RocksStore, task: BatchTask, crash = false): Promise<void> {
  const processed = await processBatch(engine, [task], 1_700_000_000_000);
  expect(processed.outcomes.get(task.uid)?.status).toBe('succeeded');
  const wb = store.batch();
  await processed.write(wb);
  if (crash) return;
  await wb.commit();
  processed.publish();
}

/** Every document key the index's key space holds, committed or not. */
async function storedDocids(store: RocksStore, indexId: number): Promise<number> {
  let n = 0;
  for await (const _ of store.scan({ prefix: IndexHandle.documentSpaceOf(indexId).prefix, keysOnly: true })) n++;
  return n;
}

describe('documents written ahead of their batch', () => {
  it('are not read before the batch commits, and are removed when a crash left them', async () => {
    const dir = tempDir('trine-docs-ahead-');
    dirs.push(dir);
    let { store, engine } = await open(dir);
    await run(engine, store, addTask(1, docs(0, 3)));
    const id = engine.getIndex('books').meta.id;

    // 3,000 new documents: several writes ahead, then no atomic write.
    await run(engine, store, addTask(2, docs(3, 3000)), true);
    expect(await storedDocids(store, id)).toBe(3003);
    const h = engine.getIndex('books');
    expect((await engine.listDocuments('books', { offset: 0, limit: 100 })).results.map((d) => d['id'])).toEqual([0, 1, 2]);
    const all: number[] = [];
    for await (const [docid] of engine.allDocuments(h)) all.push(docid);
    expect(all).toEqual([0, 1, 2]);
    expect(await engine.getDocument('books', '5')).toBeNull();

    // As after a kill -9: the store as it was, opened again.
    await store.close();
    stores.length = 0;
    ({ store, engine } = await open(dir));
    expect(await storedDocids(store, id)).toBe(3);
    expect(engine.getIndex('books').meta.docCount).toBe(3);

    // The batch again (the task was never reported done): same docids, all of it readable.
    await run(engine, store, addTask(2, docs(3, 3000)));
    expect(await storedDocids(store, id)).toBe(3003);
    expect((await engine.listDocuments('books', { offset: 2995, limit: 100 })).results.map((d) => d['id'])).toEqual([2995, 2996, 2997, 2998, 2999, 3000, 3001, 3002]);
    expect(await engine.getDocument('books', '3002')).toEqual({ id: 3002, title: 'book 3002 common' });
  });

  it('of an index whose creation never committed do not reach the index that takes its id next', async () => {
    const dir = tempDir('trine-docs-ahead-');
    dirs.push(dir);
    let { store, engine } = await open(dir);
    await run(engine, store, addTask(1, docs(0, 2000)), true);
    await store.close();
    stores.length = 0;
    ({ store, engine } = await open(dir));
    expect(engine.indexes.size).toBe(0);

    await run(engine, store, addTask(2, docs(100, 10)));
    const h = engine.getIndex('books');
    expect(await storedDocids(store, h.meta.id)).toBe(10);
    expect((await engine.listDocuments('books', { offset: 0, limit: 100 })).results.map((d) => d['id'])).toEqual(docs(100, 10).map((d) => d['id']));
  });

  it('stay behind the deletion of a batch that clears the index', async () => {
    const dir = tempDir('trine-docs-ahead-');
    dirs.push(dir);
    const { store, engine } = await open(dir);
    await run(engine, store, addTask(1, docs(0, 5)));
    const clearAndAdd: BatchTask[] = [
      { uid: 2, type: 'documentDeletion', indexUid: 'books', params: { op: 'clear' }, details: null },
      addTask(3, docs(50, 1500)),
    ];
    const processed = await processBatch(engine, clearAndAdd, 1_700_000_000_000);
    const wb = store.batch();
    await processed.write(wb);
    await wb.commit();
    processed.publish();
    expect(await storedDocids(store, engine.getIndex('books').meta.id)).toBe(1500);
    expect(engine.getIndex('books').meta.docCount).toBe(1500);
    expect((await engine.listDocuments('books', { offset: 0, limit: 2 })).results.map((d) => d['id'])).toEqual([50, 51]);
  });
});
