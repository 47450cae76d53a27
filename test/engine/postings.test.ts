// Entry ranges of chosen documents in a posting list: every way through (galloping in the
// list, galloping in the documents, merging) against a plain scan, on seeded lists.

import { describe, expect, it } from 'vitest';
import { distinctDocs, entryRanges } from '../../src/engine/fulltext/postings.js';
import { rng } from '../bench/wordnet.js';

function naive(list: Uint32Array, docs: Uint32Array): number[] {
  const want = new Set(docs);
  const out: number[] = [];
  for (let i = 0; i < list.length; ) {
    let e = i + 1;
    while (e < list.length && list[e] === list[i]) e++;
    if (want.has(list[i]!)) out.push(i, e);
    i = e;
  }
  return out;
}

function sortedSample(r: () => number, universe: number, share: number, repeats: number): Uint32Array {
  const out: number[] = [];
  for (let d = 0; d < universe; d++) {
    if (r() >= share) continue;
    const n = 1 + Math.floor(r() * repeats);
    for (let k = 0; k < n; k++) out.push(d);
  }
  return Uint32Array.from(out);
}

describe('entryRanges', () => {
  it('finds the entries of the chosen documents, whatever the sizes and repeats', () => {
    const r = rng(3);
    for (let round = 0; round < 200; round++) {
      const universe = 50 + Math.floor(r() * 3000);
      const list = sortedSample(r, universe, [0.01, 0.1, 0.5, 0.95][round % 4]!, round % 3 === 0 ? 1 : 6);
      const docs = distinctDocs(sortedSample(r, universe, [0.005, 0.05, 0.4, 0.9][(round >> 2) % 4]!, 1));
      expect(Array.from(entryRanges(list, docs))).toEqual(naive(list, docs));
    }
  });

  it('keeps each list\'s distinct documents once', () => {
    const list = Uint32Array.from([1, 1, 4, 7, 7, 7, 9]);
    const once = distinctDocs(list);
    expect(Array.from(once)).toEqual([1, 4, 7, 9]);
    expect(distinctDocs(list)).toBe(once);
    const single = Uint32Array.from([2, 3, 5]);
    expect(distinctDocs(single)).toBe(single);
  });

  it('collects the distinct documents in one walk given their count, and counts them when the count is wrong', () => {
    const list = () => Uint32Array.from([1, 1, 4, 7, 7, 7, 9]);
    expect(Array.from(distinctDocs(list(), 4))).toEqual([1, 4, 7, 9]);
    for (const wrong of [0, 2, 3, 5, 6]) expect(Array.from(distinctDocs(list(), wrong))).toEqual([1, 4, 7, 9]);
    // A count equal to the length is checked, not trusted.
    expect(Array.from(distinctDocs(list(), 7))).toEqual([1, 4, 7, 9]);
    const r = rng(11);
    for (let round = 0; round < 20; round++) {
      const xs: number[] = [];
      for (let d = 0; d < 500; d++) for (let k = r() < 0.5 ? 0 : 1 + Math.floor(r() * 4); k > 0; k--) xs.push(d);
      const l = Uint32Array.from(xs);
      const want = [...new Set(xs)];
      expect(Array.from(distinctDocs(l, want.length))).toEqual(want);
      expect(Array.from(entryRanges(Uint32Array.from(xs), Uint32Array.from(want), want.length))).toEqual(naive(l, Uint32Array.from(want)));
    }
  });
});
