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

/** End (exclusive) of the entries from index `i` on that belong to the document at `i`. */
export function docEnd(p: Posting, i: number): number {
  const d = p.docs[i]!;
  let j = i;
  while (j < p.docs.length && p.docs[j] === d) j++;
  return j;
}

/** The entries `[from, to)` of document `d` in `p`, searched from entry `start` on, or null when it has none. */
export function docRun(p: Posting, d: number, start = 0): [number, number] | null {
  const from = seekDoc(p, d, start);
  return from < p.docs.length && p.docs[from] === d ? [from, docEnd(p, from)] : null;
}

const postingIds = new WeakMap<object, number>();
let nextPostingId = 1;

/**
 * A number naming a list while it lives: kept scans are keyed by the lists they read (a
 * state never changes a list, it replaces it).
 */
export function postingId(p: object): number {
  let id = postingIds.get(p);
  if (id === undefined) postingIds.set(p, (id = nextPostingId++));
  return id;
}

/** The list's number, if it was ever given one. */
export function knownPostingId(p: object): number | undefined {
  return postingIds.get(p);
}

const distinctOf = new WeakMap<Uint32Array, Uint32Array>();

/**
 * The documents of a list of entries (ascending docids, a document's entries together),
 * each once. Lists are never changed in place (a batch replaces a list it touches), so this
 * is computed once per list and kept with it: searches then step over the documents of a
 * frequent word rather than over its every occurrence.
 */
export function distinctDocs(list: Uint32Array, ndocs = -1): Uint32Array {
  const known = distinctOf.get(list);
  if (known !== undefined) return known;
  let out = ndocs >= 0 && ndocs < list.length ? collectDistinct(list, ndocs) : null;
  if (out === null) {
    // The count is not known (or not trusted): counted first, so that the copy is sized.
    let n = 0;
    for (let i = 0, last = -1; i < list.length; i++) if (list[i] !== last) (last = list[i]!), n++;
    out = n === list.length ? list : collectDistinct(list, n)!;
  }
  distinctOf.set(list, out);
  return out;
}

/**
 * The distinct documents of `list` in one walk, given their count (a posting's `ndocs`):
 * counting them first doubled the cost of a common word's first search. Null when the count
 * was wrong.
 */
function collectDistinct(list: Uint32Array, n: number): Uint32Array | null {
  const out = new Uint32Array(n);
  let k = 0;
  for (let i = 0, last = -1; i < list.length; i++) {
    const d = list[i]!;
    if (d !== last) {
      // Past the end a typed array drops the write: k still counts.
      out[k++] = last = d;
    }
  }
  return k === n ? out : null;
}

/** The distinct documents of `list`, if they were computed. */
export function knownDistinct(list: Uint32Array): Uint32Array | undefined {
  return distinctOf.get(list);
}

/** Gives `list` its distinct documents, made otherwise than by distinctDocs (ascending, each once). */
export function registerDistinct(list: Uint32Array, distinct: Uint32Array): void {
  distinctOf.set(list, distinct);
}

/**
 * Registers the distinct documents of `list`, made from those of `from` (if computed) without
 * the documents `removed` (ascending) and with those of `add`: a patched list's, by copied runs
 * instead of a walk over every entry.
 */
export function patchDistinct(list: Uint32Array, from: Uint32Array, removed: Uint32Array, add: Posting): void {
  const old = distinctOf.get(from);
  if (old === undefined) return;
  const added = distinctDocs(add.docs, add.ndocs);
  const out = new Uint32Array(old.length + added.length);
  let i = 0;
  let j = 0;
  let r = 0;
  let k = 0;
  while (i < old.length || j < added.length) {
    if (j >= added.length || (i < old.length && old[i]! < added[j]!)) {
      const d = old[i++]!;
      while (r < removed.length && removed[r]! < d) r++;
      if (r < removed.length && removed[r] === d) continue;
      out[k++] = d;
    } else {
      if (i < old.length && old[i] === added[j]) i++;
      out[k++] = added[j++]!;
    }
  }
  distinctOf.set(list, k === list.length ? list : out.slice(0, k));
}

/**
 * [start, end) pairs of the entries of `list` (ascending docids, a document's entries
 * together) that belong to `docs` (ascending). A typed array: growing a plain array by
 * tens of thousands of pushes costs several times the walk itself.
 */
export function entryRanges(list: Uint32Array, docs: Uint32Array, ndocs = -1): Uint32Array {
  // The documents both hold are found among the list's distinct documents; each one's
  // entries are then found by galloping on from the previous one's.
  const ld = distinctDocs(list, ndocs);
  const out = new Uint32Array(2 * Math.min(ld.length, docs.length));
  let n = 0;
  let at = 0;
  // d is ld[k]; with one entry per document, its entry is k.
  const push = (d: number, k: number): void => {
    if (ld === list) {
      out[n++] = k;
      out[n++] = k + 1;
      return;
    }
    at = gallop(list, d, at);
    out[n++] = at;
    while (at < list.length && list[at] === d) at++;
    out[n++] = at;
  };
  if (ld.length > 8 * docs.length) {
    let j = 0;
    for (let i = 0; i < docs.length && j < ld.length; i++) {
      const d = docs[i]!;
      j = gallop(ld, d, j);
      if (j < ld.length && ld[j] === d) push(d, j++);
    }
    return out.subarray(0, n);
  }
  if (docs.length > 8 * ld.length) {
    let i = 0;
    for (let j = 0; j < ld.length && i < docs.length; j++) {
      const d = ld[j]!;
      i = gallop(docs, d, i);
      if (i < docs.length && docs[i] === d) push(d, j);
    }
    return out.subarray(0, n);
  }
  let i = 0;
  let j = 0;
  while (i < docs.length && j < ld.length) {
    const d = docs[i]!;
    const l = ld[j]!;
    if (d < l) i++;
    else if (l < d) j++;
    else {
      push(d, j);
      i++;
      j++;
    }
  }
  return out.subarray(0, n);
}

/** The union of two ascending docid arrays. */
export function unionSorted(a: Uint32Array, b: Uint32Array): Uint32Array {
  if (b.length === 0) return a;
  if (a.length === 0) return b;
  const out = new Uint32Array(a.length + b.length);
  let i = 0;
  let j = 0;
  let k = 0;
  while (i < a.length || j < b.length) {
    const x = j >= b.length || (i < a.length && a[i]! <= b[j]!) ? a[i++]! : b[j++]!;
    if (k === 0 || out[k - 1] !== x) out[k++] = x;
  }
  return out.subarray(0, k);
}

/**
 * The entries of several lists as one list: ascending docids, each document's entries in
 * ascending `field << 16 | position` order. The lists hold different words, so no entry
 * occurs twice.
 */
export function unionPostings(lists: readonly Posting[]): Posting {
  let n = 0;
  for (const p of lists) n += p.docs.length;
  // One sortable number per entry: docid above, occurrence below (both under 2^32).
  const keys = new Float64Array(n);
  let k = 0;
  for (const p of lists) for (let i = 0; i < p.docs.length; i++) keys[k++] = p.docs[i]! * 0x1_0000_0000 + p.fps[i]!;
  keys.sort();
  const docs = new Uint32Array(n);
  const fps = new Uint32Array(n);
  let ndocs = 0;
  for (let i = 0; i < n; i++) {
    const d = Math.floor(keys[i]! / 0x1_0000_0000);
    docs[i] = d;
    fps[i] = keys[i]! - d * 0x1_0000_0000;
    if (i === 0 || docs[i - 1] !== d) ndocs++;
  }
  return { docs, fps, ndocs };
}
