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

interface Room {
  docs: Uint32Array;
  fps: Uint32Array;
  /** Entries written; only the list ending there may extend them. */
  used: number;
}

const roomOf = new WeakMap<Uint32Array, Room>();

/** Room given to a copy, as a share of its length: unwritten, large ones' pages are never mapped. */
const GROWTH = 1.5;
/**
 * Shorter lists are copied exactly: copying them again costs little, and small buffers come
 * from the allocator's pools, zeroed (so resident) whole.
 */
const ROOM_MIN_ENTRIES = 4096;

/** Whether `p` ends where its memory's written entries end, so that entries can follow it in place. */
function extendable(p: Posting): Room | null {
  const room = roomOf.get(p.docs);
  return room !== undefined && room.used === p.docs.length ? room : null;
}

/**
 * `base` followed by the entries of `adds` (each holding docids above all of `base` and of the
 * adds before it): written after `base` in its memory when there is room, else into a copy with
 * room for the next ones. The distinct documents follow alike, if known for `base`.
 */
export function extended(base: Posting, adds: readonly Posting[]): Posting {
  let more = 0;
  let ndocs = base.ndocs;
  for (const a of adds) {
    more += a.docs.length;
    ndocs += a.ndocs;
  }
  if (more === 0) return base;
  const n = base.docs.length + more;
  let room = extendable(base);
  if (room === null || room.docs.length < n) {
    const cap = n >= ROOM_MIN_ENTRIES ? Math.ceil(n * GROWTH) : n;
    const next: Room = { docs: new Uint32Array(cap), fps: new Uint32Array(cap), used: base.docs.length };
    next.docs.set(base.docs);
    next.fps.set(base.fps);
    room = next;
  }
  let at = base.docs.length;
  for (const a of adds) {
    room.docs.set(a.docs, at);
    room.fps.set(a.fps, at);
    at += a.docs.length;
  }
  room.used = n;
  const docs = room.docs.subarray(0, n);
  roomOf.set(docs, room);
  extendDistinct(base.docs, docs, adds);
  return { docs, fps: room.fps.subarray(0, n), ndocs };
}

interface DistinctRoom {
  docs: Uint32Array;
  used: number;
}

const distinctRoomOf = new WeakMap<Uint32Array, DistinctRoom>();

/** Registers the distinct documents of `docs` (`base` then `adds`), if those of `base` were computed, extended alike. */
function extendDistinct(base: Uint32Array, docs: Uint32Array, adds: readonly Posting[]): void {
  const old = knownDistinct(base);
  if (old === undefined) return;
  if (old === base && adds.every((a) => a.ndocs === a.docs.length)) {
    // One entry per document, before and after: the list is its own.
    registerDistinct(docs, docs);
    return;
  }
  let more = 0;
  const parts = adds.map((a) => {
    const d = distinctDocs(a.docs, a.ndocs);
    more += d.length;
    return d;
  });
  const n = old.length + more;
  let room = distinctRoomOf.get(old);
  if (room === undefined || room.used !== old.length || room.docs.length < n) {
    room = { docs: new Uint32Array(n >= ROOM_MIN_ENTRIES ? Math.ceil(n * GROWTH) : n), used: old.length };
    room.docs.set(old);
  }
  let at = old.length;
  for (const p of parts) {
    room.docs.set(p, at);
    at += p.length;
  }
  room.used = n;
  const out = room.docs.subarray(0, n);
  distinctRoomOf.set(out, room);
  registerDistinct(docs, out);
}
