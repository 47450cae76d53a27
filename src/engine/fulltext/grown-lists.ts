// Lists that grow in place. A view reads a word found in several segments as one copy of
// their lists (segment.ts); while an index is imported, each batch adds a segment of higher
// docids, and the next view copied the word's every entry again. Copying costs little, but
// the copy lands in fresh memory, and on the virtual machines this runs on the first write
// to a page costs 1-5 ms per MiB: at a million documents a common word's first search after
// each batch spent 50-80 ms copying its list. A copy the next view extends is instead kept
// with room to spare: the next list is the same memory, longer, with the batch's entries
// written after the old ones. Lists never change: an older view reads a prefix of that
// memory, and nothing is ever written there again. Only one list may extend a copy (`used`):
// a second successor of a view (a batch staged and then dropped) copies.

import { distinctDocs, knownDistinct, registerDistinct, type Posting } from './postings.js';

/** Parallel arrays with room past their written entries. */
interface Room {
  arrays: Uint32Array[];
  /** Entries written; only the arrays ending there may be extended. */
  used: number;
}

/** Rooms by the first of the arrays read from them: lists' (docs, fps), and their distinct documents. */
const listRooms = new WeakMap<Uint32Array, Room>();
const distinctRooms = new WeakMap<Uint32Array, Room>();

/** Room given to a copy, as a share of its length: unwritten, large ones' pages are never mapped. */
const GROWTH = 1.5;
/**
 * Shorter lists are copied exactly: copying them again costs little, and small buffers come
 * from the allocator's pools, zeroed (so resident) whole.
 */
const ROOM_MIN_ENTRIES = 4096;

/**
 * `olds` (parallel arrays of one length) each followed by its arrays in `adds` (`adds[k][j]`
 * for `olds[j]`): written after them in their room when they end where it was written up to
 * and it holds them, else into a fresh room with space for the next ones.
 */
function appended(rooms: WeakMap<Uint32Array, Room>, olds: Uint32Array[], adds: Uint32Array[][]): Uint32Array[] {
  const len = olds[0]!.length;
  let n = len;
  for (const a of adds) n += a[0]!.length;
  let room = rooms.get(olds[0]!);
  if (room === undefined || room.used !== len || room.arrays[0]!.length < n) {
    const cap = n >= ROOM_MIN_ENTRIES ? Math.ceil(n * GROWTH) : n;
    room = {
      arrays: olds.map((o) => {
        const a = new Uint32Array(cap);
        a.set(o);
        return a;
      }),
      used: len,
    };
  }
  let at = len;
  for (const a of adds) {
    for (let j = 0; j < a.length; j++) room.arrays[j]!.set(a[j]!, at);
    at += a[0]!.length;
  }
  room.used = n;
  const out = room.arrays.map((a) => a.subarray(0, n));
  rooms.set(out[0]!, room);
  return out;
}

/**
 * `base` followed by the entries of `adds` (each holding docids above all of `base` and of the
 * adds before it): written after `base` in its memory when there is room, else into a copy with
 * room for the next ones. The distinct documents follow alike, if known for `base`.
 */
export function extended(base: Posting, adds: readonly Posting[]): Posting {
  let ndocs = base.ndocs;
  for (const a of adds) ndocs += a.ndocs;
  if (adds.every((a) => a.docs.length === 0)) return base;
  const [docs, fps] = appended(listRooms, [base.docs, base.fps], adds.map((a) => [a.docs, a.fps]));
  extendDistinct(base.docs, docs!, adds);
  return { docs: docs!, fps: fps!, ndocs };
}

/** Registers the distinct documents of `docs` (`base` then `adds`), if those of `base` were computed, extended alike. */
function extendDistinct(base: Uint32Array, docs: Uint32Array, adds: readonly Posting[]): void {
  const old = knownDistinct(base);
  if (old === undefined) return;
  if (old === base && adds.every((a) => a.ndocs === a.docs.length)) {
    // One entry per document, before and after: the list is its own.
    registerDistinct(docs, docs);
    return;
  }
  const [out] = appended(distinctRooms, [old], adds.map((a) => [distinctDocs(a.docs, a.ndocs)]));
  registerDistinct(docs, out!);
}
