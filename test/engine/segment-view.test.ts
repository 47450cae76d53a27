import { describe, expect, it } from 'vitest';
import { SegmentView, type Segment } from '../../src/engine/fulltext/segment.js';
import { rng } from '../helpers/rng.js';
import { Yielder } from '../../src/util/yielder.js';

const turns = new Yielder();

// Views are updated from the previous one when a batch adds a segment or a merge replaces a
// run of them; built again from all their segments, they must come out the same.

function segment(seq: number, docs: number[], deleted: number[] = []): Segment {
  const sorted = (xs: number[]) => Uint32Array.from([...new Set(xs)].sort((a, b) => a - b));
  return { seq, docs: sorted(docs), deleted: sorted(deleted) } as unknown as Segment;
}

function expectRebuilt(view: SegmentView): void {
  const full = new SegmentView(view.segments, view.capacity);
  expect(view.capacity).toBe(full.capacity);
  expect(Array.from(view.docids)).toEqual(Array.from(full.docids));
  for (let d = 0; d < view.capacity + 2; d++) if (view.ownerOf(d) !== full.ownerOf(d)) expect(`owner of ${d}: ${view.ownerOf(d)}`).toBe(`owner of ${d}: ${full.ownerOf(d)}`);
  for (let i = 0; i < view.segments.length; i++) expect(view.deadCount(i), `dead in segment ${i}`).toBe(full.deadCount(i));
}

/** What mergeSegments keeps of a run: its live documents, and its deletions no segment brought back. */
function merged(view: SegmentView, from: number, to: number, seq: number, drop = false): Segment {
  const run = view.segments.slice(from, to);
  const live: number[] = [];
  run.forEach((s, a) => {
    for (const d of s.docs) if (view.ownerOf(d) === from + a) live.push(d);
  });
  if (drop && live.length > 0) live.pop();
  const deleted = from > 0 ? run.flatMap((s) => Array.from(s.deleted)).filter((d) => view.ownerOf(d) < 0) : [];
  return segment(seq, live, deleted);
}

describe('a segment view updated batch by batch', () => {
  it('equals the view built from all its segments, through additions, replacements, deletions and merges', async () => {
    for (const seed of [1, 2, 3, 4, 5, 6]) {
      const r = rng(seed);
      let view = SegmentView.empty();
      let next = 0;
      let seq = 0;
      for (let step = 0; step < 60; step++) {
        const n = view.segments.length;
        if (n >= 2 && r() < 0.3) {
          const from = Math.floor(r() * (n - 1));
          const to = from + 2 + Math.floor(r() * (n - from - 1));
          // Now and then a merged segment that lost a document: the view is then built again.
          view = await view.replacing(from, to, merged(view, from, to, seq++, r() < 0.15), turns);
        } else {
          const live = Array.from(view.docids);
          const pickLive = (share: number) => live.filter(() => r() < share);
          const added = Array.from({ length: Math.floor(r() * 40) }, () => next++);
          // Documents come back in any order: a replacement, or an id freed by a deletion reused.
          const replaced = r() < 0.5 ? pickLive(0.2) : [];
          const deleted = r() < 0.5 ? pickLive(0.15).filter((d) => !replaced.includes(d)) : [];
          const revived = r() < 0.2 && next > 0 ? [Math.floor(r() * next)].filter((d) => view.ownerOf(d) < 0) : [];
          view = await view.adding(segment(seq++, [...added, ...replaced, ...revived], deleted), turns);
        }
        expectRebuilt(view);
      }
      expect(view.docids.length).toBeGreaterThan(0);
    }
  });

  it('keeps up with a batch of new documents below the highest one, and with a batch of deletions only', async () => {
    let view = await SegmentView.empty().adding(segment(0, [0, 1, 2, 10, 11]), turns);
    view = await view.adding(segment(1, [5, 6, 20]), turns);
    expectRebuilt(view);
    view = await view.adding(segment(2, [], [1, 6, 20, 99]), turns);
    expectRebuilt(view);
    expect(Array.from(view.docids)).toEqual([0, 2, 5, 10, 11]);
    view = await view.replacing(0, 3, merged(view, 0, 3, 3), turns);
    expectRebuilt(view);
    expect(view.segments.length).toBe(1);
    expect(view.deadCount(0)).toBe(0);
  });
});
