import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { searchStateOf } from '../../src/engine/fulltext/fulltext-index.js';
import { KEPT_SCANS, type KeptScanTable } from '../../src/engine/search/match-table.js';

// A one-word query over a long posting list (here a one-letter prefix over 24,000 documents)
// is answered from a scan kept for the index's current state after the first time: the
// answers must be the same as the first, and change as soon as the documents do.

let t: TestNode;
let idx: Index;
const N = 24_000;

beforeAll(async () => {
  t = await startTestNode();
  idx = t.client.index('kept');
  await idx.updateSearchableAttributes(['title', 'body']).waitTask({ timeout: 60_000 });
  const docs = Array.from({ length: N }, (_, i) => ({
    id: i,
    title: i % 7 === 0 ? `xylo ${i}` : `item ${i}`,
    body: i % 3 === 0 ? `the x${i} ranks x` : `plain body xb ${i % 11}`,
  }));
  await idx.addDocuments(docs, { primaryKey: 'id' }).waitTask({ timeout: 60_000 });
}, 60_000);
afterAll(async () => {
  await t.close();
});

/** The scans kept for the index's current state, by key. */
function keptScans(): Map<string, unknown> {
  const state = searchStateOf(t.node.ctx.engine.getIndex('kept'))!;
  return new Map((state.memo.get(KEPT_SCANS) as KeptScanTable | undefined)?.entries ?? []);
}

const strip = ({ processingTimeMs: _p, requestUid: _r, ...rest }: Record<string, unknown>) => rest;

async function twice(q: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const body = { limit: 30, showRankingScoreDetails: true, showRankingScore: true, ...params };
  const first = strip((await idx.search(q, body)) as unknown as Record<string, unknown>);
  const second = strip((await idx.search(q, body)) as unknown as Record<string, unknown>);
  expect(second).toEqual(first);
  return first;
}

describe('kept scans of long posting lists', () => {
  it('keeps the scan of a long list once and answers the next searches from it', async () => {
    expect(keptScans().size).toBe(0);
    await twice('x');
    const kept = keptScans();
    expect(kept.size).toBe(1);
    const [[key, scan]] = [...kept];
    // Searched again: answered from the same kept scan, not scanned and kept anew.
    await idx.search('x', { limit: 5 });
    expect(keptScans().get(key)).toBe(scan);
    // A search that reads short lists keeps nothing.
    await idx.search('xylo 7', { limit: 5 });
    expect(keptScans().size).toBe(1);
  });

  it('answers a repeated short prefix exactly as the first time, whatever the fields searched', async () => {
    const all = await twice('x');
    expect(all['estimatedTotalHits']).toBe(1000);
    const hits = all['hits'] as { id: number; title: string }[];
    // The title is searched first: "xylo" titles (every 7th document) rank first.
    expect(hits.slice(0, 5).every((h) => h.id % 7 === 0)).toBe(true);
    // Searching the body alone picks the candidates by the body (the ranking still reads
    // every searchable field, as in the reference), from a scan kept apart from the first.
    const kept = keptScans().size;
    const bodyOnly = await twice('x', { attributesToSearchOn: ['body'] });
    expect((bodyOnly['hits'] as { id: number }[]).slice(0, 5).every((h) => h.id % 3 === 0)).toBe(true);
    expect(keptScans().size).toBe(kept + 1);
    const titleOnly = await twice('xylo', { attributesToSearchOn: ['title'], hitsPerPage: 1 });
    expect(titleOnly['totalHits']).toBe(1000);
    expect((await idx.search('xylo', { attributesToSearchOn: ['body'] })).hits).toEqual([]);
    const page = await twice('x', { hitsPerPage: 5, page: 3 });
    expect(page['totalHits']).toBe(1000);
    expect((page['hits'] as unknown[]).length).toBe(5);
  });

  it('follows the documents: a change published after a kept scan shows in the next answer', async () => {
    await twice('x');
    // Document 1 becomes the only one whose title is exactly "x".
    await idx.updateDocuments([{ id: 1, title: 'x' }]).waitTask();
    const after = await twice('x');
    expect((after['hits'] as { id: number }[])[0]!.id).toBe(1);
    await idx.deleteDocument(1).waitTask();
    const gone = await twice('x');
    expect((gone['hits'] as { id: number }[]).some((h) => h.id === 1)).toBe(false);
  });

  it('applies filters to a query whose scan is kept', async () => {
    await idx.updateFilterableAttributes(['id']).waitTask({ timeout: 60_000 });
    await twice('x');
    const r = await twice('x', { filter: 'id < 100' });
    expect((r['hits'] as { id: number }[]).every((h) => h.id < 100)).toBe(true);
    expect(r['estimatedTotalHits']).toBe(99);
  });
});
