// Posting lists: for a word (or an indexed prefix), every occurrence as two parallel
// arrays sorted by docid then by fp (fieldId << 16 | position).
//
// A full build lays every list out in two shared arenas (one allocation instead of one
// per word); an incremental batch replaces only the lists it touches with fresh arrays,
// so published states keep sharing everything else.

import type { DocRecord } from './doc-record.js';
import type { Yielder } from './yielder.js';

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

/** Calls `fn(listId)` for each list word `w` feeds. */
export function forEachList(keys: ListKeys, w: number, fn: (list: number) => void): void {
  const slots = keys.slots;
  if (slots === null) {
    fn(w);
    return;
  }
  for (let k = 0, base = w * keys.perWord; k < keys.perWord; k++) {
    const l = slots[base + k]!;
    if (l >= 0) fn(l);
  }
}

/**
 * Builds every list from the records, visiting documents in docid order so that each
 * list comes out sorted. Two passes (count, then fill) over plain loops: this runs over
 * every token of the index.
 */
export async function buildPostings(
  records: readonly (DocRecord | undefined)[],
  keys: ListKeys,
  yielder: Yielder,
): Promise<Posting[]> {
  const n = keys.count;
  const slots = keys.slots;
  const per = keys.perWord;
  const first = keys.firstPerField;
  const counts = new Uint32Array(n + 1);
  const stampDoc = new Int32Array(n).fill(-1);
  const stampFid = new Int32Array(n).fill(-1);
  const ndocs = new Uint32Array(n);
  const lastDoc = new Int32Array(n).fill(-1);
  let offsets = new Uint32Array(0);
  let docsArena = new Uint32Array(0);
  let fpsArena = new Uint32Array(0);
  let fill = new Uint32Array(0);

  for (let pass = 0; pass < 2; pass++) {
    const counting = pass === 0;
    for (let d = 0; d < records.length; d++) {
      const rec = records[d];
      if (!rec) continue;
      const t = rec.tokens;
      for (let i = 0; i < t.length; i += 2) {
        const w = t[i]!;
        const fp = t[i + 1]!;
        const kEnd = slots === null ? 1 : per;
        for (let k = 0; k < kEnd; k++) {
          const list = slots === null ? w : slots[w * per + k]!;
          if (list < 0) continue;
          if (first) {
            const fid = fp >>> 16;
            if (stampDoc[list] === d && stampFid[list] === fid) continue;
            stampDoc[list] = d;
            stampFid[list] = fid;
          }
          if (counting) {
            counts[list]!++;
            if (lastDoc[list] !== d) {
              lastDoc[list] = d;
              ndocs[list]!++;
            }
          } else {
            const at = fill[list]!++;
            docsArena[at] = d;
            fpsArena[at] = fp;
          }
        }
      }
      if ((d & 1023) === 0) await yielder.maybe();
    }
    if (counting) {
      offsets = new Uint32Array(n + 1);
      for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + counts[i]!;
      docsArena = new Uint32Array(offsets[n]!);
      fpsArena = new Uint32Array(offsets[n]!);
      fill = offsets.slice(0, n);
      stampDoc.fill(-1);
      stampFid.fill(-1);
    }
  }
  const out = new Array<Posting>(n);
  for (let i = 0; i < n; i++) {
    const a = offsets[i]!;
    const b = offsets[i + 1]!;
    out[i] = a === b ? EMPTY_POSTING : { docs: docsArena.subarray(a, b), fps: fpsArena.subarray(a, b), ndocs: ndocs[i]! };
  }
  return out;
}

/** Entries to add to lists during an incremental batch, collected in docid order. */
export class PostingDelta {
  readonly added = new Map<number, { docs: number[]; fps: number[] }>();

  constructor(private readonly keys: ListKeys) {}

  /** Records the entries of one (new or replaced) document; call in ascending docid order. */
  addRecord(d: number, rec: DocRecord): void {
    const t = rec.tokens;
    const seen = this.keys.firstPerField ? new Set<number>() : null;
    for (let i = 0; i < t.length; i += 2) {
      const fp = t[i + 1]!;
      const fid = fp >>> 16;
      forEachList(this.keys, t[i]!, (list) => {
        if (seen) {
          const k = list * 0x10000 + fid;
          if (seen.has(k)) return;
          seen.add(k);
        }
        let e = this.added.get(list);
        if (!e) this.added.set(list, (e = { docs: [], fps: [] }));
        e.docs.push(d);
        e.fps.push(fp);
      });
    }
  }

  /** Marks the lists of a removed (or replaced) document as touched. */
  touchRecord(rec: DocRecord, touched: Set<number>): void {
    const t = rec.tokens;
    for (let i = 0; i < t.length; i += 2) forEachList(this.keys, t[i]!, (list) => touched.add(list));
  }
}

/** `old` without the entries of changed documents, merged with `add` (sorted by docid). */
export function mergePosting(
  old: Posting,
  changed: (d: number) => boolean,
  add: { docs: number[]; fps: number[] } | undefined,
): Posting {
  const addN = add ? add.docs.length : 0;
  const docs = new Uint32Array(old.docs.length + addN);
  const fps = new Uint32Array(old.docs.length + addN);
  let n = 0;
  let j = 0;
  let ndocs = 0;
  let last = -1;
  const push = (d: number, fp: number): void => {
    docs[n] = d;
    fps[n] = fp;
    n++;
    if (d !== last) {
      last = d;
      ndocs++;
    }
  };
  for (let i = 0; i < old.docs.length; i++) {
    const d = old.docs[i]!;
    if (changed(d)) continue;
    while (add && j < addN && add.docs[j]! < d) push(add.docs[j]!, add.fps[j++]!);
    push(d, old.fps[i]!);
  }
  while (add && j < addN) push(add.docs[j]!, add.fps[j++]!);
  if (n === 0) return EMPTY_POSTING;
  return { docs: docs.subarray(0, n), fps: fps.subarray(0, n), ndocs };
}

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
