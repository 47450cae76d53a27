// Segments: the immutable pieces an index's full-text structures are made of. A batch
// adds one segment holding the documents it added or replaced (their posting and prefix
// lists, and their records) and the docids it deleted; older segments are never rewritten
// by a batch, only merged with their neighbours. A document lives in the newest segment
// that holds or deletes it: `owner` says which, per docid.

import { decodeRecord, decodeTokens, encodeRecords, recordFieldCount, type DocRecord } from './doc-record.js';
import { buildArena, EMPTY_ARENA, listAt, mergeArenas, slotOf, type ListArena } from './list-arena.js';
import { extended } from './grown-lists.js';
import { docEnd, EMPTY_POSTING, knownPostingId, patchDistinct, seekDoc, type ListKeys, type Posting } from './postings.js';
import { touchInTurns, type Yielder } from '../../util/yielder.js';

export interface Segment {
  /** Its number, under which it is stored; never reused while it is live. */
  readonly seq: number;
  /** Docids whose content is here, ascending. */
  readonly docs: Uint32Array;
  /** Docids this segment removes from older segments, ascending. */
  readonly deleted: Uint32Array;
  readonly words: ListArena;
  readonly prefixes: ListArena | null;
  /** Record of `docs[i]`: `records[recordOffsets[i] .. recordOffsets[i + 1])` (doc-record.ts coding). */
  readonly recordOffsets: Uint32Array;
  readonly records: Uint8Array;
}

/** What decides a segment's weight in the merge policy: its posting entries. */
export function segmentSize(s: Segment): number {
  return s.words.docs.length + 1;
}

function searchSorted(arr: Uint32Array, v: number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < arr.length && arr[lo] === v ? lo : -1;
}

export function recordBytes(s: Segment, i: number): Uint8Array {
  return s.records.subarray(s.recordOffsets[i]!, s.recordOffsets[i + 1]!);
}

async function packRecords(n: number, bytesOf: (i: number) => Uint8Array, yielder: Yielder): Promise<{ recordOffsets: Uint32Array; records: Uint8Array }> {
  const recordOffsets = new Uint32Array(n + 1);
  for (let i = 0; i < n; i++) {
    recordOffsets[i + 1] = recordOffsets[i]! + bytesOf(i).length;
    if ((i & 4095) === 4095) await yielder.maybe();
  }
  const records = new Uint8Array(recordOffsets[n]!);
  for (let i = 0; i < n; i++) {
    records.set(bytesOf(i), recordOffsets[i]!);
    if ((i & 4095) === 4095) await yielder.maybe();
  }
  return { recordOffsets, records };
}

/** A segment from freshly extracted records (`docs` ascending, `recs[i]` the record of `docs[i]`). */
export async function buildSegment(
  seq: number,
  docs: Uint32Array,
  recs: readonly DocRecord[],
  deleted: Uint32Array,
  wordKeys: ListKeys,
  prefixKeys: ListKeys | null,
  yielder: Yielder,
): Promise<Segment> {
  const words = docs.length ? await buildArena(docs, (i) => recs[i]!, wordKeys, yielder) : EMPTY_ARENA;
  const prefixes = prefixKeys ? (docs.length ? await buildArena(docs, (i) => recs[i]!, prefixKeys, yielder) : EMPTY_ARENA) : null;
  return { seq, docs, deleted, words, prefixes, ...(await encodeRecords(docs.length, (i) => recs[i]!, yielder)) };
}

/**
 * One segment in place of the consecutive segments `run` (of `all`, oldest first), keeping
 * only their documents still alive in `view`. Deletions are kept for the segments older than
 * the run; a run starting at the oldest segment has nothing left to delete from.
 */
export async function mergeSegments(view: SegmentView, from: number, to: number, seq: number, yielder: Yielder): Promise<Segment> {
  const run = view.segments.slice(from, to);
  const idx = run.map((_, i) => from + i);
  const keep = (a: number, d: number) => view.ownerOf(d) === idx[a];
  const clean = idx.map((i) => view.deadCount(i) === 0);
  const words = await mergeArenas(run.map((s) => s.words), keep, clean, yielder);
  const withPrefixes = run.every((s) => s.prefixes !== null);
  const prefixes = withPrefixes ? await mergeArenas(run.map((s) => s.prefixes!), keep, clean, yielder) : null;
  // Live documents, ascending, each with the segment it lives in.
  const live: number[] = [];
  const where: number[] = [];
  const at: number[] = [];
  const heads = run.map(() => 0);
  for (;;) {
    let best = -1;
    let bestDoc = Infinity;
    for (let a = 0; a < run.length; a++) {
      const docs = run[a]!.docs;
      while (heads[a]! < docs.length && !keep(a, docs[heads[a]!]!)) heads[a]!++;
      if (heads[a]! < docs.length && docs[heads[a]!]! < bestDoc) {
        bestDoc = docs[heads[a]!]!;
        best = a;
      }
    }
    if (best < 0) break;
    live.push(bestDoc);
    where.push(best);
    at.push(heads[best]!++);
    if ((live.length & 16383) === 0) await yielder.maybe();
  }
  const deleted: number[] = [];
  if (from > 0) {
    const gone = new Set<number>();
    for (const s of run) for (const d of s.deleted) if (view.ownerOf(d) < 0) gone.add(d);
    deleted.push(...gone);
    deleted.sort((a, b) => a - b);
  }
  const packed = await packRecords(live.length, (i) => recordBytes(run[where[i]!]!, at[i]!), yielder);
  return {
    seq,
    docs: Uint32Array.from(live),
    deleted: Uint32Array.from(deleted),
    words,
    prefixes,
    ...packed,
  };
}

/** Which segment holds each docid, dead documents per segment, and the live docids of a view. */
interface ViewTables {
  owner: Int32Array;
  dead: Uint32Array;
  docids: Uint32Array;
}

/** The generation of the view that put a list in caches passed from view to view (0: the first). */
const insertedBy = new WeakMap<Posting, number>();

/** A list as the previous view read it, and the newest segment's list of the same word. */
interface Patch {
  old: Posting;
  add: Posting;
}

/**
 * `old` without the entries of the documents `removed` (ascending), with those of `add`, whose
 * documents are all live: the list a merge of every segment would give, made of copied runs.
 */
export function patched(old: Posting, removed: Uint32Array, add: Posting): Posting {
  const n = old.docs.length + add.docs.length;
  const docs = new Uint32Array(n);
  const fps = new Uint32Array(n);
  let ndocs = old.ndocs + add.ndocs;
  let i = 0;
  let j = 0;
  let r = 0;
  let k = 0;
  const take = (p: Posting, from: number, to: number): void => {
    docs.set(p.docs.subarray(from, to), k);
    fps.set(p.fps.subarray(from, to), k);
    k += to - from;
  };
  while (i < old.docs.length) {
    const nextAdd = j < add.docs.length ? add.docs[j]! : Infinity;
    const nextRemoved = r < removed.length ? removed[r]! : Infinity;
    const b = Math.min(nextAdd, nextRemoved);
    if (b === Infinity) break;
    const at = seekDoc(old, b, i);
    take(old, i, at);
    i = at;
    if (b === nextRemoved) {
      r++;
      if (i < old.docs.length && old.docs[i] === b) {
        ndocs--;
        i = docEnd(old, i);
      }
    }
    if (b === nextAdd) {
      const e = docEnd(add, j);
      take(add, j, e);
      j = e;
    }
  }
  take(old, i, old.docs.length);
  take(add, j, add.docs.length);
  if (k === 0) return EMPTY_POSTING;
  const out = k === n ? { docs, fps, ndocs } : { docs: docs.slice(0, k), fps: fps.slice(0, k), ndocs };
  patchDistinct(out.docs, old.docs, removed, add);
  return out;
}

/**
 * The segments, in docid order, whose lists a list read across segments holds one after the
 * other (see laidEndToEnd): what a later view may extend it with rather than copy it again.
 */
const laidFrom = new WeakMap<Posting, readonly Segment[]>();

/**
 * After segments `run` were merged into `merged` (their live entries, which the lists laid from
 * them hold: a list is only kept while its segments' documents are), the lists `view` holds
 * laid end to end name `merged` in their place, so that they can still be extended.
 */
async function relaid(view: SegmentView, run: readonly Segment[], merged: Segment, yielder: Yielder): Promise<void> {
  const gone = new Set(run);
  let n = 0;
  for (const p of view.laidLists()) {
    const segs = laidFrom.get(p)!;
    if ((++n & 4095) === 0) await yielder.maybe();
    if (!segs.some((s) => gone.has(s))) continue;
    const out: Segment[] = [];
    for (const s of segs) {
      if (!gone.has(s)) out.push(s);
      else if (out[out.length - 1] !== merged) out.push(merged);
    }
    // The merged run must have been read whole, in one stretch of docids.
    if (out.filter((s) => s === merged).length === 1) laidFrom.set(p, out);
    else laidFrom.delete(p);
  }
}

/** Merged lists kept per view, in posting entries (8 bytes each). */
const CACHED_ENTRIES = 8 << 20;
/** Past this many removed documents a new view reads its lists afresh (carrying costs a search per list and document). */
const CARRY_MAX_REMOVED = 256;
/**
 * Batches of more documents start their state's caches afresh: they change most of what was
 * cached, and carrying through an import's batches kept every cache at its budget (the scale
 * import of 300,000 documents in batches of 50,000 peaked 0.13-0.28 GiB higher).
 */
const CARRY_MAX_DOCS = 1024;

/** Whether the state a batch of this segment makes carries the previous state's caches (CARRY_MAX_DOCS). */
export function carriesCaches(seg: Segment): boolean {
  return seg.docs.length + seg.deleted.length <= CARRY_MAX_DOCS;
}
/**
 * Lists a view passes on at most, the newest (the caches hold lists in the order they were
 * first read): what searches read stays from write to write, and would otherwise grow without
 * bound on an index that is written to all the time.
 */
const CARRY_MAX_LISTS = 65_536;

/**
 * The segments of one published state read as one index: a word's list is the union of its
 * lists in every segment, without the documents a newer segment replaced or deleted.
 * Immutable; a batch makes a new view.
 */
export class SegmentView {
  /** Segment index per docid (-1: no document), one past the highest docid known. */
  private readonly owner: Int32Array;
  private readonly dead: Uint32Array;
  // The caches pass from view to view (see carryAdding): shared, and no longer written by the
  // view they came from.
  private wordCache = new Map<number, Posting>();
  private prefixCache = new Map<number, Posting>();
  /** Set once the caches passed to the next view: this view then reads them without adding to them. */
  private frozen = false;
  /** How many views the caches passed through before this one (what a frozen view may read). */
  private generation = 0;
  /** The lists of the caches that are merged copies, not views over one segment. */
  private copies = new Set<Posting>();
  private cached = 0;
  /** Lists the previous view had read that the newest segment changed, patched on first use. */
  private readonly wordPatches = new Map<number, Patch>();
  private readonly prefixPatches = new Map<number, Patch>();
  /** The documents the newest segment removed, ascending (what patches take out). */
  private patchRemoved: Uint32Array = new Uint32Array(0);
  /** The number of the previous view's list each patched list was made from (not the list: it would stay alive). */
  private readonly patchedFrom = new WeakMap<Posting, number>();
  /**
   * After a batch too large to carry the caches that only added documents: the numbers of the
   * lists the previous view had read, by word and by prefix id. A list read here is the
   * previous one plus the batch's entries, and names it as its predecessor (see predecessorOf).
   */
  private priorWords: Map<number, number> | null = null;
  private priorPrefixes: Map<number, number> | null = null;
  /**
   * After such a batch, the lists the previous view had read laid end to end across segments,
   * by word and by prefix id: a list read here that holds them and the batch's entries extends
   * them in place (grown-lists.ts). Each is taken by the first read of its word.
   */
  private baseWords: Map<number, Posting> | null = null;
  private basePrefixes: Map<number, Posting> | null = null;
  /** Live docids, ascending. */
  readonly docids: Uint32Array;

  constructor(
    readonly segments: readonly Segment[],
    capacity: number,
    known?: ViewTables,
  ) {
    if (known) {
      this.owner = known.owner;
      this.dead = known.dead;
      this.docids = known.docids;
      return;
    }
    const owner = new Int32Array(capacity).fill(-1);
    segments.forEach((s, i) => {
      for (const d of s.deleted) if (d < capacity) owner[d] = -1;
      for (const d of s.docs) owner[d] = i;
    });
    const dead = new Uint32Array(segments.length);
    let live = 0;
    segments.forEach((s, i) => {
      for (const d of s.docs) if (owner[d] !== i) dead[i]!++;
      live += s.docs.length - dead[i]!;
    });
    const docids = new Uint32Array(live);
    for (let d = 0, k = 0; d < capacity; d++) if (owner[d]! >= 0) docids[k++] = d;
    this.owner = owner;
    this.dead = dead;
    this.docids = docids;
  }

  static empty(): SegmentView {
    return new SegmentView([], 0);
  }

  /** One past the highest docid a segment holds. */
  get capacity(): number {
    return this.owner.length;
  }

  ownerOf(d: number): number {
    return d < this.owner.length ? this.owner[d]! : -1;
  }

  /** Documents of segment `i` that newer segments replaced or deleted. */
  deadCount(i: number): number {
    return this.dead[i]!;
  }

  /**
   * A view with `seg` added as the newest segment. Its tables are this view's, updated for the
   * segment's documents, in fresh memory touched in turns (3.5 ms per MiB on some virtual
   * machines): built again from every segment in one go, they held the thread 80-180 ms at
   * 300,000 documents during an import.
   */
  async adding(seg: Segment, yielder: Yielder): Promise<SegmentView> {
    let cap = this.capacity;
    if (seg.docs.length > 0) cap = Math.max(cap, seg.docs[seg.docs.length - 1]! + 1);
    const i = this.segments.length;
    const owner = new Int32Array(cap);
    await touchInTurns(owner, yielder);
    owner.set(this.owner);
    owner.fill(-1, this.owner.length);
    const dead = new Uint32Array(i + 1);
    dead.set(this.dead);
    // Live documents the segment deletes or replaces: each one is dead where it lived.
    let removed = 0;
    const gone: number[] = [];
    for (let k = 0; k < seg.deleted.length; k++) {
      const d = seg.deleted[k]!;
      const o = d < cap ? owner[d]! : -1;
      if (o >= 0) {
        dead[o]!++;
        owner[d] = -1;
        if (removed++ < CARRY_MAX_REMOVED) gone.push(d);
      }
    }
    const deletedLive = removed;
    for (let k = 0; k < seg.docs.length; k++) {
      const d = seg.docs[k]!;
      const o = owner[d]!;
      if (o >= 0) {
        dead[o]!++;
        if (removed++ < CARRY_MAX_REMOVED) gone.push(d);
      }
      owner[d] = i;
    }
    await yielder.maybe();
    const old = this.docids;
    const docs = seg.docs;
    // Only live documents replaced (a write of a few): the live documents are the same, and the
    // previous view's table is shared (views never change it).
    const same = deletedLive === 0 && removed === docs.length;
    const docids = same ? old : new Uint32Array(old.length - removed + docs.length);
    if (!same) {
      await touchInTurns(docids, yielder);
      if (removed === 0 && (old.length === 0 || docs.length === 0 || docs[0]! > old[old.length - 1]!)) {
        // An import's batch: new documents after the others.
        docids.set(old);
        docids.set(docs, old.length);
      } else {
        // Both ascending; an old document whose owner changed was deleted, or comes back with `docs`.
        const before = this.owner;
        let a = 0;
        let b = 0;
        let k = 0;
        while (a < old.length || b < docs.length) {
          if (a < old.length && owner[old[a]!] !== before[old[a]!]) a++;
          else if (b >= docs.length || (a < old.length && old[a]! < docs[b]!)) docids[k++] = old[a++]!;
          else docids[k++] = docs[b++]!;
          if ((k & 0xffff) === 0) await yielder.maybe();
        }
      }
    }
    const next = new SegmentView([...this.segments, seg], cap, { owner, dead, docids });
    if (removed <= CARRY_MAX_REMOVED && carriesCaches(seg)) {
      await this.carryAdding(next, seg, Uint32Array.from(gone).sort(), yielder);
    } else if (removed === 0) {
      await this.linkLists(next, yielder);
    }
    return next;
  }

  /**
   * A view with segments `[from, to)` replaced by `merged`, which holds their live documents:
   * owners are renumbered, the live documents stay. Built from every segment again if `merged`
   * holds anything else.
   */
  async replacing(from: number, to: number, merged: Segment, yielder: Yielder): Promise<SegmentView> {
    const segments = [...this.segments.slice(0, from), merged, ...this.segments.slice(to)];
    const shift = to - from - 1;
    const before = this.owner;
    const owner = new Int32Array(before.length);
    await touchInTurns(owner, yielder);
    for (let d = 0; d < before.length; d++) {
      const o = before[d]!;
      owner[d] = o < from ? o : o < to ? from : o - shift;
      if ((d & 0xffff) === 0xffff) await yielder.maybe();
    }
    let liveInRun = 0;
    for (let j = from; j < to; j++) liveInRun += this.segments[j]!.docs.length - this.dead[j]!;
    let held = merged.docs.length === liveInRun;
    for (let k = 0; held && k < merged.docs.length; k++) held = owner[merged.docs[k]!] === from;
    if (!held) return this.passLinks(new SegmentView(segments, this.capacity));
    const dead = new Uint32Array(segments.length);
    dead.set(this.dead.subarray(0, from));
    dead.set(this.dead.subarray(to), from + 1);
    const next = this.passLinks(new SegmentView(segments, this.capacity, { owner, dead, docids: this.docids }));
    next.baseWords = this.baseWords;
    next.basePrefixes = this.basePrefixes;
    await this.carryReplacing(next, from, to, yielder);
    await relaid(next, this.segments.slice(from, to), merged, yielder);
    return next;
  }

  word(id: number): Posting {
    return this.list(id, (s) => s.words, this.wordCache, this.wordPatches, this.priorWords, this.baseWords);
  }

  prefix(id: number): Posting {
    return this.list(id, (s) => s.prefixes ?? EMPTY_ARENA, this.prefixCache, this.prefixPatches, this.priorPrefixes, this.basePrefixes);
  }

  /** The number (postingId) of the previous view's list that `p` was patched from (see carryAdding), if it had one. */
  predecessorOf(p: Posting): number | undefined {
    return this.patchedFrom.get(p);
  }

  /**
   * Whether word `id` has a live entry: found in a segment no newer one changed, or as the
   * first live entry of its list in one another changed, without merging its lists.
   */
  hasWord(id: number): boolean {
    const segs = this.segments;
    for (let i = 0; i < segs.length; i++) {
      if (this.dead[i] === 0 && slotOf(segs[i]!.words, id) >= 0) return true;
    }
    for (let i = 0; i < segs.length; i++) {
      if (this.dead[i] === 0) continue;
      const a = segs[i]!.words;
      const slot = slotOf(a, id);
      if (slot < 0) continue;
      for (let e = a.offsets[slot]!, end = a.offsets[slot + 1]!; e < end; e++) if (this.owner[a.docs[e]!] === i) return true;
    }
    return false;
  }

  private list(
    id: number, arenaOf: (s: Segment) => ListArena, cache: Map<number, Posting>, patches: Map<number, Patch>,
    prior: Map<number, number> | null, bases: Map<number, Posting> | null,
  ): Posting {
    const hit = cache.get(id);
    // A frozen view (a search still running on an older state) reads no list a newer view added.
    if (hit && (!this.frozen || (insertedBy.get(hit) ?? 0) <= this.generation)) return hit;
    const base = bases?.get(id);
    if (base !== undefined) bases!.delete(id);
    const patch = patches.get(id);
    if (patch) {
      patches.delete(id);
      const out = this.patch(patch);
      const before = knownPostingId(patch.old);
      if (out !== EMPTY_POSTING && out !== patch.old && before !== undefined) this.patchedFrom.set(out, before);
      if (!this.frozen && out !== EMPTY_POSTING && this.cached + out.docs.length <= CACHED_ENTRIES) {
        this.keepCopy(out);
        this.keep(cache, id, out);
      }
      return out;
    }
    const parts: { p: Posting; seg: number }[] = [];
    const segs = this.segments;
    for (let i = 0; i < segs.length; i++) {
      const a = arenaOf(segs[i]!);
      const slot = slotOf(a, id);
      if (slot >= 0) parts.push({ p: listAt(a, slot), seg: i });
    }
    let out: Posting;
    if (parts.length === 0) out = EMPTY_POSTING;
    else if (parts.length === 1 && this.allLive(parts[0]!.p, parts[0]!.seg)) out = parts[0]!.p;
    else out = this.union(parts, base);
    const before = prior?.get(id);
    if (before !== undefined && out !== EMPTY_POSTING && knownPostingId(out) !== before) this.patchedFrom.set(out, before);
    // Views over a segment cost nothing to keep; merged copies are kept within a budget.
    if (!this.frozen && out !== EMPTY_POSTING && (parts.length === 1 || this.cached + out.docs.length <= CACHED_ENTRIES)) {
      if (parts.length > 1) this.keepCopy(out);
      this.keep(cache, id, out);
    }
    return out;
  }

  /**
   * A patched list: after a batch that only added documents above the old list's, the old list
   * extended in place with the batch's entries; a merge of copied runs otherwise.
   */
  private patch({ old, add }: Patch): Posting {
    const appends =
      this.patchRemoved.length === 0 && old.docs.length > 0 && (add.docs.length === 0 || add.docs[0]! > old.docs[old.docs.length - 1]!);
    if (!appends) return patched(old, this.patchRemoved, add);
    const out = extended(old, [add]);
    // `add` is the newest segment's list: a list laid end to end stays so, one segment longer.
    const from = laidFrom.get(old);
    if (from !== undefined && out !== old) laidFrom.set(out, [...from, this.segments[this.segments.length - 1]!]);
    return out;
  }

  private keep(cache: Map<number, Posting>, id: number, p: Posting): void {
    cache.set(id, p);
    if (this.generation > 0) insertedBy.set(p, this.generation);
  }

  private keepCopy(p: Posting): void {
    this.copies.add(p);
    this.cached += p.docs.length;
  }

  /**
   * Passes the lists this view has read to `next`, this view plus `seg`: a state's first
   * searches after a one-document write merged again every list they read (the longdocs
   * dictionary: a third more time over 1,600 queries). The caches themselves pass, so that a
   * write costs what it changed, not what was cached: the lists `seg` adds to or removes a
   * document of (`removed`, ascending: the live documents `seg` deleted or replaced) leave
   * them, to be patched on `next`'s first use by copied runs of the old list instead of a
   * merge of every segment's list entry by entry. The word lists holding a removed document
   * are those of its old record's tokens, as lists are built from them. This view, still
   * searched until `next` is published, stops adding to the caches: what it would add could
   * be wrong for `next`.
   */
  private async carryAdding(next: SegmentView, seg: Segment, removed: Uint32Array, yielder: Yielder): Promise<void> {
    if (this.wordCache.size === 0 && this.prefixCache.size === 0) return;
    this.handOver(next);
    next.patchRemoved = removed;
    const words = next.wordCache;
    const out = (id: number, cache: Map<number, Posting>, patches: Map<number, Patch>, add: Posting): void => {
      const p = cache.get(id);
      if (p === undefined) return;
      cache.delete(id);
      next.dropCopy(p);
      patches.set(id, { old: p, add });
    };
    const ids = seg.words.ids;
    for (let k = 0; k < ids.length; k++) {
      out(ids[k]!, words, next.wordPatches, listAt(seg.words, k));
      if ((k & 4095) === 4095) await yielder.maybe();
    }
    for (const d of removed) {
      const t = this.tokens(d);
      if (t) for (let j = 0; j < t.length; j += 2) out(t[j]!, words, next.wordPatches, EMPTY_POSTING);
    }
    // Few prefix lists: each is looked at.
    const arena = seg.prefixes ?? EMPTY_ARENA;
    const holdsRemoved = (p: Posting): boolean => {
      for (const d of removed) {
        const at = seekDoc(p, d);
        if (at < p.docs.length && p.docs[at] === d) return true;
      }
      return false;
    };
    for (const [id, p] of [...next.prefixCache]) {
      const slot = slotOf(arena, id);
      if (slot >= 0 || holdsRemoved(p)) out(id, next.prefixCache, next.prefixPatches, slot >= 0 ? listAt(arena, slot) : EMPTY_POSTING);
    }
    await next.trimCaches(yielder);
  }

  /**
   * Passes the lists to `next`, whose segments `[from, to)` were merged into one holding the
   * same live entries: lists read as views over those segments leave the caches (kept, they
   * would keep the merged segments' memory), and so do the patches reading them.
   */
  private async carryReplacing(next: SegmentView, from: number, to: number, yielder: Yielder): Promise<void> {
    if (this.wordCache.size + this.prefixCache.size + this.wordPatches.size + this.prefixPatches.size === 0) return;
    const gone = new Set<ArrayBufferLike>();
    for (const s of this.segments.slice(from, to)) {
      gone.add(s.words.docs.buffer);
      if (s.prefixes) gone.add(s.prefixes.docs.buffer);
    }
    this.handOver(next);
    next.patchRemoved = this.patchRemoved;
    const held = (p: Posting): boolean => !next.copies.has(p) && gone.has(p.docs.buffer);
    for (const cache of [next.wordCache, next.prefixCache]) {
      let n = 0;
      for (const [id, p] of cache) {
        if (held(p)) cache.delete(id);
        if ((++n & 4095) === 0) await yielder.maybe();
      }
    }
    for (const [patches, nextPatches] of [[this.wordPatches, next.wordPatches], [this.prefixPatches, next.prefixPatches]] as const) {
      for (const [id, patch] of patches) if (!held(patch.old) && !held(patch.add)) nextPatches.set(id, patch);
    }
  }

  /**
   * Tells `next`, this view plus a segment of new documents too large to carry the caches
   * (CARRY_MAX_DOCS), which lists this view had read: each names the list `next` reads for
   * the same word as its predecessor, so that what searches kept of the old one (a common
   * word's scan, 100 ms at 300,000 documents) is patched with the batch's documents instead
   * of computed again. Numbers only: the old lists stay with the old view.
   */
  private async linkLists(next: SegmentView, yielder: Yielder): Promise<void> {
    const ids = async (cache: Map<number, Posting>): Promise<Map<number, number> | null> => {
      const out = new Map<number, number>();
      let n = 0;
      for (const [id, p] of cache) {
        const known = knownPostingId(p);
        if (known !== undefined) out.set(id, known);
        if ((++n & 4095) === 0) await yielder.maybe();
      }
      return out.size > 0 ? out : null;
    };
    next.priorWords = await ids(this.wordCache);
    next.priorPrefixes = await ids(this.prefixCache);
    // The lists read here, then those this view was given and did not read (a word searched
    // now and then, not after every batch), within half the caches' budget each.
    const laid = (cache: Map<number, Posting>, older: Map<number, Posting> | null): Map<number, Posting> | null => {
      const out = new Map<number, Posting>();
      let entries = 0;
      for (const [id, p] of cache) {
        if (!laidFrom.has(p)) continue;
        out.set(id, p);
        entries += p.docs.length;
      }
      if (older !== null) {
        for (const [id, p] of older) {
          if (entries >= CACHED_ENTRIES / 2) break;
          if (out.has(id)) continue;
          out.set(id, p);
          entries += p.docs.length;
        }
      }
      return out.size > 0 ? out : null;
    };
    next.baseWords = laid(this.wordCache, this.baseWords);
    next.basePrefixes = laid(this.prefixCache, this.basePrefixes);
  }

  /** `next`, which merged some of this view's segments, with the predecessors this view was told of (linkLists). */
  private passLinks(next: SegmentView): SegmentView {
    next.priorWords = this.priorWords;
    next.priorPrefixes = this.priorPrefixes;
    return next;
  }

  /** The lists this view holds (cached, or given to extend) that are laid end to end across segments. */
  *laidLists(): Generator<Posting> {
    for (const m of [this.wordCache, this.prefixCache, this.baseWords, this.basePrefixes]) {
      if (m !== null) for (const p of m.values()) if (laidFrom.has(p)) yield p;
    }
  }

  /** Gives `next` this view's caches; this view reads them from now on without adding to them. */
  private handOver(next: SegmentView): void {
    this.frozen = true;
    next.generation = this.generation + 1;
    next.wordCache = this.wordCache;
    next.prefixCache = this.prefixCache;
    next.copies = this.copies;
    next.cached = this.cached;
  }

  private dropCopy(p: Posting): void {
    if (this.copies.delete(p)) this.cached -= p.docs.length;
  }

  /** Drops the oldest lists past CARRY_MAX_LISTS. */
  private async trimCaches(yielder: Yielder): Promise<void> {
    for (const cache of [this.wordCache, this.prefixCache]) {
      let excess = cache.size - CARRY_MAX_LISTS;
      for (const [id, p] of cache) {
        if (excess-- <= 0) break;
        cache.delete(id);
        this.dropCopy(p);
        if ((excess & 4095) === 0) await yielder.maybe();
      }
    }
  }

  /**
   * The lists one after the other, when no newer segment replaced or deleted a document of
   * theirs and their docids do not interleave: segments of new documents (an import's
   * batches) hold docids above the older ones', and their union is then a copy, not a merge.
   * Null otherwise.
   */
  private laidEndToEnd(parts: { p: Posting; seg: number }[], base: Posting | undefined): Posting | null {
    if (parts.some(({ p, seg }) => this.dead[seg] !== 0 || p.docs.length === 0)) return null;
    const order = [...parts].sort((a, b) => a.p.docs[0]! - b.p.docs[0]!);
    for (let k = 1; k < order.length; k++) {
      const prev = order[k - 1]!.p.docs;
      if (prev[prev.length - 1]! >= order[k]!.p.docs[0]!) return null;
    }
    const segs = order.map(({ seg }) => this.segments[seg]!);
    const from = base === undefined ? undefined : laidFrom.get(base);
    // The previous view's list of the same segments' lists, extended with the newer ones'; else
    // a copy with room for the next batches' entries (grown-lists.ts).
    const out =
      from !== undefined && from.length <= segs.length && from.every((s, k) => s === segs[k])
        ? extended(base!, order.slice(from.length).map(({ p }) => p))
        : extended(order[0]!.p, order.slice(1).map(({ p }) => p));
    laidFrom.set(out, segs);
    return out;
  }

  /** No document of the list was replaced or deleted since (then the list is used as it is). */
  private allLive(p: Posting, seg: number): boolean {
    if (this.dead[seg] === 0) return true;
    const owner = this.owner;
    for (let i = 0; i < p.docs.length; i++) if (owner[p.docs[i]!] !== seg) return false;
    return true;
  }

  private union(parts: { p: Posting; seg: number }[], base: Posting | undefined): Posting {
    const laid = this.laidEndToEnd(parts, base);
    if (laid !== null) return laid;
    const owner = this.owner;
    let n = 0;
    for (const { p, seg } of parts) {
      if (this.dead[seg] === 0) n += p.docs.length;
      else for (let i = 0; i < p.docs.length; i++) if (owner[p.docs[i]!] === seg) n++;
    }
    const docs = new Uint32Array(n);
    const fps = new Uint32Array(n);
    const heads = parts.map(() => 0);
    let out = 0;
    let ndocs = 0;
    for (;;) {
      let best = -1;
      let bestDoc = Infinity;
      for (let k = 0; k < parts.length; k++) {
        const { p, seg } = parts[k]!;
        while (heads[k]! < p.docs.length && owner[p.docs[heads[k]!]!] !== seg) heads[k]!++;
        if (heads[k]! < p.docs.length && p.docs[heads[k]!]! < bestDoc) {
          bestDoc = p.docs[heads[k]!]!;
          best = k;
        }
      }
      if (best < 0) break;
      const p = parts[best]!.p;
      let e = heads[best]!;
      while (e < p.docs.length && p.docs[e] === bestDoc) {
        docs[out] = bestDoc;
        fps[out++] = p.fps[e++]!;
      }
      heads[best] = e;
      ndocs++;
    }
    return n === 0 ? EMPTY_POSTING : { docs, fps, ndocs };
  }

  /** The encoded record of a live document, or undefined. */
  private bytesOf(d: number): Uint8Array | undefined {
    const i = this.ownerOf(d);
    if (i < 0) return undefined;
    const s = this.segments[i]!;
    return recordBytes(s, searchSorted(s.docs, d));
  }

  /** The record of a live document (decoded on each call: callers ask for few). */
  record(d: number): DocRecord | undefined {
    const bytes = this.bytesOf(d);
    return bytes && decodeRecord(bytes);
  }

  /** The token pairs of a live document's record (decoded on each call, into `alloc`'s array if given), or undefined. */
  tokens(d: number, alloc?: (n: number) => Uint32Array): Uint32Array | undefined {
    const bytes = this.bytesOf(d);
    return bytes && decodeTokens(bytes, alloc);
  }

  /** Words in field `fid` of a live document (0 for none, or for a document not live). */
  fieldWordCount(d: number, fid: number): number {
    const bytes = this.bytesOf(d);
    return bytes ? recordFieldCount(bytes, fid) : 0;
  }

  /** Calls `fn(docid, bytes)` with the encoded record of every live document, in docid order per segment. */
  forEachRecord(fn: (d: number, bytes: Uint8Array) => void): void {
    this.segments.forEach((s, i) => {
      for (let k = 0; k < s.docs.length; k++) if (this.owner[s.docs[k]!] === i) fn(s.docs[k]!, recordBytes(s, k));
    });
  }
}
