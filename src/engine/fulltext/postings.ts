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
