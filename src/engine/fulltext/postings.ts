// Posting lists: for a word (or an indexed prefix), every occurrence as two parallel
// arrays sorted by docid then by fp (fieldId << 16 | position). Segments hold them laid
// out flat (list-arena.ts); a search reads them as views, or merged across segments.

export interface Posting {
  docs: Uint32Array;
  fps: Uint32Array;
  /** Number of distinct documents. */
  ndocs: number;
}

export const EMPTY_POSTING: Posting = Object.freeze({ docs: new Uint32Array(0), fps: new Uint32Array(0), ndocs: 0 }) as Posting;

/** Maps a token's word id to the list ids it feeds (its own id, or the ids of its prefixes). */
export interface ListKeys {
  /** Number of lists. */
  count: number;
  /** Null: a word feeds its own list. Else `perWord` list ids per word id (-1: none). */
  slots: Int32Array | null;
  perWord: number;
  /** Keep only the first occurrence per (document, field): prefix lists store minimal positions. */
  firstPerField: boolean;
}

export const WORD_LISTS = (count: number): ListKeys => ({ count, slots: null, perWord: 1, firstPerField: false });

/** Index of the first entry of document `d` in the posting (or where it would be). */
export function seekDoc(p: Posting, d: number, from = 0): number {
  let lo = from;
  let hi = p.docs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (p.docs[mid]! < d) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index of `xs` at or after `from` holding a value ≥ v (galloping, then binary search). */
export function gallop(xs: Uint32Array, v: number, from: number): number {
  let step = 1;
  let hi = from;
  while (hi < xs.length && xs[hi]! < v) {
    from = hi + 1;
    hi += step;
    step *= 2;
  }
  if (hi > xs.length) hi = xs.length;
  while (from < hi) {
    const mid = (from + hi) >>> 1;
    if (xs[mid]! < v) from = mid + 1;
    else hi = mid;
  }
  return from;
}

/**
 * [start, end) pairs of the entries of `list` (ascending docids, a document's entries
 * together) that belong to `docs` (ascending). A typed array: growing a plain array by
 * tens of thousands of pushes costs several times the walk itself.
 */
export function entryRanges(list: Uint32Array, docs: Uint32Array): Uint32Array {
  const out = new Uint32Array(2 * Math.min(list.length, docs.length));
  let n = 0;
  if (list.length > 8 * docs.length) {
    let j = 0;
    for (let i = 0; i < docs.length && j < list.length; i++) {
      const d = docs[i]!;
      j = gallop(list, d, j);
      if (j >= list.length || list[j] !== d) continue;
      const start = j;
      while (j < list.length && list[j] === d) j++;
      out[n++] = start;
      out[n++] = j;
    }
    return out.subarray(0, n);
  }
  if (docs.length > 8 * list.length) {
    let i = 0;
    for (let j = 0; j < list.length && i < docs.length; ) {
      const d = list[j]!;
      let e = j + 1;
      while (e < list.length && list[e] === d) e++;
      i = gallop(docs, d, i);
      if (i < docs.length && docs[i] === d) {
        out[n++] = j;
        out[n++] = e;
      }
      j = e;
    }
    return out.subarray(0, n);
  }
  let i = 0;
  let j = 0;
  while (i < docs.length && j < list.length) {
    const d = docs[i]!;
    const l = list[j]!;
    if (d < l) i++;
    else if (l < d) j++;
    else {
      const start = j;
      while (j < list.length && list[j] === d) j++;
      out[n++] = start;
      out[n++] = j;
      i++;
    }
  }
  return out.subarray(0, n);
}
