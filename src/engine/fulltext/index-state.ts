// The published, immutable-by-convention search state of one index, and how a batch of
// document changes produces the next one. Searches hold a state for their whole run,
// so a batch never shows half-applied.

import type { Doc } from '../documents/primary-key.js';
import type { DocChange } from '../structures/search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import { Tokenizer } from '../tokenizer/index.js';
import { extractRecord, fieldWordCount, Slab, type DocRecord } from './doc-record.js';
import { FieldNames, FieldRules } from './field-table.js';
import { valuePredicate } from './field-values.js';
import { buildPostings, EMPTY_POSTING, mergePosting, PostingDelta, WORD_LISTS, type Posting } from './postings.js';
import { PrefixTable, type PrefixStage } from './prefix-table.js';
import { buildSynonyms, type Synonyms } from './synonyms.js';
import { SortedWords, WordTable, type WordStage } from './word-table.js';
import type { Yielder } from './yielder.js';

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
  readonly postings: readonly Posting[];
  readonly prefixes: PrefixTable | null;
  readonly prefixPostings: readonly Posting[] | null;
  readonly records: readonly (DocRecord | undefined)[];
  /** Live docids, ascending. */
  readonly docids: Uint32Array;
  readonly synonyms: Synonyms;
  /** Per-state memo of derived data (sort orders, ...), filled on first use. */
  readonly memo: Map<string, unknown>;
}

/**
 * Words of field `fid` in every document (by docid), built once per state: exactness
 * checks ask it for thousands of documents per query.
 */
export function fieldWordCounts(state: IndexState, fid: number): Uint16Array {
  const key = `fwc:${fid}`;
  let t = state.memo.get(key) as Uint16Array | undefined;
  if (!t) {
    t = new Uint16Array(state.records.length + 1);
    state.records.forEach((rec, d) => {
      if (rec) t![d] = fieldWordCount(rec, fid);
    });
    state.memo.set(key, t);
  }
  return t;
}

export function tokenizerFor(settings: IndexSettings): Tokenizer {
  return new Tokenizer({
    separatorTokens: settings.separatorTokens,
    nonSeparatorTokens: settings.nonSeparatorTokens,
    dictionary: settings.dictionary,
    stopWords: settings.stopWords,
  });
}

function liveDocids(records: readonly (DocRecord | undefined)[]): Uint32Array {
  let n = 0;
  for (const r of records) if (r) n++;
  const out = new Uint32Array(n);
  let i = 0;
  for (let d = 0; d < records.length; d++) if (records[d]) out[i++] = d;
  return out;
}

/** Everything a new state is assembled from, before it is published. */
export interface StagedState {
  state: IndexState;
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
  records: (DocRecord | undefined)[];
}

async function assembleFull(p: Parts, yielder: Yielder): Promise<StagedState> {
  p.pstage?.sync();
  const wordCount = p.stage.size;
  const postings = await buildPostings(p.records, WORD_LISTS(wordCount), yielder);
  const prefixPostings = p.pstage ? await buildPostings(p.records, p.pstage, yielder) : null;
  const all: string[] = [];
  for (let w = 0; w < wordCount; w++) all.push(p.stage.word(w));
  await yielder.maybe();
  const sorted = SortedWords.build({ words: all });
  await yielder.maybe();
  sorted.prepare();
  await yielder.maybe();
  return finish(p, wordCount, sorted, postings, prefixPostings);
}

function finish(
  p: Parts,
  wordCount: number,
  sorted: SortedWords,
  postings: Posting[],
  prefixPostings: Posting[] | null,
): StagedState {
  const state: IndexState = {
    settings: p.settings,
    tokenizer: p.tokenizer,
    names: p.names,
    rules: new FieldRules(p.names, p.settings),
    words: p.words,
    wordCount,
    sorted,
    postings,
    prefixes: p.prefixes,
    prefixPostings,
    records: p.records,
    docids: liveDocids(p.records),
    synonyms: buildSynonyms(p.settings, p.tokenizer),
    memo: new Map(),
  };
  return {
    state,
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
    records: [],
  };
}

/** A state with every document indexed from scratch (initial load, reset, settings change). */
export async function buildFromDocuments(
  settings: IndexSettings,
  docs: AsyncIterable<[number, Doc]> | Iterable<[number, Doc]>,
  yielder: Yielder,
): Promise<StagedState> {
  const p = freshParts(settings, null, null);
  const rules = new FieldRules(p.names, settings);
  const ctx = { names: p.names, rules, tokenizer: p.tokenizer, words: p.stage, keepValue: valuePredicate(settings), slab: new Slab() };
  for await (const [docid, doc] of docs) {
    p.records[docid] = extractRecord(doc, ctx);
    await yielder.maybe();
  }
  return assembleFull(p, yielder);
}

/** A state from persisted tables and records (opening an index). */
export async function buildFromRecords(
  settings: IndexSettings,
  names: string[],
  words: string[],
  records: (DocRecord | undefined)[],
  yielder: Yielder,
): Promise<StagedState> {
  const p = freshParts(settings, new FieldNames(names), new WordTable(words));
  p.records = records;
  return assembleFull(p, yielder);
}

/** An empty state for a new index. */
export function emptyState(settings: IndexSettings): IndexState {
  const p = freshParts(settings, null, null);
  return finish(p, 0, SortedWords.empty(), [], p.prefixes ? [] : null).state;
}

/** Batches touching more than this share of the index rebuild every list at once. */
const FULL_BUILD_RATIO = 0.2;

/** The state after a batch of document changes. */
export async function applyChanges(base: IndexState, changes: readonly DocChange[], yielder: Yielder): Promise<StagedState> {
  const stage = base.words.stage();
  const pstage = base.prefixes ? base.prefixes.stage(stage) : null;
  const p: Parts = {
    settings: base.settings,
    tokenizer: base.tokenizer,
    names: base.names,
    words: base.words,
    stage,
    prefixes: base.prefixes,
    pstage,
    records: base.records.slice(),
  };
  const ctx = { names: p.names, rules: base.rules, tokenizer: p.tokenizer, words: stage, keepValue: valuePredicate(base.settings), slab: new Slab(1 << 14) };
  const sortedChanges = [...changes].sort((a, b) => a.docid - b.docid);
  const changed = new Set<number>();
  for (const c of sortedChanges) {
    changed.add(c.docid);
    p.records[c.docid] = c.after ? extractRecord(c.after, ctx) : undefined;
    await yielder.maybe();
  }
  while (p.records.length > 0 && p.records[p.records.length - 1] === undefined) p.records.pop();
  if (changed.size > base.docids.length * FULL_BUILD_RATIO) return assembleFull(p, yielder);

  pstage?.sync();
  // Every entry of every touched list asks this: a flag per docid beats a set lookup.
  const changedFlags = new Uint8Array(Math.max(base.records.length, p.records.length) + 1);
  for (const d of changed) changedFlags[d] = 1;
  const isChanged = (d: number): boolean => changedFlags[d] === 1;
  const update = async (lists: readonly Posting[], count: number, keys: ConstructorParameters<typeof PostingDelta>[0]) => {
    const out = lists.slice();
    while (out.length < count) out.push(EMPTY_POSTING);
    const delta = new PostingDelta(keys);
    const touched = new Set<number>();
    for (const c of sortedChanges) {
      const old = base.records[c.docid];
      if (old) delta.touchRecord(old, touched);
      const rec = p.records[c.docid];
      if (rec) delta.addRecord(c.docid, rec);
      await yielder.maybe();
    }
    for (const list of delta.added.keys()) touched.add(list);
    for (const list of touched) {
      out[list] = mergePosting(out[list] ?? EMPTY_POSTING, isChanged, delta.added.get(list));
      await yielder.maybe();
    }
    return out;
  };
  const postings = await update(base.postings, stage.size, WORD_LISTS(stage.size));
  const prefixPostings = pstage && base.prefixPostings ? await update(base.prefixPostings, pstage.count, pstage) : null;
  const added = stage.added.map((word, i) => ({ id: stage.base + i, word }));
  const sorted = base.sorted.merge(added);
  if (sorted !== base.sorted) {
    await yielder.maybe();
    sorted.prepare();
  }
  return finish(p, stage.size, sorted, postings, prefixPostings);
}
