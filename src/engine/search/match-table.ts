// One pass over the posting lists of every unit fills, per (document, unit), what the
// ranking rules need: the fewest typos, and among the derivations with that many typos
// the best attribute weight and the best word-position cost, plus exactness flags.
// Arrays are indexed by docid and reused between queries (only touched slots are reset),
// so a query costs time proportional to the postings it reads, not to the index size.

import { fieldWordCountIn, fieldWordTable, type IndexState } from '../fulltext/index-state.js';
import type { Source, Unit } from './derivations.js';
import { WordUnitMap } from './word-map.js';
import type { MatchBuffers, SearchScratch } from './scratch.js';
import { distinctDocs, EMPTY_POSTING, entryRanges, gallop, postingId, type Posting } from '../fulltext/postings.js';
import { PendingTable, type PendingEntry } from './pending-entries.js';

import {
  COST_AT_0, EXACT_AT_START, EXACT_BITS, EXACT_PRESENT, EXACT_SHIFT, EXACT_WHOLE_FIELD, FID_MAX, FID_SHIFT, merge,
  positionCost, POS_MASK, POS_SHIFT, TYPO_MASK,
} from './slot.js';

export { bucketedPosition, costFromDistance, EXACT_AT_START, EXACT_PRESENT, EXACT_WHOLE_FIELD } from './slot.js';

export interface ScanOptions {
  /** Weight per field id for this query; -1 when the field is not searched. */
  weights: Int32Array;
  /**
   * With `attributesToSearchOn`, the weights of every searchable field: as in the
   * reference, the searched fields pick the candidates and their typo counts, while the
   * attribute, position, exactness and proximity costs read every searchable field (at
   * the typo count the searched fields gave). Null when every searchable field is searched.
   */
  rankWeights?: Int32Array | null;
  /** Fields where only exact (zero-typo) derivations count. */
  exactFields: Uint8Array;
  /** Documents that may match, by docid (1; negated words and the filter leave the others out), or null for all. */
  admitted: Uint8Array | null;
  /**
   * Every candidate holds the first term (strategies `last` without phrases, and `all`):
   * other units then only mark documents the first term's units marked.
   */
  anchored?: boolean;
}

/** A one-unit scan kept in a state's memo: its documents (ascending) and their slots. */
export interface KeptScan extends PendingEntry {
  docs: Uint32Array;
  values: Uint32Array;
}

/** Scans reading fewer posting entries than this are cheap enough to redo. */
const CACHED_SCAN_MIN_ENTRIES = 20_000;
/** Documents kept over all scans of one state: 4 M × 8 bytes at most. */
const KEPT_SCAN_MAX_DOCS = 4_000_000;
/** The state memo's entry holding the kept scans. */
export const KEPT_SCANS = 'scans';

/**
 * The unit scans a state keeps, by what they read (see unitScanKey). Carried to the state
 * after a batch: a scan whose lists the batch left alone is found under the same key; one
 * whose lists were patched is found through their predecessors and patched in turn, its
 * documents the batch changed scanned again (a one-letter prefix's scan of the longdocs
 * dictionary took 15-20 ms in the first search after each write).
 */
export type KeptScanTable = PendingTable<KeptScan>;

function scanTable(state: IndexState): KeptScanTable {
  let t = state.memo.get(KEPT_SCANS) as KeptScanTable | undefined;
  if (!t) state.memo.set(KEPT_SCANS, (t = new PendingTable<KeptScan>(KEPT_SCAN_MAX_DOCS)));
  return t;
}

/** A kept scan found under its own key: its lists are the ones it read, whatever batches came. */
function keptScan(state: IndexState, key: string): KeptScan | undefined {
  const e = scanTable(state).entries.get(key);
  if (e) {
    e.pending = null;
    e.used = true;
  }
  return e;
}

/**
 * The entries of `p` for the documents `docs` (ascending): a few a write changed, or the tens
 * of thousands an import's batch added, whose entries then lie together at the list's end.
 */
function entriesFor(p: Posting, docs: Uint32Array): Posting {
  const list = p.docs;
  if (docs.length > 0 && docs[docs.length - 1]! - docs[0]! + 1 === docs.length) {
    // Consecutive docids (an import's batch): one slice of the list.
    const from = gallop(list, docs[0]!, 0);
    const to = gallop(list, docs[docs.length - 1]! + 1, from);
    if (from === to) return EMPTY_POSTING;
    let ndocs = 0;
    for (let i = from; i < to; i++) if (i === from || list[i] !== list[i - 1]) ndocs++;
    return { docs: list.subarray(from, to), fps: p.fps.subarray(from, to), ndocs };
  }
  let runs: Uint32Array;
  if (list.length <= docs.length) {
    // A list shorter than the documents (a rare word of a prefix): its own documents are looked up.
    runs = entryRanges(list, docs, p.ndocs);
  } else {
    // Galloping from each document's run to the next (the list's distinct documents, which
    // entryRanges reads, cost a pass over a common word's whole list).
    runs = new Uint32Array(2 * docs.length);
    let k = 0;
    for (let i = 0, at = 0; i < docs.length && at < list.length; i++) {
      const d = docs[i]!;
      at = gallop(list, d, at);
      if (at >= list.length || list[at] !== d) continue;
      runs[k++] = at;
      while (at < list.length && list[at] === d) at++;
      runs[k++] = at;
    }
    runs = runs.subarray(0, k);
  }
  const nr = runs.length >> 1;
  if (nr === 0) return EMPTY_POSTING;
  let n = 0;
  let together = true;
  for (let r = 0; r < runs.length; r += 2) {
    n += runs[r + 1]! - runs[r]!;
    if (r > 0 && runs[r] !== runs[r - 1]) together = false;
  }
  if (together) return { docs: list.subarray(runs[0]!, runs[2 * nr - 1]!), fps: p.fps.subarray(runs[0]!, runs[2 * nr - 1]!), ndocs: nr };
  const out = { docs: new Uint32Array(n), fps: new Uint32Array(n), ndocs: nr };
  for (let r = 0, k = 0; r < 2 * nr; r += 2) {
    for (let i = runs[r]!, e = runs[r + 1]!; i < e; i++, k++) {
      out.docs[k] = p.docs[i]!;
      out.fps[k] = p.fps[i]!;
    }
  }
  return out;
}

/** Whether every document of `list` (ascending, repeats together) is in `docs` (ascending). */
function allAmong(list: Uint32Array, docs: Uint32Array): boolean {
  let at = 0;
  for (let i = 0; i < list.length; i++) {
    const d = list[i]!;
    if (i > 0 && list[i - 1] === d) continue;
    at = gallop(docs, d, at);
    if (at >= docs.length || docs[at] !== d) return false;
  }
  return list.length > 0;
}

/** Set in `mask` once a document's aggregates are filled. */
const DONE = 0x80000000;
/**
 * Above this many documents at once, and when they are at least 1/FULL_SCAN_SHARE of the
 * documents the lists hold, reading every posting list whole beats reading only their
 * entries; a few thousand documents of lists that hold a hundred thousand (common words)
 * are filled from their entries alone.
 */
const FULL_SCAN_DOCS = 4096;
const FULL_SCAN_SHARE = 4;
/** From this many documents on, their entries are read from the posting lists rather than their records. */
const POSTING_FILL_DOCS = 256;
/** A table whose documents are more than 1/CLEAR_WHOLE_SHARE of the index is cleared whole. */
const CLEAR_WHOLE_SHARE = 16;

/**
 * Which units each document matches (`mask`, one bit per unit) and, per (document,
 * unit), the packed aggregates. Masks come from one pass over the posting lists.
 * Aggregates are filled either by reading every posting list (`full`, for single-term
 * queries whose candidates are all ranked) or lazily from the records of the documents
 * the bucket sort actually looks at.
 */
export class MatchTable {
  readonly units: readonly Unit[];
  readonly U: number;
  readonly mask: Uint32Array;
  /** Packed per-slot aggregates, see the layout above. */
  readonly agg: Uint32Array;
  /** Matched documents, ascending. */
  docs: Uint32Array = new Uint32Array(0);
  /** `docs` is a kept scan's too, read by later searches: never to be written. */
  docsShared = false;
  readonly words: WordUnitMap;
  private readonly blocks: Uint32Array;
  private released = false;
  private full = false;
  /** Units whose posting lists were read for aggregates (all their documents are filled). */
  private readonly scanned: boolean[];
  /** Every field of every posting is searched (no restriction, none unsearchable). */
  private readonly everyField: boolean;
  private readonly anyExactField: boolean;
  private readonly fwc: (Uint16Array | undefined)[] = [];

  private readonly buffers: MatchBuffers;
  /** Kept-scan keys by unit (see unitScanKey). */
  private readonly scanKeys = new Map<Unit, string | null>();
  /** While set, posting scans read only these documents' entries (ascending docids). */
  private only: Uint32Array | null = null;

  constructor(
    readonly state: IndexState,
    units: readonly Unit[],
    readonly opts: ScanOptions,
    eager: boolean,
    scratch: SearchScratch,
  ) {
    const buffers = (this.buffers = scratch.tables);
    this.units = units;
    this.scanned = units.map(() => false);
    this.U = Math.max(1, units.length);
    buffers.acquire(state.capacity + 1, this.U);
    this.mask = buffers.mask;
    this.agg = buffers.agg;
    this.blocks = buffers.blocks;
    try {
      this.words = new WordUnitMap(state, units, scratch);
    } catch (e) {
      buffers.release();
      throw e;
    }
    // Records (and so posting lists) hold searchable fields only, and a settings change
    // rebuilds them: every searchable field searched means every occurrence counts.
    this.everyField = opts.weights.every((w, f) => w >= 0 || state.rules.weight(f) < 0);
    this.anyExactField = opts.exactFields.some((x) => x === 1);
    try {
      const keptKey = eager ? this.scanKey() : null;
      if (keptKey !== null && this.replayScan(keptKey)) return;
      if (eager) this.scanAll();
      else if (opts.anchored) {
        for (const u of units) if (u.start === 0) this.maskUnit(u, false);
        for (const u of units) if (u.start !== 0) this.maskUnit(u, true);
      } else for (const u of units) this.maskUnit(u, false);
      this.collect();
      if (keptKey !== null && this.roomFor(this.docs.length)) this.keep(keptKey, this.docs, this.slotsOf(this.docs, this.units[0]!));
    } catch (e) {
      this.release();
      throw e;
    }
  }

  private maskUnit(u: Unit, onlyMarked: boolean): void {
    const { mask } = this;
    const { weights, exactFields, admitted } = this.opts;
    const blocks = this.blocks;
    const bit = (1 << u.id) >>> 0;
    const nw = weights.length;
    for (const src of u.sources) {
      const docs = src.posting.docs;
      const fps = src.posting.fps;
      const typoSource = src.typo > 0;
      let last = -1;
      if (this.everyField && admitted === null && !(typoSource && this.anyExactField)) {
        // Every occurrence counts: only the distinct docids need reading.
        const distinct = distinctDocs(src.posting.docs, src.posting.ndocs);
        for (let i = 0; i < distinct.length; i++) {
          const d = distinct[i]!;
          const m = mask[d]!;
          if (m === 0) {
            if (onlyMarked) continue;
            blocks[d >>> 5] = (blocks[d >>> 5]! | (1 << (d & 31))) >>> 0;
          }
          mask[d] = (m | bit) >>> 0;
        }
        continue;
      }
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if (d === last) continue;
        if (admitted !== null && admitted[d] !== 1) continue;
        const f = fps[i]! >>> 16;
        if (f >= nw || weights[f]! < 0) continue;
        if (typoSource && exactFields[f] === 1) continue;
        last = d;
        const m = mask[d]!;
        if (m === 0) {
          if (onlyMarked) continue;
          blocks[d >>> 5] = (blocks[d >>> 5]! | (1 << (d & 31))) >>> 0;
        }
        mask[d] = (m | bit) >>> 0;
      }
    }
  }

  /** The key of the table's only unit's scan (see unitScanKey), null with several units. */
  private scanKey(): string | null {
    return this.units.length === 1 ? this.unitScanKey(this.units[0]!) : null;
  }

  /**
   * What an unfiltered scan of a unit depends on, or null when it is not worth keeping: the
   * posting lists read (by identity: a state never changes a list, it replaces it), the
   * unit's shape and the query's field weights. Slots do not depend on the other units, so
   * a scan kept by one query serves every query reading the same unit.
   */
  private unitScanKey(u: Unit): string | null {
    let key = this.scanKeys.get(u);
    if (key !== undefined) return key;
    key = this.scanKeyWith(u, postingId);
    this.scanKeys.set(u, key);
    return key;
  }

  /**
   * The scan key of `u` with each list read as `idOf` says (itself, or its predecessor); a
   * list it gives null for is left out, as if the unit did not read it.
   */
  private scanKeyWith(u: Unit, idOf: (p: Posting) => number | null): string | null {
    let entries = 0;
    for (const src of u.sources) entries += src.posting.docs.length;
    if (this.opts.admitted !== null || entries < CACHED_SCAN_MIN_ENTRIES) return null;
    // One entry per list read, in list order: a scan does not depend on the order of its
    // sources, nor on which short lists a union joined (a word's list joins and leaves the
    // unions as batches change its length).
    const read: [number, number][] = [];
    for (const src of u.sources) {
      const how = src.typo * 4 + (src.exact ? 2 : 0) + (src.prefixList ? 1 : 0);
      for (const p of src.members?.lists ?? [src.posting]) {
        const id = idOf(p);
        if (id !== null) read.push([id, how]);
      }
    }
    read.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const parts: (string | number)[] = [u.qpos, u.qposEnd, u.end - u.start, u.baseTypo, read.join(';')];
    return `${parts.join(',')}|${this.opts.weights.join(',')}|${this.opts.rankWeights?.join(',') ?? ''}|${this.opts.exactFields.join(',')}`;
  }

  /** Fills the table of a single unit from a kept scan of this state, if there is one. */
  private replayScan(key: string): boolean {
    const kept = keptScan(this.state, key);
    if (!kept) return false;
    const { mask, agg, blocks, U } = this;
    const { docs, values } = kept;
    const id = this.units[0]!.id;
    const bit = (1 << id) >>> 0;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      mask[d] = bit;
      agg[d * U + id] = values[i]!;
      blocks[d >>> 5] = (blocks[d >>> 5]! | (1 << (d & 31))) >>> 0;
    }
    this.docs = docs;
    this.docsShared = true;
    this.scanned.fill(true);
    this.full = true;
    return true;
  }

  /**
   * Keeps the outcome of a large scan of a unit for the next searches of the same state: the
   * short prefixes typed first in search-as-you-type read the longest lists there are.
   */
  private keep(key: string, docs: Uint32Array, values: Uint32Array): void {
    const table = scanTable(this.state);
    if (!this.roomFor(docs.length)) return;
    table.docs += docs.length;
    table.entries.set(key, { docs, values, pending: null, used: true });
    if (docs === this.docs) this.docsShared = true;
  }

  /**
   * Whether the state's kept scans have room for `n` more documents: asked before a scan's
   * documents and slots are copied out for keep (a third of a 1-2-letter prefix search at
   * 300,000 documents once the room was spent).
   */
  private roomFor(n: number): boolean {
    const table = scanTable(this.state);
    return table.docs + n <= table.capacity;
  }

  /** Writes a kept scan's slots of unit `u`, but for the documents `skip` (ascending). */
  private replayUnit(u: Unit, kept: KeptScan, skip: Uint32Array | null): void {
    const { mask, agg, blocks, U } = this;
    const bit = (1 << u.id) >>> 0;
    const { docs, values } = kept;
    let s = 0;
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      if (skip !== null) {
        while (s < skip.length && skip[s]! < d) s++;
        if (s < skip.length && skip[s] === d) continue;
      }
      const m = mask[d]!;
      if (m === 0) blocks[d >>> 5] = (blocks[d >>> 5]! | (1 << (d & 31))) >>> 0;
      mask[d] = (m | bit) >>> 0;
      agg[d * U + u.id] = values[i]!;
    }
  }

  /**
   * Fills unit `u` from the scan kept under the key of its lists' predecessors (the lists a
   * batch patched), its documents the batch changed scanned again from the lists as they are
   * now: each document's slots depend on its own entries only. Null when there is none, else
   * the kept scan and the documents scanned again (see mergedScan).
   */
  private patchScan(u: Unit): { kept: KeptScan; pending: Uint32Array } | null {
    const view = this.state.view;
    // A list with no predecessor whose every document came with the last batch (a word new
    // to the index, such as a prefix's new derivation) was not read by the kept scan; every
    // entry carried through that batch waits to scan those documents again anyway.
    const fresh = scanTable(this.state).touched;
    const before = this.scanKeyWith(u, (p) => view.predecessorOf(p) ?? (fresh !== null && allAmong(p.docs, fresh) ? null : postingId(p)));
    if (before === null || before === this.unitScanKey(u)) return null;
    const kept = scanTable(this.state).entries.get(before);
    if (!kept || kept.pending === null) return null;
    const pending = kept.pending;
    this.replayUnit(u, kept, pending);
    this.scanUnit({ ...u, sources: u.sources.map((src) => ({ ...src, posting: entriesFor(src.posting, pending) })) });
    return { kept, pending };
  }

  /**
   * A kept scan's documents and slots but for `pending`, merged with the slots of `pending`
   * the table holds now: one walk of both lists, where collecting the unit's documents from
   * the table walks every marked document.
   */
  private mergedScan(u: Unit, kept: KeptScan, pending: Uint32Array): { docs: Uint32Array; values: Uint32Array } {
    const { mask, agg, U } = this;
    const bit = (1 << u.id) >>> 0;
    const uid = u.id;
    const docs = new Uint32Array(kept.docs.length + pending.length);
    const values = new Uint32Array(docs.length);
    const keptDocs = kept.docs;
    const keptValues = kept.values;
    let n = 0;
    let i = 0;
    let p = 0;
    while (i < keptDocs.length || p < pending.length) {
      const d = i < keptDocs.length ? keptDocs[i]! : 0xffffffff;
      const e = p < pending.length ? pending[p]! : 0xffffffff;
      if (d < e) {
        docs[n] = d;
        values[n++] = keptValues[i++]!;
        continue;
      }
      // A pending document: its slot as scanned now (a kept one of the same docid is stale).
      if (d === e) i++;
      p++;
      if ((mask[e]! & bit) === 0) continue;
      const v = agg[e * U + uid]!;
      if ((v & TYPO_MASK) === 0) continue;
      docs[n] = e;
      values[n++] = v;
    }
    return { docs: docs.slice(0, n), values: values.slice(0, n) };
  }

  /**
   * Reads a unit's posting lists for every document, or replays the same read kept by an
   * earlier query of this state: the common word of a query ("a", "of", "the") ranks whole
   * buckets of a hundred thousand documents, and is read by query after query.
   */
  private scanUnitKept(u: Unit): void {
    const key = this.unitScanKey(u);
    const kept = key === null ? undefined : keptScan(this.state, key);
    if (kept !== undefined) return this.replayUnit(u, kept, null);
    const patched = key === null ? null : this.patchScan(u);
    if (patched === null) this.scanUnit(u);
    // A table of one unit keeps its scan once its documents are collected (constructor).
    if (key === null || this.units.length === 1 || !this.roomFor(1)) return;
    if (patched !== null) {
      const merged = this.mergedScan(u, patched.kept, patched.pending);
      if (this.roomFor(merged.docs.length)) this.keep(key, merged.docs, merged.values);
      return;
    }
    // The unit's slots the scan filled: every document of its lists the query's fields keep.
    // Counted, then copied out with their slots: two walks over the marked documents, in
    // loops of their own (a closure per document there took a fifth of the first search
    // after a write whose unit was a common word).
    const { mask, agg, blocks, U } = this;
    const bit = (1 << u.id) >>> 0;
    const uid = u.id;
    const nb = (this.state.capacity >>> 5) + 1;
    let n = 0;
    for (let i = 0; i < nb; i++) {
      for (let b = blocks[i]!; b !== 0; b = (b ^ (b & -b)) >>> 0) {
        const d = (i << 5) + 31 - Math.clz32(b & -b);
        if ((mask[d]! & bit) !== 0 && (agg[d * U + uid]! & TYPO_MASK) !== 0) n++;
      }
    }
    if (!this.roomFor(n)) return;
    const docs = new Uint32Array(n);
    const values = new Uint32Array(n);
    n = 0;
    for (let i = 0; i < nb; i++) {
      for (let b = blocks[i]!; b !== 0; b = (b ^ (b & -b)) >>> 0) {
        const d = (i << 5) + 31 - Math.clz32(b & -b);
        if ((mask[d]! & bit) === 0) continue;
        const v = agg[d * U + uid]!;
        if ((v & TYPO_MASK) === 0) continue;
        docs[n] = d;
        values[n++] = v;
      }
    }
    this.keep(key, docs, values);
  }

  /** The packed slots of unit `u` for these documents. */
  private slotsOf(docs: Uint32Array, u: Unit): Uint32Array {
    const values = new Uint32Array(docs.length);
    for (let i = 0; i < docs.length; i++) values[i] = this.agg[docs[i]! * this.U + u.id]!;
    return values;
  }

  /** Fills masks and aggregates of every document from the posting lists. */
  private scanAll(): void {
    for (const u of this.units) this.scanUnitKept(u);
    this.scanned.fill(true);
    this.full = true;
  }

  /** Words of field `f` in document `d`; the state's table is fetched once per match table (the memo lookup costs a string key). */
  private fieldCount(f: number, d: number): number {
    let t = this.fwc[f];
    if (t === undefined) t = this.fwc[f] = fieldWordTable(this.state, f);
    return fieldWordCountIn(this.state, t, f, d);
  }

  private scanUnit(u: Unit): void {
    // Fewest typos first: a slot then only ever meets equal or more typos, and a prefix
    // list before the exact word, whose positions it already holds.
    const sources = [...u.sources].sort((a, b) => a.typo - b.typo || Number(!a.prefixList) - Number(!b.prefixList));
    this.scanSources(u, sources, false);
    // Fields searchable but not searched come second: they add costs at the typo count
    // the searched fields settled, never a match.
    if (this.opts.rankWeights) this.scanSources(u, sources, true);
  }

  private scanSources(u: Unit, sources: readonly Source[], unsearched: boolean): void {
    const { mask, agg, U } = this;
    const { exactFields, admitted } = this.opts;
    const weights = unsearched ? this.opts.rankWeights! : this.opts.weights;
    const searched = this.opts.weights;
    const blocks = this.blocks;
    const bit = (1 << u.id) >>> 0;
    const terms = u.end - u.start + 1;
    const q = u.qpos;
    const positions = u.qposEnd - u.qpos + 1;
    const nw = weights.length;
    const simple = q === 0 && terms === 1;
    const listed = sources.some((s) => s.prefixList);
    for (const src of sources) {
      const docs = src.posting.docs;
      const fps = src.posting.fps;
      const exactSrc = src.exact;
      // Entry ranges to read: the whole list, or those of the documents being filled.
      const ranges = this.only === null ? null : entryRanges(docs, this.only, src.posting.ndocs);
      const nr = ranges === null ? 2 : ranges.length;
      if (listed && exactSrc && !src.prefixList && ranges === null) {
        // The exact word of an indexed prefix: its documents are already marked with their
        // costs; only the exactness flags are left to add, once per (document, field).
        // (Filling chosen documents, it counts like any source, as their records would.)
        let lastD = -1;
        let lastF = -1;
        for (let i = 0; i < docs.length; i++) {
          const d = docs[i]!;
          const fp = fps[i]!;
          const f = fp >>> 16;
          const p = fp & 0xffff;
          // A later occurrence in the same field adds nothing unless it sits at `q`.
          if (d === lastD && f === lastF && p !== q) continue;
          lastD = d;
          lastF = f;
          if (admitted !== null && admitted[d] !== 1) continue;
          if (f >= nw || weights[f]! < 0) continue;
          if (unsearched && (searched[f]! >= 0 || (mask[d]! & bit) === 0)) continue;
          let flags = EXACT_PRESENT;
          if (p === q) {
            flags |= EXACT_AT_START;
            if (this.fieldCount(f, d) === positions) flags |= EXACT_WHOLE_FIELD;
          }
          const slot = d * U + u.id;
          agg[slot] = (agg[slot]! | (flags << EXACT_SHIFT)) >>> 0;
        }
        continue;
      }
      const tt = src.typo + u.baseTypo + 1;
      const typoSource = src.typo > 0;
      // A single word at query position 0 costs least at its first position in a field, and
      // only there can it sit at `q`: later occurrences in the same field change nothing (a
      // common word's list holds several per field of a long document).
      let lastD = -1;
      let lastF = -1;
      for (let r = 0; r < nr; r += 2)
      for (let i = ranges === null ? 0 : ranges[r]!, e = ranges === null ? docs.length : ranges[r + 1]!; i < e; i++) {
        const d = docs[i]!;
        const fp = fps[i]!;
        const f = fp >>> 16;
        if (simple) {
          if (d === lastD && f === lastF) continue;
          lastD = d;
          lastF = f;
        }
        if (admitted !== null && admitted[d] !== 1) continue;
        const w = f < nw ? weights[f]! : -1;
        if (w < 0) continue;
        if (typoSource && exactFields[f] === 1) continue;
        if (unsearched && (searched[f]! >= 0 || (mask[d]! & bit) === 0)) continue;
        const p = fp & 0xffff;
        const slot = d * U + u.id;
        let flags = 0;
        if (exactSrc) {
          flags = EXACT_PRESENT;
          if (p === q) {
            flags |= EXACT_AT_START;
            if (this.fieldCount(f, d) === positions) flags |= EXACT_WHOLE_FIELD;
          }
        }
        const cur = agg[slot]!;
        const ct = cur & TYPO_MASK;
        if (unsearched) {
          if (ct === tt) agg[slot] = merge(cur, tt, simple ? COST_AT_0[p]! : positionCost(p, q, terms), w * terms, flags);
          else if (flags !== 0) agg[slot] = (cur | (flags << EXACT_SHIFT)) >>> 0;
          continue;
        }
        const m = mask[d]!;
        if (m === 0) blocks[d >>> 5] = (blocks[d >>> 5]! | (1 << (d & 31))) >>> 0;
        mask[d] = (m | bit) >>> 0;
        if (ct === 0) {
          const pc = simple ? COST_AT_0[p]! : positionCost(p, q, terms);
          let fc = w * terms;
          if (fc > FID_MAX) fc = FID_MAX;
          agg[slot] = (tt | (pc << POS_SHIFT) | (cur & EXACT_BITS) | (flags << EXACT_SHIFT) | (fc << FID_SHIFT)) >>> 0;
        } else if (ct === tt) {
          const pc = simple ? COST_AT_0[p]! : positionCost(p, q, terms);
          agg[slot] = merge(cur, tt, pc, w * terms, flags);
        } else if (flags !== 0) agg[slot] = (cur | (flags << EXACT_SHIFT)) >>> 0;
      }
    }
  }


  /**
   * Makes sure the aggregates of these documents are filled, at least for `units`. Large
   * sets read those units' posting lists; small ones read the documents' records.
   */
  ensure(docs: ArrayLike<number>, units: readonly Unit[] = this.units): void {
    if (this.full || units.every((u) => this.scanned[u.id])) return;
    if (docs.length > FULL_SCAN_DOCS && docs.length * FULL_SCAN_SHARE >= this.listedDocs(units)) {
      // Merging is idempotent, so documents already filled from their records are fine.
      for (const u of units) {
        if (this.scanned[u.id]) continue;
        this.scanUnitKept(u);
        this.scanned[u.id] = true;
      }
      this.full = this.scanned.every(Boolean);
      return;
    }
    if (docs.length >= POSTING_FILL_DOCS) {
      this.fillFromPostings(docs);
      return;
    }
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const m = this.mask[d]!;
      if (m !== 0 && (m & DONE) === 0) this.fillFromRecord(d);
    }
  }

  /**
   * Documents the lists of these units (those not read yet) hold, counted once per list;
   * 0 when a unit has an indexed-prefix list, whose whole read (first positions only, see
   * scanSources) stays the way such a bucket is filled.
   */
  private listedDocs(units: readonly Unit[]): number {
    let n = 0;
    for (const u of units) {
      if (this.scanned[u.id]) continue;
      for (const src of u.sources) {
        if (src.prefixList) return 0;
        n += src.posting.ndocs;
      }
    }
    return n;
  }

  /**
   * The same aggregates as reading these documents' records, read from the posting lists
   * instead, entry ranges found by galloping: a long document's record holds every word of
   * it, while the lists hold only the query's words.
   */
  private fillFromPostings(docs: ArrayLike<number>): void {
    const todo: number[] = [];
    for (let i = 0; i < docs.length; i++) {
      const d = docs[i]!;
      const m = this.mask[d]!;
      if (m !== 0 && (m & DONE) === 0) todo.push(d);
    }
    if (todo.length === 0) return;
    this.only = Uint32Array.from(todo);
    try {
      for (const u of this.units) if (!this.scanned[u.id]) this.scanUnit(u);
    } finally {
      this.only = null;
    }
    for (const d of todo) this.mask[d] = (this.mask[d]! | DONE) >>> 0;
  }

  /**
   * Fills only the typo count of these documents' slots, from the distinct documents of each
   * source (fewest typos first), without reading a position: what the typo rule needs for a
   * bucket of thousands of long documents, where the full aggregates would read every
   * occurrence. The other aggregates are left at their worst value, so that a later full
   * fill (which merges by minimum at the same typo count) writes the real ones. Returns false,
   * touching nothing, where a source's typo count depends on the field of an occurrence
   * (restricted fields, exact-only fields, documents left out): the caller fills fully then.
   */
  fillTypos(docs: Uint32Array, units: readonly Unit[] = this.units): boolean {
    if (this.full || units.every((u) => this.scanned[u.id])) return true;
    if (!this.everyField || this.opts.admitted !== null) return false;
    if (this.anyExactField && units.some((u) => u.sources.some((s) => s.typo > 0))) return false;
    const { agg, U, mask } = this;
    for (const u of units) {
      if (this.scanned[u.id]) continue;
      const groups = typoGroups(u.sources);
      if (groups.length === 0) continue;
      // A document the unit's mask marks is in some source's list: one found in no other group
      // is in the group left unread, the one with the most documents (the exact list of a
      // common word, every derivation of a prefix). Documents found first in a group of more
      // typos than that one are then looked up in its lists, a few among many.
      let skip = 0;
      for (let g = 1; g < groups.length; g++) if (groups[g]!.size > groups[skip]!.size) skip = g;
      const left = groups[skip]!;
      const leftFill = (TYPO_MASK_FILL | ((left.typo + u.baseTypo + 1) & TYPO_MASK)) >>> 0;
      const above: number[] = [];
      for (let g = 0; g < groups.length; g++) {
        if (g === skip) continue;
        const { typo, postings } = groups[g]!;
        const fill = (TYPO_MASK_FILL | ((typo + u.baseTypo + 1) & TYPO_MASK)) >>> 0;
        for (const p of postings) {
          const list = distinctDocs(p.docs, p.ndocs);
          // Runs of a list of distinct documents are one entry long.
          const runs = entryRanges(list, docs);
          for (let r = 0; r < runs.length; r += 2) {
            const d = list[runs[r]!]!;
            const slot = d * U + u.id;
            if ((agg[slot]! & TYPO_MASK) !== 0) continue;
            agg[slot] = fill;
            if (g > skip) above.push(d);
          }
        }
      }
      if (above.length > 0) {
        const found = Uint32Array.from(above).sort();
        for (const p of left.postings) {
          const list = distinctDocs(p.docs, p.ndocs);
          const runs = entryRanges(list, found);
          for (let r = 0; r < runs.length; r += 2) agg[list[runs[r]!]! * U + u.id] = leftFill;
        }
      }
      const bit = (1 << u.id) >>> 0;
      for (let i = 0; i < docs.length; i++) {
        const d = docs[i]!;
        if ((mask[d]! & bit) === 0) continue;
        const slot = d * U + u.id;
        if ((agg[slot]! & TYPO_MASK) === 0) agg[slot] = leftFill;
      }
    }
    return true;
  }

  /** The same aggregates as the posting scan, from the document's own record. */
  private fillFromRecord(d: number): void {
    this.fillPass(d, false);
    if (this.opts.rankWeights) this.fillPass(d, true);
    this.mask[d] = (this.mask[d]! | DONE) >>> 0;
  }

  private fillPass(d: number, unsearched: boolean): void {
    const { agg, U, units } = this;
    const { exactFields } = this.opts;
    const weights = unsearched ? this.opts.rankWeights! : this.opts.weights;
    const searched = this.opts.weights;
    const base = d * U;
    this.words.forEachMatch(this.state, d, (uid, typo, exact, fp) => {
      const f = fp >>> 16;
      if (f >= weights.length || weights[f]! < 0) return;
      if (unsearched && (searched[f]! >= 0 || ((this.mask[d]! >>> uid) & 1) === 0)) return;
      const u = units[uid]!;
      if (typo > u.baseTypo && exactFields[f] === 1) return;
      const p = fp & 0xffff;
      const terms = u.end - u.start + 1;
      let flags = 0;
      if (exact) {
        flags = EXACT_PRESENT;
        if (p === u.qpos) {
          flags |= EXACT_AT_START;
          if (this.fieldCount(f, d) === u.qposEnd - u.qpos + 1) flags |= EXACT_WHOLE_FIELD;
        }
      }
      const cur = agg[base + uid]!;
      // An unsearched field never sets the typo count, it only adds costs at it.
      if (unsearched && (cur & TYPO_MASK) !== typo + 1) {
        if (flags !== 0) agg[base + uid] = (cur | (flags << EXACT_SHIFT)) >>> 0;
        return;
      }
      agg[base + uid] = merge(cur, typo + 1, positionCost(p, u.qpos, terms), weights[f]! * terms, flags);
    });
  }

  /** Bits of the units the document matches. */
  unitsOf(d: number): number {
    return this.mask[d]! & 0x7fffffff;
  }

  private collect(): void {
    const blocks = this.blocks;
    const nb = (this.state.capacity >>> 5) + 1;
    let n = 0;
    for (let i = 0; i < nb; i++) {
      const b = blocks[i]!;
      if (b !== 0) n += popcount(b);
    }
    const out = new Uint32Array(n);
    n = 0;
    for (let i = 0; i < nb; i++) {
      let b = blocks[i]!;
      while (b !== 0) {
        const low = b & -b;
        out[n++] = (i << 5) + 31 - Math.clz32(low);
        b = (b ^ low) >>> 0;
      }
    }
    this.docs = out;
  }

  slot(d: number, u: number): number {
    return d * this.U + u;
  }

  /** The packed slot of (document, unit), see slot.ts; 0 when the unit does not match. */
  slotAt(d: number, u: number): number {
    return this.agg[d * this.U + u]!;
  }

  /** Typo count of the unit in the document, or NO_TYPO when it does not match. */
  typoAt(d: number, u: number): number {
    const v = this.agg[d * this.U + u]! & TYPO_MASK;
    return v === 0 ? NO_TYPO : v - 1;
  }

  fidAt(d: number, u: number): number {
    const v = this.agg[d * this.U + u]!;
    return (v & TYPO_MASK) === 0 ? Infinity : v >>> FID_SHIFT;
  }

  posAt(d: number, u: number): number {
    const v = this.agg[d * this.U + u]!;
    return (v & TYPO_MASK) === 0 ? Infinity : (v >>> POS_SHIFT) & POS_MASK;
  }

  /** Attribute cost then position cost as one number (0 when the unit does not match). */
  attributeCostAt(d: number, u: number, radix: number): number {
    const v = this.agg[d * this.U + u]!;
    if ((v & TYPO_MASK) === 0) return 0;
    return (v >>> FID_SHIFT) * radix + ((v >>> POS_SHIFT) & POS_MASK);
  }

  exactAt(d: number, u: number): number {
    return (this.agg[d * this.U + u]! >>> EXACT_SHIFT) & 7;
  }

  /** Resets every touched slot so the buffers can serve the next query. */
  release(): void {
    if (this.released) return;
    this.released = true;
    this.words.release();
    const { mask, agg, U, blocks } = this;
    const nb = (this.state.capacity >>> 5) + 1;
    if (this.docs.length * CLEAR_WHOLE_SHARE > this.state.capacity) {
      // A common word's hundreds of thousands of documents: clearing the arrays whole is a
      // few sequential passes instead of a write per document spread over them.
      const n = this.state.capacity + 1;
      mask.fill(0, 0, n);
      agg.fill(0, 0, n * U);
      blocks.fill(0, 0, nb);
      this.buffers.release();
      return;
    }
    for (let i = 0; i < nb; i++) {
      let b = blocks[i]!;
      if (b === 0) continue;
      while (b !== 0) {
        const low = b & -b;
        const d = (i << 5) + 31 - Math.clz32(low);
        mask[d] = 0;
        for (let k = d * U, e = k + U; k < e; k++) agg[k] = 0;
        b = (b ^ low) >>> 0;
      }
      blocks[i] = 0;
    }
    this.buffers.release();
  }
}

interface TypoGroup {
  typo: number;
  /** The posting lists of the sources of this typo count. */
  postings: Posting[];
  /** Documents, counted once per list. */
  size: number;
}

/** A unit's sources by typo count, fewest typos first. */
function typoGroups(sources: readonly Source[]): TypoGroup[] {
  const groups: TypoGroup[] = [];
  for (const src of [...sources].sort((a, b) => a.typo - b.typo)) {
    let g = groups[groups.length - 1];
    if (g === undefined || g.typo !== src.typo) groups.push((g = { typo: src.typo, postings: [], size: 0 }));
    g.postings.push(src.posting);
    g.size += src.posting.ndocs;
  }
  return groups;
}

/** A slot with a typo count and the worst position and attribute costs: see fillTypos. */
const TYPO_MASK_FILL = ((POS_MASK << POS_SHIFT) | (FID_MAX << FID_SHIFT)) >>> 0;

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}

export const NO_TYPO = 255;
