import { describe, expect, it } from 'vitest';
import { SegmentView, type Segment } from '../../src/engine/fulltext/segment.js';
import { distinctDocs, type Posting } from '../../src/engine/fulltext/postings.js';
import { encodeRecords } from '../../src/engine/fulltext/doc-record.js';
import { Yielder } from '../../src/util/yielder.js';

const turns = new Yielder();

// A word's list read across segments is a copy; after a batch of new documents the next view
// extends that copy in place (grown-lists.ts) instead of copying every entry again. Whatever
// way a list is made, it must hold what the segments hold, and an older view's lists must
// never change.

/** The tokens of document `d`, [word, fp] by fp: word 0 in every document (twice in every third), word 1 in the even ones. */
function tokens(d: number): [number, number][] {
  const out: [number, number][] = [[0, 1]];
  if (d % 3 === 0) out.push([0, 5]);
  if (d % 2 === 0) out.push([1, (1 << 16) | 2]);
  return out;
}

async function segment(seq: number, docs: number[], deleted: number[] = []): Promise<Segment> {
  docs.sort((a, b) => a - b);
  const lists: [number, number][][] = [[], []];
  for (const d of docs) for (const [w, fp] of tokens(d)) lists[w]!.push([d, fp]);
  const ids = [0, 1].filter((w) => lists[w]!.length > 0);
  const entries = ids.flatMap((w) => lists[w]!);
  const offsets = [0];
  for (const w of ids) offsets.push(offsets[offsets.length - 1]! + lists[w]!.length);
  return {
    seq,
    docs: Uint32Array.from(docs),
    deleted: Uint32Array.from(deleted),
    words: {
      ids: Uint32Array.from(ids),
      offsets: Uint32Array.from(offsets),
      ndocs: Uint32Array.from(ids.map((w) => new Set(lists[w]!.map(([d]) => d)).size)),
      docs: Uint32Array.from(entries.map(([d]) => d)),
      fps: Uint32Array.from(entries.map(([, fp]) => fp)),
    },
    prefixes: null,
    // Records as a batch writes them: a batch that replaces a document reads its old tokens.
    ...(await encodeRecords(docs.length, (i) => ({ tokens: Uint32Array.from(tokens(docs[i]!).flat()), counts: new Uint32Array(0), values: null }), turns)),
  };
}

const range = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => from + i);

/** What list `id` of the view must hold: every live entry of its segments, by docid. */
function expected(view: SegmentView, id: number): { docs: number[]; fps: number[]; ndocs: number } {
  const all: [number, number][] = [];
  view.segments.forEach((s, i) => {
    const slot = Array.from(s.words.ids).indexOf(id);
    if (slot < 0) return;
    for (let e = s.words.offsets[slot]!; e < s.words.offsets[slot + 1]!; e++) {
      if (view.ownerOf(s.words.docs[e]!) === i) all.push([s.words.docs[e]!, s.words.fps[e]!]);
    }
  });
  all.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  return { docs: all.map(([d]) => d), fps: all.map(([, f]) => f), ndocs: new Set(all.map(([d]) => d)).size };
}

function check(view: SegmentView, id: number): Posting {
  const p = view.word(id);
  const want = expected(view, id);
  expect(Array.from(p.docs)).toEqual(want.docs);
  expect(Array.from(p.fps)).toEqual(want.fps);
  expect(p.ndocs).toBe(want.ndocs);
  expect(Array.from(distinctDocs(p.docs, p.ndocs))).toEqual([...new Set(want.docs)]);
  return p;
}

describe('lists read across segments', () => {
  it('are extended in place through an import of large batches, and hold what their segments hold', async () => {
    let view = await SegmentView.empty().adding(await segment(0, range(0, 20_000)), turns);
    let next = 20_000;
    let inPlace = 0;
    let prev: Posting | null = null;
    for (let b = 1; b <= 8; b++) {
      view = await view.adding(await segment(b, range(next, next + 1100)), turns);
      next += 1100;
      const p = check(view, 0);
      check(view, 1);
      if (prev !== null && p.docs.buffer === prev.docs.buffer) inPlace++;
      prev = p;
    }
    // The first copy is exact; the first extension makes room, and the next batches fill it.
    expect(inPlace).toBeGreaterThanOrEqual(4);
  });

  it('are extended in place through batches small enough to carry the caches', async () => {
    let view = await SegmentView.empty().adding(await segment(0, range(0, 5000)), turns);
    view = await view.adding(await segment(1, range(5000, 6000)), turns);
    let prev = check(view, 0);
    let next = 6000;
    let inPlace = 0;
    for (let b = 2; b <= 10; b++) {
      view = await view.adding(await segment(b, range(next, next + 50)), turns);
      next += 50;
      const p = check(view, 0);
      if (p.docs.buffer === prev.docs.buffer) inPlace++;
      prev = p;
    }
    expect(inPlace).toBeGreaterThanOrEqual(7);
  });

  it('stay as they were in a view whose successor was dropped, and the next successor copies', async () => {
    let view = await SegmentView.empty().adding(await segment(0, range(0, 10_000)), turns);
    view = await view.adding(await segment(1, range(10_000, 12_000)), turns);
    view = await view.adding(await segment(2, range(12_000, 14_000)), turns);
    check(view, 0);
    const base = await view.adding(await segment(3, range(14_000, 15_200)), turns);
    check(base, 0);
    // Two successors of one view: the first extends its list in place, the second must not
    // write over what the first wrote.
    const first = await base.adding(await segment(4, range(15_200, 16_400)), turns);
    const a = check(first, 0);
    const second = await base.adding(await segment(5, range(20_000, 21_500).filter((d) => d % 2 === 1)), turns);
    const b = check(second, 0);
    expect(b.docs.buffer).not.toBe(a.docs.buffer);
    check(first, 0);
    check(base, 0);
  });

  it('are extended by a view two batches later, and through a merge of the segments they were read from', async () => {
    let view = await SegmentView.empty().adding(await segment(0, range(0, 10_000)), turns);
    view = await view.adding(await segment(1, range(10_000, 11_100)), turns);
    view = await view.adding(await segment(2, range(11_100, 12_200)), turns);
    const read = check(view, 0);
    // Not read after this batch: the next view still extends the list read before it.
    view = await view.adding(await segment(3, range(12_200, 13_300)), turns);
    view = await view.adding(await segment(4, range(13_300, 14_400)), turns);
    const later = check(view, 0);
    expect(later.docs.buffer).toBe(read.docs.buffer);
    // Segments 1-3 merged into one: the list names the merged segment and is still extended.
    view = await view.replacing(1, 4, await segment(5, range(10_000, 13_300)), turns);
    check(view, 0);
    view = await view.adding(await segment(6, range(14_400, 15_500)), turns);
    const merged = check(view, 0);
    expect(merged.docs.buffer).toBe(read.docs.buffer);
    check(view, 1);
  });

  it('are merged, not extended, after a batch that replaces or deletes documents', async () => {
    let view = await SegmentView.empty().adding(await segment(0, range(0, 3000)), turns);
    view = await view.adding(await segment(1, range(3000, 4000)), turns);
    check(view, 0);
    view = await view.adding(await segment(2, [...range(4000, 4010), 17, 2999], [17, 2999, 5]), turns);
    check(view, 0);
    check(view, 1);
    view = await view.adding(await segment(3, range(4010, 5200)), turns);
    check(view, 0);
    check(view, 1);
  });
});
