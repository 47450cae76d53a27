// The posting lists of one segment laid out flat: the ids of the lists that have entries
// (ascending), their entry ranges, and two arenas holding every entry (docid, fp). Nothing
// is a JS object per list or per document, so a segment costs its bytes and opens as views
// over the buffers it was read into.

import type { DocRecord } from './doc-record.js';
import { EMPTY_POSTING, type ListKeys, type Posting } from './postings.js';
import { touchInTurns, type Yielder } from '../../util/yielder.js';

export interface ListArena {
  /** Ids of the lists with entries, ascending. */
  ids: Uint32Array;
  /** List `ids[i]` owns entries `[offsets[i], offsets[i + 1])`. */
  offsets: Uint32Array;
  /** Distinct documents of each list. */
  ndocs: Uint32Array;
  docs: Uint32Array;
  fps: Uint32Array;
}

export const EMPTY_ARENA: ListArena = {
  ids: new Uint32Array(0),
  offsets: new Uint32Array(1),
  ndocs: new Uint32Array(0),
  docs: new Uint32Array(0),
  fps: new Uint32Array(0),
};

/** Index of list `id` in the arena, or -1. */
export function slotOf(a: ListArena, id: number): number {
  const ids = a.ids;
  let lo = 0;
  let hi = ids.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (ids[mid]! < id) lo = mid + 1;
    else hi = mid;
  }
  return lo < ids.length && ids[lo] === id ? lo : -1;
}

/** List `id` as views over the arena (no copy). */
export function listAt(a: ListArena, slot: number): Posting {
  const from = a.offsets[slot]!;
  const to = a.offsets[slot + 1]!;
  return { docs: a.docs.subarray(from, to), fps: a.fps.subarray(from, to), ndocs: a.ndocs[slot]! };
}

export function listOf(a: ListArena, id: number): Posting {
  const s = slotOf(a, id);
  return s < 0 ? EMPTY_POSTING : listAt(a, s);
}

// Per-list counters, reused between builds and reset only where touched: a batch of a few
// documents must not pay for clearing arrays as long as the whole dictionary. A build gives
// the event loop turns, so a second one at the same time (another index, another node in the
// process) gets counters of its own.
interface Counters {
  counts: Uint32Array;
  ndocs: Uint32Array;
  lastDoc: Int32Array;
  stampFid: Int32Array;
  fill: Uint32Array;
}

function newCounters(size: number): Counters {
  return {
    counts: new Uint32Array(size),
    ndocs: new Uint32Array(size),
    lastDoc: new Int32Array(size).fill(-1),
    stampFid: new Int32Array(size).fill(-1),
    fill: new Uint32Array(size),
  };
}

let shared: Counters = newCounters(0);
let sharedInUse = false;

function reserve(n: number): Counters {
  if (sharedInUse) return newCounters(n);
  if (shared.counts.length < n) shared = newCounters(Math.max(n, shared.counts.length * 2, 1024));
  sharedInUse = true;
  return shared;
}

/**
 * Builds the lists of `records` (given in ascending docid order) for `keys`: two passes,
 * counting then filling, over every token. With `firstPerField` only the first entry per
 * (document, field) is kept, as prefix lists store minimal positions.
 */
export async function buildArena(
  docids: Uint32Array,
  recordAt: (i: number) => DocRecord,
  keys: ListKeys,
  yielder: Yielder,
): Promise<ListArena> {
  const c = reserve(keys.count);
  // Locals in the loops below.
  const counts_ = c.counts;
  const ndocs_ = c.ndocs;
  const lastDoc_ = c.lastDoc;
  const stampFid_ = c.stampFid;
  const fill_ = c.fill;
  const slots = keys.slots;
  const per = slots === null ? 1 : keys.perWord;
  const first = keys.firstPerField;
  const touched: number[] = [];
  let order = new Uint32Array(0);
  let total = 0;
  let docsArena = new Uint32Array(0);
  let fpsArena = new Uint32Array(0);
  try {
    for (let pass = 0; pass < 2; pass++) {
      const counting = pass === 0;
      for (let i = 0; i < docids.length; i++) {
        const d = docids[i]!;
        const t = recordAt(i).tokens;
        for (let j = 0; j < t.length; j += 2) {
          const w = t[j]!;
          const fp = t[j + 1]!;
          for (let k = 0; k < per; k++) {
            const list = slots === null ? w : slots[w * per + k]!;
            if (list < 0) continue;
            if (first) {
              const fid = fp >>> 16;
              if (lastDoc_[list] === d && stampFid_[list] === fid) continue;
              stampFid_[list] = fid;
            }
            if (counting) {
              if (counts_[list] === 0) touched.push(list);
              counts_[list]!++;
              total++;
              if (lastDoc_[list] !== d) ndocs_[list]!++;
            } else {
              const at = fill_[list]!++;
              docsArena[at] = d;
              fpsArena[at] = fp;
            }
            lastDoc_[list] = d;
          }
        }
        if ((i & 127) === 127) await yielder.maybe();
      }
      if (counting) {
        // Hundreds of thousands of lists for a large batch: read off the counters in order, in
        // turns; a small batch's few lists are sorted.
        if (touched.length * 32 < keys.count) order = Uint32Array.from(touched).sort();
        else {
          order = new Uint32Array(touched.length);
          for (let l = 0, o = 0; l < keys.count; l++) {
            if (counts_[l] !== 0) order[o++] = l;
            if ((l & 65535) === 65535) await yielder.maybe();
          }
        }
        await yielder.maybe();
        docsArena = new Uint32Array(total);
        fpsArena = new Uint32Array(total);
        // The filling pass writes all over both arenas from its first documents on.
        await touchInTurns(docsArena, yielder);
        await touchInTurns(fpsArena, yielder);
        let at = 0;
        for (let i = 0; i < order.length; i++) {
          const l = order[i]!;
          fill_[l] = at;
          at += counts_[l]!;
          lastDoc_[l] = -1;
          stampFid_[l] = -1;
          if ((i & 65535) === 65535) await yielder.maybe();
        }
      }
    }
    const ids = order;
    const offsets = new Uint32Array(ids.length + 1);
    const nd = new Uint32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const l = ids[i]!;
      offsets[i + 1] = offsets[i]! + counts_[l]!;
      nd[i] = ndocs_[l]!;
      if ((i & 65535) === 65535) await yielder.maybe();
    }
    return { ids, offsets, ndocs: nd, docs: docsArena, fps: fpsArena };
  } finally {
    for (let i = 0; i < touched.length; i++) {
      const l = touched[i]!;
      counts_[l] = 0;
      ndocs_[l] = 0;
      lastDoc_[l] = -1;
      stampFid_[l] = -1;
      fill_[l] = 0;
      if ((i & 65535) === 65535) await yielder.maybe();
    }
    if (c === shared) sharedInUse = false;
  }
}

/** Entries merged between two looks at the clock. */
const TURN_ENTRIES = 1 << 16;

/**
 * Whether the lists at `heads`..`ends` of arenas `from` hold docid ranges that do not overlap;
 * if so, `from` is left sorted by first docid, the order to copy them in.
 */
function laidEndToEnd(arenas: readonly ListArena[], from: number[], heads: Int32Array, ends: Int32Array): boolean {
  if (from.length === 1) return true;
  from.sort((a, b) => arenas[a]!.docs[heads[a]!]! - arenas[b]!.docs[heads[b]!]!);
  for (let j = 1; j < from.length; j++) {
    const prev = from[j - 1]!;
    const next = from[j]!;
    if (arenas[prev]!.docs[ends[prev]! - 1]! >= arenas[next]!.docs[heads[next]!]!) return false;
  }
  return true;
}

/**
 * The lists of several arenas merged into one, keeping of each arena only the entries
 * `keep(arena index, docid)` accepts. A document's entries all come from one arena, so
 * merging by docid keeps them in fp order.
 */
export async function mergeArenas(
  arenas: readonly ListArena[],
  keep: (arena: number, d: number) => boolean,
  clean: readonly boolean[],
  yielder: Yielder,
): Promise<ListArena> {
  const k = arenas.length;
  // Every list id present anywhere, ascending.
  const all: number[] = [];
  {
    const pos = new Array<number>(k).fill(0);
    for (;;) {
      let min = Infinity;
      for (let a = 0; a < k; a++) if (pos[a]! < arenas[a]!.ids.length && arenas[a]!.ids[pos[a]!]! < min) min = arenas[a]!.ids[pos[a]!]!;
      if (min === Infinity) break;
      all.push(min);
      for (let a = 0; a < k; a++) if (pos[a]! < arenas[a]!.ids.length && arenas[a]!.ids[pos[a]!] === min) pos[a]!++;
      if ((all.length & 16383) === 0) await yielder.maybe();
    }
  }
  const n = all.length;
  const slotIn = arenas.map(() => new Int32Array(n).fill(-1));
  {
    const pos = new Array<number>(k).fill(0);
    for (let i = 0; i < n; i++) {
      for (let a = 0; a < k; a++) {
        const ids = arenas[a]!.ids;
        if (pos[a]! < ids.length && ids[pos[a]!] === all[i]) slotIn[a]![i] = pos[a]!++;
      }
      if ((i & 16383) === 16383) await yielder.maybe();
    }
  }
  const sizes = new Uint32Array(n);
  const nd = new Uint32Array(n);
  let total = 0;
  let scanned = 0;
  for (let i = 0; i < n; i++) {
    for (let a = 0; a < k; a++) {
      const s = slotIn[a]![i]!;
      if (s < 0) continue;
      const ar = arenas[a]!;
      const from = ar.offsets[s]!;
      const to = ar.offsets[s + 1]!;
      if (clean[a]) {
        sizes[i]! += to - from;
        nd[i]! += ar.ndocs[s]!;
      } else {
        for (let e = from, last = -1; e < to; e++) {
          const d = ar.docs[e]!;
          if (!keep(a, d)) continue;
          sizes[i]!++;
          if (d !== last) nd[i]!++;
          last = d;
        }
        scanned += to - from;
      }
    }
    total += sizes[i]!;
    if ((i & 4095) === 4095 || scanned >= TURN_ENTRIES) {
      scanned = 0;
      await yielder.maybe();
    }
  }
  const docs = new Uint32Array(total);
  const fps = new Uint32Array(total);
  const offsets = new Uint32Array(n + 1);
  const heads = new Int32Array(k);
  const ends = new Int32Array(k);
  const from: number[] = [];
  let out = 0;
  let kept = 0;
  // A common word's list holds hundreds of thousands of entries: turns come by entries too.
  let turnAt = TURN_ENTRIES;
  for (let i = 0; i < n; i++) {
    offsets[i] = out;
    if (sizes[i] === 0) continue;
    from.length = 0;
    let allClean = true;
    for (let a = 0; a < k; a++) {
      const s = slotIn[a]![i]!;
      heads[a] = s < 0 ? 0 : arenas[a]!.offsets[s]!;
      ends[a] = s < 0 ? 0 : arenas[a]!.offsets[s + 1]!;
      if (s < 0) continue;
      from.push(a);
      if (!clean[a]) allClean = false;
    }
    if (allClean && laidEndToEnd(arenas, from, heads, ends)) {
      // An import's segments hold consecutive docids: their lists are copied, not merged.
      for (const a of from) {
        const ar = arenas[a]!;
        // A common word's list is millions of entries: copied a piece at a time.
        for (let e = heads[a]!; e < ends[a]!; e += TURN_ENTRIES) {
          const to = Math.min(ends[a]!, e + TURN_ENTRIES);
          docs.set(ar.docs.subarray(e, to), out);
          fps.set(ar.fps.subarray(e, to), out);
          out += to - e;
          if (out >= turnAt) {
            turnAt = out + TURN_ENTRIES;
            await yielder.maybe();
          }
        }
      }
    } else {
      for (;;) {
        // The arena whose next kept entry has the lowest docid.
        let best = -1;
        let bestDoc = Infinity;
        for (let a = 0; a < k; a++) {
          const ar = arenas[a]!;
          while (heads[a]! < ends[a]! && !clean[a] && !keep(a, ar.docs[heads[a]!]!)) heads[a]!++;
          if (heads[a]! < ends[a]! && ar.docs[heads[a]!]! < bestDoc) {
            bestDoc = ar.docs[heads[a]!]!;
            best = a;
          }
        }
        if (best < 0) break;
        const ar = arenas[best]!;
        // Every entry of this document in this arena.
        let e = heads[best]!;
        while (e < ends[best]! && ar.docs[e] === bestDoc) {
          docs[out] = bestDoc;
          fps[out++] = ar.fps[e++]!;
        }
        heads[best] = e;
        if (out >= turnAt) {
          turnAt = out + TURN_ENTRIES;
          await yielder.maybe();
        }
      }
    }
    kept++;
    if ((kept & 1023) === 1023 || out >= turnAt) {
      turnAt = out + TURN_ENTRIES;
      await yielder.maybe();
    }
  }
  offsets[n] = out;
  // Lists left empty by the documents dropped are left out.
  let m = 0;
  for (let i = 0; i < n; i++) if (sizes[i]! > 0) m++;
  if (m === n) return { ids: Uint32Array.from(all), offsets, ndocs: nd, docs, fps };
  const ids = new Uint32Array(m);
  const offs = new Uint32Array(m + 1);
  const nds = new Uint32Array(m);
  for (let i = 0, j = 0; i < n; i++) {
    if (sizes[i] === 0) continue;
    ids[j] = all[i]!;
    offs[j] = offsets[i]!;
    nds[j] = nd[i]!;
    j++;
  }
  offs[m] = out;
  return { ids, offsets: offs, ndocs: nds, docs, fps };
}
