import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Doc } from '../../src/engine/documents/primary-key.js';
import { applyChanges, fieldWordCountIn, fieldWordTable, postingOf, recordOf, type IndexState } from '../../src/engine/fulltext/index-state.js';
import { decodeRecord, encodeRecords, type DocRecord } from '../../src/engine/fulltext/doc-record.js';
import { TrineSearchIndex } from '../../src/engine/fulltext/fulltext-index.js';
import { Yielder } from '../../src/util/yielder.js';
import type { DocChange } from '../../src/engine/structures/search-index.js';
import { defaultSettings } from '../../src/engine/settings/settings.js';
import { KeySpace } from '../../src/store/keys.js';
import { RocksStore } from '../../src/store/rocks-store.js';
import { buildIndex, search } from './search-helpers.js';
import { directSource } from '../../src/engine/vector/embedding-source.js';
import { embedderEnvironment } from '../../src/engine/vector/embedder-environment.js';

const initial: Doc[] = [
  { id: 1, title: 'The quick brown fox', tags: ['animal', 'fast'] },
  { id: 2, title: 'A lazy dog sleeps', nested: { note: 'brown paws' } },
  { id: 3, title: 'Brown bread recipe', year: 1999 },
];

function hitsOf(r: ReturnType<typeof search>): [number, number][] {
  return r.hits.map((h) => [h.docid, Math.round(h.score * 1e9)]);
}

describe('incremental updates', () => {
  it('give the same results as indexing the final documents from scratch', async () => {
    const base = await buildIndex(initial);
    const changes: DocChange[] = [
      { docid: 1, before: initial[1]!, after: { id: 2, title: 'A lazy brown cat' } },
      { docid: 2, before: initial[2]!, after: null },
      { docid: 3, before: null, after: { id: 4, title: 'Brownies and foxes', year: 2024 } },
    ];
    const staged = await applyChanges(base, changes, new Yielder());
    staged.commitTables();
    const final: (Doc | undefined)[] = [initial[0]!, { id: 2, title: 'A lazy brown cat' }, undefined, { id: 4, title: 'Brownies and foxes', year: 2024 }];
    const fresh = await buildIndex(final.filter((d): d is Doc => d !== undefined));
    for (const q of ['brown', 'bro', 'fox', 'lazy cat', '1999', '2024', 'recipe', 'paws']) {
      const a = search(staged.state, q);
      const b = search(fresh, q);
      // Docids differ (the fresh build is dense); compare the documents' ids.
      const idsA = a.hits.map((h) => (final[h.docid] as Doc)['id']);
      const idsB = b.hits.map((h) => (final.filter(Boolean)[h.docid] as Doc)['id']);
      expect(idsA, q).toEqual(idsB);
    }
    expect(search(staged.state, 'recipe').hits).toEqual([]);
    expect(search(staged.state, 'paws').hits).toEqual([]);
  });

  it('merge small batches into the posting lists without rebuilding them', async () => {
    const docs: Doc[] = Array.from({ length: 40 }, (_, i) => ({ id: i, text: `filler word${i} common` }));
    const base = await buildIndex(docs);
    const staged = await applyChanges(base, [
      { docid: 5, before: docs[5]!, after: { id: 5, text: 'replaced unique' } },
      { docid: 40, before: null, after: { id: 40, text: 'brand new common' } },
      { docid: 7, before: docs[7]!, after: null },
    ], new Yielder());
    staged.commitTables();
    const s = staged.state;
    // Lists the batch did not touch stay views over the older segment, shared with the previous state.
    const untouched = s.words.id('word12')!;
    expect(postingOf(s, untouched).docs.buffer).toBe(postingOf(base, untouched).docs.buffer);
    expect(search(s, 'common ').candidates).toBe(39);
    expect(search(s, 'unique ').hits.map((h) => h.docid)).toEqual([5]);
    expect(search(s, 'word5 ').hits.map((h) => h.docid)).not.toContain(5);
    expect(search(s, 'word7 ').hits.map((h) => h.docid)).not.toContain(7);
    expect(search(s, 'brand ').hits.map((h) => h.docid)).toEqual([40]);
    expect(search(base, 'word7 ').hits.map((h) => h.docid)[0]).toBe(7);
  });

  it('read a word across segments the same whether new documents were only added or some replaced', async () => {
    const docs: Doc[] = Array.from({ length: 60 }, (_, i) => ({ id: i, text: `common w${i % 7} tail` }));
    const base = await buildIndex(docs.slice(0, 50));
    // New documents only: the second segment's docids all follow the first's.
    const added = await applyChanges(base, docs.slice(50).map((d, i) => ({ docid: 50 + i, before: null, after: d })), new Yielder());
    added.commitTables();
    expect(added.state.view.segments.length).toBe(2);
    const id = added.state.sorted.idOf('common')!;
    const p = postingOf(added.state, id);
    expect(Array.from(p.docs)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(p.ndocs).toBe(60);
    expect(Array.from(postingOf(added.state, added.state.sorted.idOf('w3')!).docs)).toEqual([3, 10, 17, 24, 31, 38, 45, 52, 59]);
    // A replaced document: its old entries in the first segment are left out.
    const replaced = await applyChanges(added.state, [{ docid: 10, before: docs[10]!, after: { id: 10, text: 'other words' } }], new Yielder());
    replaced.commitTables();
    expect(replaced.state.view.segments.length).toBeGreaterThan(1);
    const q = postingOf(replaced.state, replaced.state.sorted.idOf('common')!);
    expect(Array.from(q.docs)).toEqual(Array.from({ length: 60 }, (_, i) => i).filter((d) => d !== 10));
    expect(q.ndocs).toBe(59);
    expect(search(replaced.state, 'w3').hits.map((h) => h.docid).sort((a, b) => a - b)).toEqual([3, 17, 24, 31, 38, 45, 52, 59]);
  });

  it('merge the four newest segments once they are alike, neither a large batch into small ones nor small ones into a large one', async () => {
    const doc = (i: number): Doc => ({ id: i, text: `common w${i % 7} tail${i}` });
    let state = await buildIndex(Array.from({ length: 40 }, (_, i) => doc(i)));
    let next = 40;
    const add = async (n: number): Promise<number[]> => {
      const staged = await applyChanges(state, Array.from({ length: n }, (_, k) => ({ docid: next + k, before: null, after: doc(next + k) })), new Yielder());
      staged.commitTables();
      state = staged.state;
      next += n;
      return state.view.segments.map((g) => g.docs.length);
    };
    expect(await add(40)).toEqual([40, 40]);
    expect(await add(40)).toEqual([40, 40, 40]);
    expect(await add(40)).toEqual([160]);
    // Single documents wait for segments of their size; a batch over twice their sum is not merged into them.
    expect(await add(1)).toEqual([160, 1]);
    expect(await add(1)).toEqual([160, 1, 1]);
    expect(await add(1)).toEqual([160, 1, 1, 1]);
    expect(await add(100)).toEqual([160, 1, 1, 1, 100]);
    // Then one of its size comes: the newest four are merged, two single documents riding along.
    expect(await add(80)).toEqual([160, 1, 182]);
    // Four newest where one outweighs twice the other three: the large one is not rewritten for them.
    expect(await add(2)).toEqual([160, 1, 182, 2]);
    expect(await add(1)).toEqual([160, 1, 182, 2, 1]);
    const common = postingOf(state, state.sorted.idOf('common')!);
    expect(common.ndocs).toBe(next);
    expect(search(state, `"tail${next - 1}"`).hits.map((h) => h.docid)).toEqual([next - 1]);
  });

  it('carry the word counts per field to the next state, as counting them again would give', async () => {
    const docs: Doc[] = Array.from({ length: 80 }, (_, i) => ({ id: i, title: 'w '.repeat(1 + (i % 5)), body: 'x '.repeat(1 + (i % 9)) }));
    const base = await buildIndex(docs.slice(0, 60));
    const [title, body] = [base.names.id('title')!, base.names.id('body')!];
    const count = (s: IndexState, fid: number, d: number) => fieldWordCountIn(s, fieldWordTable(s, fid), fid, d);
    // Every count read once on the first state, so that the next one carries them.
    for (const fid of [title, body]) for (let d = 0; d < 60; d++) count(base, fid, d);
    const staged = await applyChanges(base, [
      ...docs.slice(60).map((d, i) => ({ docid: 60 + i, before: null, after: d })),
      { docid: 3, before: docs[3]!, after: { id: 3, title: 'one two three four five six seven' } },
      { docid: 4, before: docs[4]!, after: { id: 4, body: 'only a body' } },
      { docid: 9, before: docs[9]!, after: null },
    ], new Yielder());
    staged.commitTables();
    const s = staged.state;
    for (const fid of [title, body]) {
      expect(s.memo.has(`fwc:${fid}`)).toBe(true);
      const carried = Array.from({ length: 80 }, (_, d) => count(s, fid, d));
      s.memo.delete(`fwc:${fid}`);
      expect(carried).toEqual(Array.from({ length: 80 }, (_, d) => count(s, fid, d)));
      // And as the records say.
      const fromRecord = (d: number) => (Array.from(s.view.record(d)?.counts ?? []).find((c) => c >>> 16 === fid) ?? 0) & 0xffff;
      expect(carried).toEqual(Array.from({ length: 80 }, (_, d) => fromRecord(d)));
    }
    expect(count(s, title, 3)).toBe(7);
    expect(count(s, title, 4)).toBe(0);
    expect(count(s, body, 9)).toBe(0);
    expect(count(s, title, 62)).toBe(1 + (62 % 5));
  });

  it('indexes numbers as words and nested fields under dot paths', async () => {
    const s = await buildIndex(initial);
    expect(hitsOf(search(s, '1999 ')).map(([d]) => d)).toEqual([2]);
    expect(hitsOf(search(s, 'paws ')).map(([d]) => d)).toEqual([1]);
    expect(s.names.names).toContain('nested.note');
  });
});

/** Each record decoded back from where `encodeRecords` laid it equals the record it was written from. */
async function expectLaidRecords(recs: DocRecord[]): Promise<Uint8Array> {
  const { recordOffsets, records } = await encodeRecords(recs.length, (i) => recs[i]!, new Yielder(0));
  expect(recordOffsets[0]).toBe(0);
  expect(recordOffsets[recs.length]).toBe(records.length);
  recs.forEach((rec, i) => {
    const back = decodeRecord(records.subarray(recordOffsets[i]!, recordOffsets[i + 1]!));
    expect(Array.from(back.tokens)).toEqual(Array.from(rec.tokens));
    expect(Array.from(back.counts)).toEqual(Array.from(rec.counts));
    expect(back.values).toEqual(rec.values);
  });
  return records;
}

describe('live documents', () => {
  it('are shared with the previous state by a batch that only replaces live ones, and laid out again otherwise', async () => {
    const base = await buildIndex(initial);
    const replace = await applyChanges(base, [{ docid: 0, before: initial[0]!, after: { id: 1, title: 'The quick grey fox' } }], new Yielder());
    replace.commitTables();
    // The same live documents: the table is not copied (a copy per write costs 4 bytes per document).
    expect(replace.state.docids).toBe(base.docids);
    expect(hitsOf(search(replace.state, 'grey')).map(([d]) => d)).toEqual([0]);
    expect(hitsOf(search(replace.state, 'brown')).map(([d]) => d).sort()).toEqual([1, 2]);
    const remove = await applyChanges(replace.state, [{ docid: 1, before: initial[1]!, after: null }], new Yielder());
    remove.commitTables();
    expect([...remove.state.docids]).toEqual([0, 2]);
    expect([...replace.state.docids]).toEqual([0, 1, 2]);
    const add = await applyChanges(remove.state, [{ docid: 3, before: null, after: { id: 9, title: 'grey owl' } }, { docid: 0, before: null, after: { id: 1, title: 'A grey fox' } }], new Yielder());
    add.commitTables();
    expect([...add.state.docids]).toEqual([0, 2, 3]);
    expect(hitsOf(search(add.state, 'grey')).map(([d]) => d).sort()).toEqual([0, 3]);
  });
});

describe('records', () => {
  it('round-trip through their binary form', async () => {
    const s = await buildIndex(initial);
    await expectLaidRecords([...s.docids].map((d) => recordOf(s, d)!));
  });

  it('laid end to end in a segment read back one by one, across pieces too', async () => {
    const docs: Doc[] = Array.from({ length: 700 }, (_, i) => ({ id: i, title: `word${i} é ${'x '.repeat(i % 50)}`, price: i / 3, tag: i % 3 ? 'ünïcode \u{1F600}' : null }));
    const s = await buildIndex(docs, { filterableAttributes: ['price', 'tag'] });
    await expectLaidRecords([...s.docids].map((d) => recordOf(s, d)!));
    // Records written across pieces (32 MiB each) come out whole and in order too.
    const big: Doc[] = Array.from({ length: 3000 }, (_, i) => ({ id: i, title: `t${i}`, blob: `${i}:${'b'.repeat(20_000 + i)}` }));
    const bs = await buildIndex(big, { searchableAttributes: ['title'], filterableAttributes: ['blob'] });
    const records = await expectLaidRecords([...bs.docids].map((d) => recordOf(bs, d)!));
    expect(records.length).toBeGreaterThan(32 << 20);
  });

  it('laid whole from pieces sized for a small batch, records larger than their share included', async () => {
    // One record past the first piece (64 KiB), then records of 5 KB each, more than the
    // 1 KiB per record a piece is sized for: the piece grows, then the next is sized for the rest.
    const one: Doc[] = [{ id: 0, title: 'alone', blob: 'z'.repeat(200_000) }];
    const os = await buildIndex(one, { searchableAttributes: ['title'], filterableAttributes: ['blob'] });
    const alone = await expectLaidRecords([...os.docids].map((d) => recordOf(os, d)!));
    expect(alone.length).toBeGreaterThan(64 << 10);
    const few: Doc[] = Array.from({ length: 40 }, (_, i) => ({ id: i, title: `f${i}`, blob: `${i}:${'c'.repeat(5_000)}` }));
    const fs = await buildIndex(few, { searchableAttributes: ['title'], filterableAttributes: ['blob'] });
    const laid = await expectLaidRecords([...fs.docids].map((d) => recordOf(fs, d)!));
    expect(laid.length).toBeGreaterThan(40 * 5_000);
  });
});

describe('persistence', () => {
  const dirs: string[] = [];
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('reopens an index with the same results, after additions, updates and deletions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'trine-index-'));
    dirs.push(dir);
    const settings = { ...defaultSettings(), sortableAttributes: ['year'] };
    const space = new KeySpace('test').child('s');
    let store = await RocksStore.open(dir);
    const idx = await TrineSearchIndex.open({ store, space, settings, embeddings: directSource, embedderEnv: embedderEnvironment() });
    const apply = async (changes: DocChange[]) => {
      const u = await idx.prepare(changes, settings);
      const wb = store.batch();
      await u.write(wb);
      await wb.commit();
      u.publish();
    };
    await apply(initial.map((d, i) => ({ docid: i, before: null, after: d })));
    await apply([{ docid: 0, before: initial[0]!, after: { id: 1, title: 'The quick red fox', year: 1 } }, { docid: 1, before: initial[1]!, after: null }]);
    const before = ['fox', 'brown', 'red', 'lazy', 'bread'].map((q) => hitsOf(search(idx.state, q)));
    await store.close();
    store = await RocksStore.open(dir);
    const reopened = await TrineSearchIndex.open({ store, space, settings, embeddings: directSource, embedderEnv: embedderEnvironment() });
    const after = ['fox', 'brown', 'red', 'lazy', 'bread'].map((q) => hitsOf(search(reopened.state, q)));
    expect(after).toEqual(before);
    expect(search(reopened.state, null, { sort: [{ field: 'year', ascending: true }] }).hits.map((h) => h.docid)).toEqual([0, 2]);
    await store.close();
  });
});
