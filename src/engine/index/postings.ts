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
  /** Calls `fn(listId)` for each list the word feeds. */
  forWord(wordId: number, fn: (listId: number) => void): void;
  /** Keep only the first occurrence per (document, field): prefix lists store minimal positions. */
  firstPerField: boolean;
}

export const WORD_LISTS = (count: number): ListKeys => ({
  count,
  forWord: (w, fn) => fn(w),
  firstPerField: false,
});

/**
 * Builds every list from the records, visiting documents in docid order so that each
 * list comes out sorted.
 */
export async function buildPostings(
  records: readonly (DocRecord | undefined)[],
  keys: ListKeys,
  yielder: Yielder,
): Promise<Posting[]> {
  const n = keys.count;
  const counts = new Uint32Array(n + 1);
  const stampDoc = new Int32Array(n).fill(-1);
  const stampFid = new Int32Array(n).fill(-1);
  const ndocs = new Uint32Array(n);
  const lastDoc = new Int32Array(n).fill(-1);

  const visit = (d: number, rec: DocRecord, emit: (list: number, fp: number) => void): void => {
    const t = rec.tokens;
    for (let i = 0; i < t.length; i += 2) {
      const fp = t[i + 1]!;
      const fid = fp >>> 16;
      keys.forWord(t[i]!, (list) => {
        if (keys.firstPerField) {
          if (stampDoc[list] === d && stampFid[list] === fid) return;
          stampDoc[list] = d;
          stampFid[list] = fid;
        }
        emit(list, fp);
      });
    }
  };

  for (let d = 0; d < records.length; d++) {
    const rec = records[d];
    if (!rec) continue;
    visit(d, rec, (list) => {
      counts[list]!++;
      if (lastDoc[list] !== d) {
        lastDoc[list] = d;
        ndocs[list]!++;
      }
    });
    if ((d & 1023) === 0) await yielder.maybe();
  }
  const offsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + counts[i]!;
  const total = offsets[n]!;
  const docsArena = new Uint32Array(total);
  const fpsArena = new Uint32Array(total);
  const fill = offsets.slice(0, n);
  stampDoc.fill(-1);
  stampFid.fill(-1);
  for (let d = 0; d < records.length; d++) {
    const rec = records[d];
    if (!rec) continue;
    visit(d, rec, (list, fp) => {
      const at = fill[list]!++;
      docsArena[at] = d;
      fpsArena[at] = fp;
    });
    if ((d & 1023) === 0) await yielder.maybe();
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
      this.keys.forWord(t[i]!, (list) => {
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
    for (let i = 0; i < t.length; i += 2) this.keys.forWord(t[i]!, (list) => touched.add(list));
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
