// The full-text structures are stored as segments and opened as they are: after every kind
// of change a restarted node answers a seeded set of searches, filters, facets, sorts and
// vector queries exactly as before; a damaged segment is found at open and rebuilt from the
// documents, never served.

import { afterAll, describe, expect, it } from 'vitest';
import { RocksStore } from '../../src/store/rocks-store.js';
import { CompositeIndex } from '../../src/engine/structures/composite-index.js';
import { TEXT_PART, TrineSearchIndex } from '../../src/engine/fulltext/fulltext-index.js';
import { IndexHandle } from '../../src/engine/indexes/index-handle.js';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { call, write } from '../helpers/vector-api.js';
import { rng } from '../bench/wordnet.js';

const dir = tempDir('trine-storage-');
let t: TestNode;

afterAll(async () => {
  await t?.close();
});

const WORDS = ['amber', 'birch', 'cedar', 'delta', 'ember', 'fjord', 'grove', 'heron', 'inlet', 'juniper', 'kestrel', 'larch', 'maple', 'nettle', 'osprey', 'plover'];

function doc(i: number, r: () => number): Record<string, unknown> {
  const text = Array.from({ length: 8 + Math.floor(r() * 12) }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  return {
    id: i,
    title: `${WORDS[i % WORDS.length]} ${i}`,
    text,
    genre: WORDS[Math.floor(r() * 4)],
    year: 1990 + Math.floor(r() * 30),
    _vectors: { manual: [r(), r(), r()] },
  };
}

async function add(index: string, docs: Record<string, unknown>[]): Promise<void> {
  await write(t, 'POST', `/indexes/${index}/documents`, docs);
}

/** The answers of a fixed, seeded set of queries of every kind. */
async function answers(index: string): Promise<unknown[]> {
  const r = rng(42);
  const bodies: Record<string, unknown>[] = [];
  for (let i = 0; i < 12; i++) {
    const w = WORDS[Math.floor(r() * WORDS.length)]!;
    bodies.push({ q: w });
    bodies.push({ q: w.slice(0, 1 + (i % 2)) });
    bodies.push({ q: `${w} ${WORDS[(i * 3) % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]}` });
    bodies.push({ q: w.slice(0, -1) + 'x' });
    bodies.push({ q: w, filter: `year >= ${1990 + i} AND genre != ${WORDS[i % 4]}`, sort: ['year:desc'], facets: ['genre', 'year'] });
    bodies.push({ q: '', sort: ['year:asc'], facets: ['genre'], limit: 20, offset: i });
    bodies.push({ vector: [r(), r(), r()], hybrid: { embedder: 'manual', semanticRatio: 1 }, limit: 5 });
    bodies.push({ q: `"${w} ${WORDS[(i + 1) % WORDS.length]}"`, showRankingScoreDetails: true });
  }
  const out: unknown[] = [];
  for (const b of bodies) {
    const res = await call(t, 'POST', `/indexes/${index}/search`, { ...b, showRankingScore: true });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const { processingTimeMs: _, requestUid: __, ...rest } = res.body;
    out.push(rest);
  }
  return out;
}

async function restart(): Promise<void> {
  await t.close({ keepData: true });
  t = await startTestNode([], dir);
}

function textPart(uid: string): TrineSearchIndex {
  const h = t.node.ctx.engine.getIndex(uid);
  const part = (h.search as CompositeIndex).part(TEXT_PART);
  if (!(part instanceof TrineSearchIndex)) throw new Error('no full-text part');
  return part;
}

async function expectSameAfterRestart(indexes: string[]): Promise<void> {
  const before = await Promise.all(indexes.map((i) => answers(i)));
  await restart();
  for (let k = 0; k < indexes.length; k++) {
    expect(await answers(indexes[k]!)).toEqual(before[k]);
    expect(textPart(indexes[k]!).opened.rebuilt).toBeNull();
  }
}

describe('stored full-text segments', () => {
  it('reopen with identical answers after additions, updates, deletions, a reindexing settings change and a swap', async () => {
    t = await startTestNode([], dir);
    const r = rng(7);
    await write(t, 'PATCH', '/indexes/books/settings', {
      filterableAttributes: ['genre', 'year'],
      sortableAttributes: ['year'],
      embedders: { manual: { source: 'userProvided', dimensions: 3 } },
    });
    // Batches of falling sizes: new segments, and a merge of the four alike (150 to 90).
    for (const [from, n] of [[0, 400], [400, 150], [550, 120], [670, 100], [770, 90], [860, 30], [890, 5]] as const) {
      await add('books', Array.from({ length: n }, (_, k) => doc(from + k, r)));
    }
    expect(textPart('books').state.view.segments.map((s) => s.docs.length)).toEqual([400, 460, 30, 5]);
    await expectSameAfterRestart(['books']);

    // Updates: replacements and partial updates of documents of older segments.
    await add('books', Array.from({ length: 60 }, (_, k) => doc(k * 7, r)));
    await write(t, 'PUT', '/indexes/books/documents', Array.from({ length: 30 }, (_, k) => ({ id: 3 + k * 11, text: 'osprey nettle rewritten' })));
    await expectSameAfterRestart(['books']);

    await write(t, 'POST', '/indexes/books/documents/delete-batch', Array.from({ length: 50 }, (_, k) => 5 + k * 13));
    await write(t, 'POST', '/indexes/books/documents/delete', { filter: 'year = 1995' });
    await expectSameAfterRestart(['books']);

    await write(t, 'PATCH', '/indexes/books/settings', { searchableAttributes: ['text', 'title'] });
    await expectSameAfterRestart(['books']);

    await write(t, 'PATCH', '/indexes/papers/settings', { filterableAttributes: ['genre', 'year'], sortableAttributes: ['year'], embedders: { manual: { source: 'userProvided', dimensions: 3 } } });
    await add('papers', Array.from({ length: 80 }, (_, k) => doc(10_000 + k, r)));
    await write(t, 'POST', '/swap-indexes', [{ indexes: ['books', 'papers'] }]);
    await expectSameAfterRestart(['books', 'papers']);
  });

  it('rebuilds a truncated or corrupted segment from the documents at open, with the same answers', async () => {
    const before = await answers('books');
    const id = t.node.ctx.engine.getIndex('books').meta.id;
    await t.close({ keepData: true });
    const segments = IndexHandle.searchSpaceOf(id).child(TEXT_PART).child('t').child('s');
    for (const damage of ['truncate', 'flip'] as const) {
      const store = await RocksStore.open(dir);
      const parts: { key: Buffer; value: Buffer }[] = [];
      for await (const e of store.scan({ prefix: segments.prefix })) parts.push(e);
      // A torn write loses the tail of the last part; a flipped bit hides in the arrays' bytes.
      const hit = damage === 'truncate' ? parts[parts.length - 1]! : parts.find((p) => p.key.readUInt32BE(p.key.length - 4) === 1)!;
      const value = Buffer.from(hit.value);
      if (damage === 'truncate') await store.batch().put(hit.key, value.subarray(0, value.length >> 1)).commit();
      else {
        value[value.length >> 1] ^= 0x10;
        await store.batch().put(hit.key, value).commit();
      }
      await store.close();
      t = await startTestNode([], dir);
      expect(textPart('books').opened.rebuilt).toMatch(damage === 'truncate' ? /torn or truncated/ : /checksum/);
      expect(await answers('books')).toEqual(before);
      // The rebuilt structures were stored: the next start opens them as they are.
      await restart();
      expect(textPart('books').opened.rebuilt).toBeNull();
      expect(await answers('books')).toEqual(before);
      await t.close({ keepData: true });
    }
    t = await startTestNode([], dir);
  });

  it('removes at open the parts of a segment that no committed batch made live', async () => {
    const before = await answers('books');
    const id = t.node.ctx.engine.getIndex('books').meta.id;
    await t.close({ keepData: true });
    const segments = IndexHandle.searchSpaceOf(id).child(TEXT_PART).child('t').child('s');
    const orphan = (part: number) => Buffer.concat([segments.prefix, Buffer.from([0, 0, 0x27, 0x0f, 0, 0, 0, part])]);
    let store = await RocksStore.open(dir);
    await store.batch().put(orphan(1), Buffer.alloc(64, 7)).put(orphan(2), Buffer.alloc(64, 9)).commit();
    await store.close();
    t = await startTestNode([], dir);
    expect(textPart('books').opened.rebuilt).toBeNull();
    expect(await answers('books')).toEqual(before);
    await t.close({ keepData: true });
    store = await RocksStore.open(dir);
    expect(await store.get(orphan(1))).toBeNull();
    await store.close();
    t = await startTestNode([], dir);
  });
});
