// The published, immutable-by-convention search state of one index, and how a batch of
// document changes produces the next one. Searches hold a state for their whole run,
// so a batch never shows half-applied.

import type { Doc } from '../documents/primary-key.js';
import type { DocChange } from '../structures/search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import { Tokenizer } from '../tokenizer/index.js';
import { decodeValues, extractRecord, Slab, type DocRecord } from './doc-record.js';
import { FieldNames, FieldRules } from './field-table.js';
import { DistinctColumn, valuePredicate } from './field-values.js';
import { EMPTY_POSTING, WORD_LISTS, type Posting } from './postings.js';
import { PrefixTable, type PrefixStage } from './prefix-table.js';
import { buildSegment, carriesCaches, mergeSegments, recordBytes, segmentSize, SegmentView, type Segment } from './segment.js';
import { buildSynonyms, type Synonyms } from './synonyms.js';
import { SortedWords, WordTable, type WordStage } from './word-table.js';
import type { Yielder } from '../../util/yielder.js';

export interface IndexState {
  readonly settings: IndexSettings;
  readonly tokenizer: Tokenizer;
  /** Shared and append-only: states only look at the field ids they know. */
  readonly names: FieldNames;
  readonly rules: FieldRules;
  /** Shared and append-only: ids at or above `wordCount` belong to later states. */
  readonly words: WordTable;
  readonly wordCount: number;
  readonly sorted: SortedWords;
  readonly prefixes: PrefixTable | null;
  /** The segments holding the posting lists and records, read as one. */
  readonly view: SegmentView;
  /** The number the next new segment gets. */
  readonly nextSeq: number;
  /** One past the highest docid (the size of per-docid tables). */
  readonly capacity: number;
  /** Live docids, ascending. */
  readonly docids: Uint32Array;
  readonly synonyms: Synonyms;
  /** Per-state memo of derived data (sort orders, ...), filled on first use. */
  readonly memo: Map<string, unknown>;
}

/** The posting list of a word id (empty for ids a later state added). */
export function postingOf(state: IndexState, id: number): Posting {
  return id < state.wordCount ? state.view.word(id) : EMPTY_POSTING;
}

/** The list of an indexed prefix, or null when prefixes are not indexed. */
export function prefixPosting(state: IndexState, id: number): Posting | null {
  return state.prefixes ? state.view.prefix(id) : null;
}

/** The record of a live document. */
export function recordOf(state: IndexState, d: number): DocRecord | undefined {
  return state.view.record(d);
}

/** A document's token pairs (word id, fp), without decoding the rest of its record; see SegmentView.tokens. */
export function recordTokens(state: IndexState, d: number, alloc?: (n: number) => Uint32Array): Uint32Array | undefined {
  return state.view.tokens(d, alloc);
}

/** What a batch changed, for the memo entries that carry themselves to the next state. */
export interface BatchDelta {
  /** The batch's segment: the lists it holds entries for changed. */
  segment: Segment;
  /** The live documents the batch deleted or replaced, ascending. */
  removed: Uint32Array;
  /** The words of those documents as they were (their lists lost entries). */
  removedWords: Set<number>;
  /**
   * Words new to the dictionary, or whose first document came or last one went: what typo
   * derivations see. Null when the batch is too large to tell.
   */
  flipped: string[] | null;
}

/** The method of a memo entry that carries itself to the next state. */
export const CARRY = Symbol('carry');

/** A memo entry that knows what of itself the state after a batch can keep. */
export interface CarriedMemo {
  /** This entry for `next`, or undefined when nothing of it holds there. */
  [CARRY](delta: BatchDelta, next: IndexState, yielder: Yielder): Promise<unknown>;
}

function isCarried(value: unknown): value is CarriedMemo {
  return typeof (value as Partial<CarriedMemo> | null)?.[CARRY] === 'function';
}

/** Past these, a batch's flipped words are not looked for (and memo entries that need them are dropped). */
const FLIP_MAX_WORDS = 20_000;
const FLIPPED_MAX = 128;

/** What a batch that made `next` from `base` changed (see BatchDelta). */
async function batchDelta(base: IndexState, next: IndexState, stage: WordStage, seg: Segment, removed: Uint32Array, yielder: Yielder): Promise<BatchDelta> {
  // Only batches that carry caches get here (carriesCaches, or none removed): their removed documents are few.
  const removedWords = new Set<number>();
  for (const d of removed) {
    const t = base.view.tokens(d);
    if (t) for (let j = 0; j < t.length; j += 2) removedWords.add(t[j]!);
    await yielder.maybe();
  }
  const delta = { segment: seg, removed, removedWords, flipped: null };
  const ids = seg.words.ids;
  if (ids.length > FLIP_MAX_WORDS || stage.added.length > FLIPPED_MAX) return delta;
  const flipped = [...stage.added];
  for (let k = 0; k < ids.length; k++) {
    const id = ids[k]!;
    if (id < base.wordCount && !base.view.hasWord(id)) flipped.push(stage.word(id));
    if ((k & 1023) === 1023) await yielder.maybe();
  }
  let k = 0;
  for (const id of removedWords) {
    if (!next.view.hasWord(id)) flipped.push(stage.word(id));
    if ((++k & 1023) === 0) await yielder.maybe();
  }
  return { ...delta, flipped: flipped.length > FLIPPED_MAX ? null : flipped };
}

const FIELD_WORD_COUNTS = 'fwc:';
const DISTINCT_KEYS = 'distinct:';

/**
 * The per-document tables a state built (word counts, distinct keys), carried to the state
 * after a batch: a copy updated for the batch's documents (word counts: forgotten for them,
 * read again when asked) instead of a read of every record (at a million documents, half a
 * second to seconds in the first search after each batch).
 * Entries of the search layer carry themselves (CarriedMemo), told what the batch changed.
 */
async function carryMemos(
  base: IndexState, next: IndexState, seg: Segment, onlyAdded: boolean, delta: () => Promise<BatchDelta>, yielder: Yielder,
): Promise<void> {
  let known: BatchDelta | null = null;
  // A batch that only added documents leaves every kept entry true of the old ones, however
  // large (an import's): the entries patch in the batch's documents.
  const carried = carriesCaches(seg) || onlyAdded;
  for (const [key, value] of base.memo) {
    if (isCarried(value)) {
      if (!carried) continue;
      const kept = await value[CARRY]((known ??= await delta()), next, yielder);
      if (kept !== undefined) next.memo.set(key, kept);
      continue;
    }
    if (key.startsWith(FIELD_WORD_COUNTS)) {
      const old = value as Uint16Array;
      const out = new Uint16Array(next.capacity + 1);
      out.set(old.subarray(0, Math.min(old.length, out.length)));
      // The batch's documents are read again when asked (see fieldWordCountIn).
      for (let i = 0; i < seg.docs.length; i++) out[seg.docs[i]!] = 0;
      for (const d of seg.deleted) if (d < out.length) out[d] = 0;
      next.memo.set(key, out);
    } else if (key.startsWith(DISTINCT_KEYS)) {
      const attr = key.slice(DISTINCT_KEYS.length);
      const out = (value as DistinctColumn).carried(next.capacity + 1);
      for (const d of seg.deleted) if (d <= next.capacity) out.set(d, null, attr);
      for (let i = 0; i < seg.docs.length; i++) {
        out.set(seg.docs[i]!, decodeValues(recordBytes(seg, i)), attr);
        if ((i & 1023) === 1023) await yielder.maybe();
      }
      next.memo.set(key, out);
    }
    await yielder.maybe();
  }
}

/** Every document's distinct keys for `attr`, built once per state (then carried from batch to batch). */
export function distinctColumn(state: IndexState, attr: string): DistinctColumn {
  const key = DISTINCT_KEYS + attr;
  let col = state.memo.get(key) as DistinctColumn | undefined;
  if (!col) {
    const out = DistinctColumn.empty(state.capacity + 1);
    state.view.forEachRecord((d, bytes) => out.set(d, decodeValues(bytes), attr));
    state.memo.set(key, (col = out));
  }
  return col;
}

/**
 * Per state, the words of field `fid` of each document (by docid) plus one; 0 where not read
 * yet (see fieldWordCountIn).
 */
export function fieldWordTable(state: IndexState, fid: number): Uint16Array {
  const key = FIELD_WORD_COUNTS + fid;
  let t = state.memo.get(key) as Uint16Array | undefined;
  if (!t) state.memo.set(key, (t = new Uint16Array(state.capacity + 1)));
  return t;
}

/** Counts from this many words on are kept as this many: exactness compares them with a query's words. */
const MAX_KEPT_COUNT = 0xfffe;

/**
 * Words in field `fid` of document `d`. Exactness asks only for documents whose field starts
 * with a query word, so a document's count is read from its record when first asked and kept
 * in `table` (fieldWordTable). Reading every record at once cost 150 ms at 300k documents in
 * the first search of a state that carried no table (after a restart, or an import no search
 * ran during). Counts past MAX_KEPT_COUNT come back as MAX_KEPT_COUNT after the first time.
 */
export function fieldWordCountIn(state: IndexState, table: Uint16Array, fid: number, d: number): number {
  const v = table[d]!;
  if (v !== 0) return v - 1;
  const n = state.view.fieldWordCount(d, fid);
  table[d] = Math.min(n, MAX_KEPT_COUNT) + 1;
  return n;
}

export function tokenizerFor(settings: IndexSettings): Tokenizer {
  return new Tokenizer({
    separatorTokens: settings.separatorTokens,
    nonSeparatorTokens: settings.nonSeparatorTokens,
    dictionary: settings.dictionary,
    stopWords: settings.stopWords,
  });
}

/** What a batch changes in the stored segments. */
export interface SegmentChanges {
  /** Segments to write (new or merged). */
  put: Segment[];
  /** Sequence numbers of stored segments that are gone (written before `put`). */
  removed: number[];
  /** Every stored segment is replaced (a full build). */
  all: boolean;
  /** Segments were merged: the stored dictionary order is brought up to date too. */
  merged: boolean;
}

/** Everything a new state is assembled from, before it is published. */
export interface StagedState {
  state: IndexState;
  changes: SegmentChanges;
  /** The words the state adds to the shared table, in id order, from id `base` on. */
  added: { words: readonly string[]; base: number };
  /** Writes the staged words ahead into the shared table (in turns), so that committing them is instant. */
  writeAhead(yielder: Yielder): Promise<void>;
  /** Commits the staged words and prefixes into the shared tables; call at publish. */
  commitTables(): void;
}

interface Parts {
  settings: IndexSettings;
  tokenizer: Tokenizer;
  names: FieldNames;
  words: WordTable;
  stage: WordStage;
  prefixes: PrefixTable | null;
  pstage: PrefixStage | null;
}

function assemble(p: Parts, sorted: SortedWords, view: SegmentView, nextSeq: number, changes: SegmentChanges): StagedState {
  const state: IndexState = {
    settings: p.settings,
    tokenizer: p.tokenizer,
    names: p.names,
    rules: new FieldRules(p.names, p.settings),
    words: p.words,
    wordCount: p.stage.size,
    sorted,
    prefixes: p.prefixes,
    view,
    nextSeq,
    capacity: view.capacity,
    docids: view.docids,
    synonyms: buildSynonyms(p.settings, p.tokenizer),
    memo: new Map(),
  };
  return {
    state,
    changes,
    added: { words: p.stage.added, base: p.stage.base },
    writeAhead: (yielder) => p.words.writeAhead(p.stage, yielder),
    commitTables() {
      p.words.commit(p.stage);
      if (p.prefixes && p.pstage) p.prefixes.commit(p.pstage);
    },
  };
}

function freshParts(settings: IndexSettings, names: FieldNames | null, words: WordTable | null): Parts {
  const w = words ?? new WordTable();
  const stage = w.stage();
  const prefixes = settings.prefixSearch === 'indexingTime' ? new PrefixTable() : null;
  return {
    settings,
    tokenizer: tokenizerFor(settings),
    names: names ?? new FieldNames(),
    words: w,
    stage,
    prefixes,
    pstage: prefixes ? prefixes.stage(stage) : null,
  };
}

/** The words a stage adds, merged into the sorted dictionary. */
async function sortedWith(base: SortedWords, stage: WordStage, yielder: Yielder): Promise<SortedWords> {
  // Built in turns: a batch of 50,000 documents adds 200,000 words, whose pairs took 140 ms at
  // once (young objects that all survive are copied by every scavenge on the way).
  const words = stage.added;
  const added = new Array<{ id: number; word: string }>(words.length);
  for (let i = 0; i < words.length; i++) {
    added[i] = { id: stage.base + i, word: words[i]! };
    if ((i & 4095) === 4095) await yielder.maybe();
  }
  const sorted = await base.mergeInTurns(added, yielder);
  if (sorted !== base) await sorted.prepareInTurns(yielder);
  return sorted;
}

/** A state with every document indexed from scratch (initial load, reset, settings change). */
export async function buildFromDocuments(
  settings: IndexSettings,
  docs: AsyncIterable<[number, Doc]> | Iterable<[number, Doc]>,
  yielder: Yielder,
  replacing: IndexState | null = null,
): Promise<StagedState> {
  const p = freshParts(settings, null, null);
  const rules = new FieldRules(p.names, settings);
  const ctx = { names: p.names, rules, tokenizer: p.tokenizer, words: p.stage, keepValue: valuePredicate(settings), slab: new Slab() };
  const entries: [number, DocRecord][] = [];
  for await (const [docid, doc] of docs) {
    entries.push([docid, extractRecord(doc, ctx)]);
    await yielder.maybe();
  }
  entries.sort((a, b) => a[0] - b[0]);
  await p.pstage?.syncInTurns(yielder);
  const seq = replacing?.nextSeq ?? 0;
  const seg = await buildSegment(
    seq,
    Uint32Array.from(entries, (e) => e[0]),
    entries.map((e) => e[1]),
    new Uint32Array(0),
    WORD_LISTS(p.stage.size),
    p.pstage,
    yielder,
  );
  const sorted = await sortedWith(SortedWords.empty(), p.stage, yielder);
  const removed = replacing ? replacing.view.segments.map((s) => s.seq) : [];
  return assemble(p, sorted, await SegmentView.empty().adding(seg, yielder), seq + 1, { put: [seg], removed, all: true, merged: true });
}

/** A state from stored words, dictionary order and segments (opening an index). */
export function stateFromStored(
  settings: IndexSettings,
  names: string[],
  words: string[],
  dictionary: Uint32Array | null,
  segments: Segment[],
  nextSeq: number,
): IndexState {
  const p = freshParts(settings, new FieldNames(names), new WordTable(words));
  p.pstage?.sync();
  let sorted: SortedWords;
  if (dictionary) {
    const covered = dictionary.length;
    const base = new SortedWords(Array.from(dictionary, (id) => words[id]!), dictionary);
    const rest: { id: number; word: string }[] = [];
    for (let id = covered; id < words.length; id++) rest.push({ id, word: words[id]! });
    sorted = base.merge(rest);
  } else sorted = SortedWords.build({ words });
  sorted.prepare();
  let capacity = 0;
  for (const s of segments) if (s.docs.length > 0) capacity = Math.max(capacity, s.docs[s.docs.length - 1]! + 1);
  const staged = assemble(p, sorted, new SegmentView(segments, capacity), nextSeq, { put: [], removed: [], all: false, merged: false });
  staged.commitTables();
  return staged.state;
}

/** An empty state for a new index. */
export function emptyState(settings: IndexSettings): IndexState {
  const p = freshParts(settings, null, null);
  return assemble(p, SortedWords.empty(), SegmentView.empty(), 0, { put: [], removed: [], all: false, merged: false }).state;
}

/** Segments merged at once: each document is rewritten about log4(index / batch) times. */
const MERGE_FANOUT = 4;
/** Never more segments than this: the smallest neighbours are merged (the oldest of pairs alike). */
const MAX_SEGMENTS = 12;

/**
 * The segments to merge after `view` got a new one: the newest four once they are alike (none
 * holds more than twice the entries of the other three together, and the oldest at most twice
 * the newest), and the smallest neighbours while there are too many.
 *
 * Merging the newest two whenever the newer held half the older rewrote each document of an
 * import about log2(index / batch) times: 12 batches of 10k WordNet documents spent 20% of
 * their time merging. Four at a time halves that, for up to three segments per size. The
 * first bound keeps a merge from rewriting one large segment for a few small ones, older or
 * newer (a million documents imported in batches of 50k, 200k, 700k and 50k tasks' worth would
 * be rewritten whole for the last 50k; a large batch would be merged into the segments that
 * single-document updates leave); the second lets small segments gather among themselves
 * before they join a larger one.
 */
function nextMerge(view: SegmentView): [number, number] | null {
  const s = view.segments;
  const n = s.length;
  if (n >= MERGE_FANOUT) {
    let sum = 0;
    let max = 0;
    for (let i = n - MERGE_FANOUT; i < n; i++) {
      const size = segmentSize(s[i]!);
      sum += size;
      max = Math.max(max, size);
    }
    if (max <= 2 * (sum - max) && segmentSize(s[n - MERGE_FANOUT]!) <= 2 * segmentSize(s[n - 1]!)) return [n - MERGE_FANOUT, n];
  }
  if (n > MAX_SEGMENTS) {
    let best = 0;
    for (let i = 1; i < n - 1; i++) if (segmentSize(s[i]!) + segmentSize(s[i + 1]!) < segmentSize(s[best]!) + segmentSize(s[best + 1]!)) best = i;
    return [best, best + 2];
  }
  return null;
}

/** The state after a batch of document changes: one new segment, then the merges it calls for. */
export async function applyChanges(base: IndexState, changes: readonly DocChange[], yielder: Yielder): Promise<StagedState> {
  await base.words.mapInTurns(yielder);
  const stage = base.words.stage(changes.length);
  const pstage = base.prefixes ? base.prefixes.stage(stage) : null;
  const p: Parts = {
    settings: base.settings,
    tokenizer: base.tokenizer,
    names: base.names,
    words: base.words,
    stage,
    prefixes: base.prefixes,
    pstage,
  };
  // Blocks sized to the batch: a write of one document does not set aside 256 KiB.
  const slab = new Slab(Math.min(1 << 16, Math.max(1024, changes.length * 256)));
  const ctx = { names: p.names, rules: base.rules, tokenizer: p.tokenizer, words: stage, keepValue: valuePredicate(base.settings), slab };
  const sortedChanges = [...changes].sort((a, b) => a.docid - b.docid);
  const docs: number[] = [];
  const recs: DocRecord[] = [];
  const deleted: number[] = [];
  for (const c of sortedChanges) {
    if (c.after) {
      docs.push(c.docid);
      recs.push(extractRecord(c.after, ctx));
    } else if (base.view.ownerOf(c.docid) >= 0) deleted.push(c.docid);
    await yielder.maybe();
  }
  await pstage?.syncInTurns(yielder);
  let seq = base.nextSeq;
  const seg = await buildSegment(seq++, Uint32Array.from(docs), recs, Uint32Array.from(deleted), WORD_LISTS(stage.size), pstage, yielder);
  let view = await base.view.adding(seg, yielder);
  const put = new Set<Segment>([seg]);
  const removed: number[] = [];
  let merged = false;
  for (let m = nextMerge(view); m; m = nextMerge(view)) {
    const [from, to] = m;
    const one = await mergeSegments(view, from, to, seq++, yielder);
    for (const s of view.segments.slice(from, to)) {
      if (!put.delete(s)) removed.push(s.seq);
    }
    put.add(one);
    view = await view.replacing(from, to, one, yielder);
    merged = true;
  }
  const sorted = await sortedWith(base.sorted, stage, yielder);
  const staged = assemble(p, sorted, view, seq, { put: [...put], removed, all: false, merged });
  const gone = Uint32Array.from(sortedChanges.filter((c) => base.view.ownerOf(c.docid) >= 0), (c) => c.docid);
  await carryMemos(base, staged.state, seg, gone.length === 0, () => batchDelta(base, staged.state, stage, seg, gone, yielder), yielder);
  return staged;
}
