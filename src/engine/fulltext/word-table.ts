// The word dictionary: word ↔ word id, and a sorted view for prefix and typo lookups.
//
// Word ids are dense and append-only, so posting lists and document records can be
// arrays indexed by id. Words that no document uses any more keep their id (their
// posting list is simply empty) until the next full rebuild renumbers everything.

import { runSteps, runStepsInTurns, type Yielder } from '../../util/yielder.js';
import { sortInTurns } from '../../util/sort-in-turns.js';
import { SplitMap } from '../../util/split-map.js';
import { ChunkedList } from '../../util/chunked-list.js';

/**
 * Word ids shared by all states of an index; new words become visible at publish. The
 * word → id map only serves indexing: it is built on the first batch after an index is
 * opened (searches find words in the sorted dictionary), so opening stays cheap.
 */
export class WordTable {
  /** Words by id; those past `count` belong to a batch not yet published, written ahead of it. */
  private readonly list: ChunkedList<string>;
  private count: number;
  /** Split: a million words must not be rehashed at once as the map grows. */
  private map: SplitMap<string, number> | null = null;
  /** Words [0, mapped) are in the map; the rest were committed since and are added before the next lookup. */
  private mapped = 0;
  /** The stage whose words `list` holds past `count`. */
  private ahead: WordStage | null = null;

  constructor(words: readonly string[] = []) {
    this.list = new ChunkedList(words);
    this.count = this.list.length;
  }

  get size(): number {
    return this.count;
  }

  word(id: number): string {
    return this.list.at(id)!;
  }

  private get ids(): SplitMap<string, number> {
    // Asked once per word a batch indexes: no generator unless there is something to map.
    if (this.map === null || this.mapped < this.count) runSteps(this.mapSteps());
    return this.map!;
  }

  /**
   * Maps the words not mapped yet, pausing every 1,024 with `mapped` naming exactly those in the
   * map: a new word costs a few microseconds (its first hash, a part's rehash now and then),
   * and steps of 16,384 held the thread 50-85 ms at each batch of an import.
   */
  private *mapSteps(): Generator<void, void> {
    const m = (this.map ??= new SplitMap<string, number>());
    while (this.mapped < this.count) {
      const id = this.mapped++;
      m.set(this.list.at(id)!, id);
      if ((id & 1023) === 1023) yield;
    }
  }

  /**
   * Brings the word → id map up to date a slice at a time: a million words take the better
   * part of a second to map, which a batch must not spend in one go on the serving thread.
   */
  async mapInTurns(yielder: Yielder): Promise<void> {
    await runStepsInTurns(this.mapSteps(), yielder);
  }

  id(word: string): number | undefined {
    return this.ids.get(word);
  }

  /**
   * A scratch space for one batch: new words get ids after the published ones. `documents`:
   * how many the batch indexes, when known, to size its cache of recent words.
   */
  stage(documents?: number): WordStage {
    return new WordStage(this, recentSlots(documents));
  }

  /** Writes a stage's words after the published ones, in turns, so that `commit` has nothing left to do. */
  async writeAhead(stage: WordStage, yielder: Yielder): Promise<void> {
    if (stage.base !== this.count) throw new Error('word table changed under a staged batch');
    this.ahead = null;
    this.list.truncate(stage.base);
    for (let i = 0; i < stage.added.length; i++) {
      this.list.push(stage.added[i]!);
      if ((i & 16383) === 16383) await yielder.maybe();
    }
    this.ahead = stage;
  }

  /**
   * Makes a stage's words permanent. Called at publish, where nothing may take long (see
   * `writeAhead`); the map learns them before the next batch's lookups (`mapInTurns`).
   */
  commit(stage: WordStage): void {
    if (stage.base !== this.count) throw new Error('word table changed under a staged batch');
    const end = stage.base + stage.added.length;
    if (this.ahead !== stage || this.list.length !== end) {
      this.list.truncate(stage.base);
      for (const w of stage.added) this.list.push(w);
    }
    this.ahead = null;
    this.count = end;
  }
}

/**
 * Slots of a stage's cache of the words it looked up last: a power of two, four per document
 * up to 2^17. On the `scale` corpus (a long tail of rare words: 1.28M distinct words at a
 * million documents) 2^14 slots keyed by a word's outer characters missed 23.8% of the
 * tokens at 150,000 documents; 2^16 keyed by all its characters 11.1%, 2^18 7.0%. A batch of
 * 50,000 documents took 1,230-1,400 ms instead of 1,500-1,600 with 2^16 or 2^17 slots at
 * 300,000 documents. A one-document write keeps a small cache (the minimum).
 */
const MIN_RECENT_SLOTS = 1 << 10;
const MAX_RECENT_SLOTS = 1 << 17;

function recentSlots(documents: number | undefined): number {
  if (documents === undefined) return MAX_RECENT_SLOTS;
  let n = MIN_RECENT_SLOTS;
  while (n < documents * 4 && n < MAX_RECENT_SLOTS) n *= 2;
  return n;
}

/** A slot for a word, from all of its characters. */
function recentSlot(w: string, mask: number): number {
  let h = w.length;
  for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 0x9e3779b1);
  h = Math.imul(h ^ (h >>> 15), 0x165667b1);
  return (h ^ (h >>> 13)) & mask;
}

export class WordStage {
  readonly base: number;
  readonly added: string[] = [];
  private readonly fresh = new Map<string, number>();
  /**
   * The words looked up last and their ids, one per slot. Each token of a batch asks for its
   * word's id, and a lookup in the map of a large index costs ~0.15-0.4 us, mostly cache
   * misses (at 200k words, 12% of an import's time); the common words, three tokens in four
   * of English text, are found here for about a third of that.
   */
  private readonly recentWords: (string | null)[];
  private readonly recentIds: Uint32Array;
  private readonly recentMask: number;

  constructor(
    private readonly table: WordTable,
    slots: number = MIN_RECENT_SLOTS,
  ) {
    this.base = table.size;
    this.recentWords = new Array<string | null>(slots).fill(null);
    this.recentIds = new Uint32Array(slots);
    this.recentMask = slots - 1;
  }

  get size(): number {
    return this.base + this.added.length;
  }

  idOf(word: string): number {
    const slot = recentSlot(word, this.recentMask);
    if (this.recentWords[slot] === word) return this.recentIds[slot]!;
    const id = this.lookUp(word);
    this.recentWords[slot] = word;
    this.recentIds[slot] = id;
    return id;
  }

  private lookUp(word: string): number {
    // A fresh index has an empty table: one lookup instead of two per token.
    if (this.base > 0) {
      const known = this.table.id(word);
      if (known !== undefined) return known;
    }
    let id = this.fresh.get(word);
    if (id === undefined) {
      id = this.base + this.added.length;
      this.fresh.set(word, id);
      this.added.push(word);
    }
    return id;
  }

  word(id: number): string {
    return id < this.base ? this.table.word(id) : this.added[id - this.base]!;
  }
}

function lowerBound(sorted: readonly string[], key: string, lo = 0, hi = sorted.length): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Length of the common prefix of two words, in code units, capped at 255 (the table's bytes). */
function commonPrefix(a: string, b: string): number {
  const lim = Math.min(a.length, b.length, 255);
  let l = 0;
  while (l < lim && a.charCodeAt(l) === b.charCodeAt(l)) l++;
  return l;
}

/** First character (code point) of a word, as a string. */
export function firstChar(word: string): string {
  const c = word.charCodeAt(0);
  return c >= 0xd800 && c <= 0xdbff && word.length > 1 ? word.slice(0, 2) : word.slice(0, 1);
}

/** The words of a SortedWords as one array of UTF-16 code units; word i is units[starts[i], starts[i + 1]). */
export interface WordCodes {
  units: Uint16Array;
  starts: Uint32Array;
}

const byWord = (a: { word: string }, b: { word: string }) => (a.word < b.word ? -1 : a.word > b.word ? 1 : 0);

/** Words handled between two looks at the clock while the dictionary is built. */
const TURN_WORDS = 16384;

/** The distinct first characters of words taken in order, and the index range of each. */
class FirstChars {
  readonly chars: string[] = [];
  private readonly ranges = new Map<string, [number, number]>();
  private readonly scattered = new Set<string>();

  /** The first unit of the last word added by its code units, and the one after a high surrogate (-1 if none). */
  private lastUnit = -1;
  private lastLow = -1;
  /** The range of the last word's first character, unless it is scattered. */
  private lastRange: [number, number] | null = null;

  /** No string is made unless the first character changes (an index opens with a million words). */
  add(word: string, i: number): void {
    const c = word.length > 0 ? word.charCodeAt(0) : -1;
    const low = c >= 0xd800 && c <= 0xdbff && word.length > 1 ? word.charCodeAt(1) : -1;
    this.addCode(c, low, i);
  }

  /** `add` for the word held by units[start, end): a string is made only when the first character changes. */
  addUnits(units: Uint16Array, start: number, end: number, i: number): void {
    const c = start < end ? units[start]! : -1;
    const low = c >= 0xd800 && c <= 0xdbff && end - start > 1 ? units[start + 1]! : -1;
    this.addCode(c, low, i);
  }

  /** A word whose first code unit is `c` (-1: the empty word), followed by `low` after a high surrogate (else -1). */
  private addCode(c: number, low: number, i: number): void {
    if (i > 0 && c === this.lastUnit && low === this.lastLow) {
      // The same first character as the word before: extend its run.
      const r = this.lastRange;
      if (r !== null && r[1] === i) r[1] = i + 1;
      return;
    }
    this.lastUnit = c;
    this.lastLow = low;
    const f = c < 0 ? '' : low >= 0 ? String.fromCharCode(c, low) : String.fromCharCode(c);
    const known = this.ranges.get(f);
    // Runs are contiguous in code-unit order; were one not, its range is every word.
    if (known) {
      this.scattered.add(f);
      this.lastRange = null;
    } else {
      this.lastRange = [i, i + 1];
      this.ranges.set(f, this.lastRange);
    }
    this.chars.push(f);
  }

  /** The ranges, once every one of the `n` words was added. */
  rangesFor(n: number): Map<string, [number, number]> {
    for (const f of this.scattered) this.ranges.set(f, [0, n]);
    return this.ranges;
  }
}

/** Runs of words sharing a prefix up to this long are found by reading prefix lengths in turn. */
const SHORT_RUN = 16;
/** Words per block of the prefix-length table (a power of two). */
const BLOCK_BITS = 5;
const BLOCK = 1 << BLOCK_BITS;

/**
 * Every word in code-unit order (the order of the reference's FST for the common
 * scripts), with the word ids alongside. Immutable: a batch that adds words builds a
 * new one by merging.
 */
export class SortedWords {
  /** Distinct first characters, for the typo rule that allows changing the first one. */
  readonly firstChars: string[];

  /** Index range of the words starting with each first character. */
  private readonly charRanges: Map<string, [number, number]>;

  constructor(
    readonly words: string[],
    readonly ids: Uint32Array,
    firsts?: FirstChars,
  ) {
    const f = firsts ?? new FirstChars();
    if (!firsts) for (let i = 0; i < words.length; i++) f.add(words[i]!, i);
    this.firstChars = f.chars;
    this.charRanges = f.rangesFor(words.length);
  }

  /** Index range [lo, hi) holding every word that starts with the character `c`. */
  charRange(c: string): [number, number] {
    return this.charRanges.get(c) ?? [0, 0];
  }

  /** Index of `word` in [lo, hi), or -1. */
  indexIn(word: string, lo: number, hi: number): number {
    const i = lowerBound(this.words, word, lo, hi);
    return i < hi && this.words[i] === word ? i : -1;
  }

  static empty(): SortedWords {
    return new SortedWords([], new Uint32Array(0));
  }

  static build(table: { words: readonly string[] }): SortedWords {
    const order = Array.from(table.words.keys());
    const w = table.words;
    order.sort((a, b) => (w[a]! < w[b]! ? -1 : w[a]! > w[b]! ? 1 : 0));
    return new SortedWords(order.map((i) => w[i]!), Uint32Array.from(order));
  }

  /** A new view with `added` (id, word) pairs merged in. */
  merge(added: readonly { id: number; word: string }[]): SortedWords {
    return this.mergeWith(added, null) as SortedWords;
  }

  /** `merge`, giving the event loop turns: a batch merges its new words into a dictionary of a million. */
  async mergeInTurns(added: readonly { id: number; word: string }[], yielder: Yielder): Promise<SortedWords> {
    return this.mergeWith(added, yielder);
  }

  private mergeWith(added: readonly { id: number; word: string }[], yielder: Yielder | null): SortedWords | Promise<SortedWords> {
    if (added.length === 0) return this;
    if (!yielder) return runSteps(this.mergeSteps([...added].sort(byWord)));
    return sortInTurns(added, byWord, yielder).then((extra) => runStepsInTurns(this.mergeSteps(extra), yielder));
  }

  /**
   * Merges words absent from this dictionary, sorted, into a new one. Only the new words and
   * their neighbours are compared as strings: the runs of old words between two new ones are
   * copied with their common-prefix lengths and code units as they are, because touching a
   * million strings scattered over the heap cost close to a second per batch (merge, prefix
   * lengths and code units alike) however few words the batch added.
   */
  private *mergeSteps(extra: readonly { id: number; word: string }[]): Generator<void, SortedWords> {
    const old = this.words;
    const oldIds = this.ids;
    const n0 = old.length;
    const lcp0 = this.level0();
    const { units: u0, starts: s0 } = this.codes();
    // Where each new word goes among the old ones: a binary search from the last one's place.
    const at = new Uint32Array(extra.length);
    let added = 0;
    for (let j = 0, lo = 0; j < extra.length; j++) {
      lo = at[j] = lowerBound(old, extra[j]!.word, lo, n0);
      added += extra[j]!.word.length;
      if ((j & 1023) === 1023) yield;
    }
    const n = n0 + extra.length;
    const words = new Array<string>(n);
    const ids = new Uint32Array(n);
    const lcp = new Uint8Array(n);
    const starts = new Uint32Array(n + 1);
    const units = new Uint16Array(s0[n0]! + added);
    let k = 0;
    let off = 0;
    let i = 0;
    let copied = 0;
    for (let j = 0; j <= extra.length; j++) {
      // The old words before the next new one, by pieces; the first gets its prefix length
      // with whatever now precedes it.
      const end = j < extra.length ? at[j]! : n0;
      const runStart = k;
      while (i < end) {
        const b = Math.min(end, i + TURN_WORDS);
        const first = k;
        for (let t = i; t < b; t++) words[k++] = old[t]!;
        ids.set(oldIds.subarray(i, b), first);
        lcp.set(lcp0.subarray(i, b), first);
        const shift = off - s0[i]!;
        for (let t = i; t < b; t++) starts[first + t - i] = s0[t]! + shift;
        units.set(u0.subarray(s0[i]!, s0[b]!), off);
        off += s0[b]! - s0[i]!;
        copied += b - i;
        i = b;
        if (copied >= TURN_WORDS) {
          copied = 0;
          yield;
        }
      }
      if (runStart < k) lcp[runStart] = runStart === 0 ? 0 : commonPrefix(words[runStart - 1]!, words[runStart]!);
      if (j === extra.length) break;
      const w = extra[j]!.word;
      words[k] = w;
      ids[k] = extra[j]!.id;
      lcp[k] = k === 0 ? 0 : commonPrefix(words[k - 1]!, w);
      starts[k] = off;
      for (let c = 0; c < w.length; c++) units[off + c] = w.charCodeAt(c);
      off += w.length;
      k++;
      // New words count towards the turn too: a first batch is 200,000 of them and no old one.
      if (++copied >= TURN_WORDS) {
        copied = 0;
        yield;
      }
    }
    starts[n] = off;
    const firsts = new FirstChars();
    for (let x = 0; x < n; x++) {
      firsts.addUnits(units, starts[x]!, starts[x + 1]!, x);
      if ((x & (TURN_WORDS - 1)) === TURN_WORDS - 1) yield;
    }
    const merged = new SortedWords(words, ids, firsts);
    merged.lcp0 = lcp;
    merged.flat = { units, starts };
    return merged;
  }

  get size(): number {
    return this.words.length;
  }

  /** The id of `word`, or undefined. */
  idOf(word: string): number | undefined {
    const i = lowerBound(this.words, word);
    return i < this.words.length && this.words[i] === word ? this.ids[i] : undefined;
  }

  /** Index range [lo, hi) of the words starting with `prefix`. */
  prefixRange(prefix: string, lo = 0, hi = this.words.length): [number, number] {
    const a = lowerBound(this.words, prefix, lo, hi);
    const b = lowerBound(this.words, prefix + '\uffff', a, hi);
    return [a, b];
  }

  /** Common-prefix length of each word with the one before it (see `prefixLengths`). */
  private lcp0: Uint8Array | null = null;
  /**
   * Sparse table of range minima over the prefix lengths' blocks of BLOCK words: level k
   * holds, per block, the least prefix length of the 2^k blocks from it. The end of a run of
   * words sharing a prefix is found without comparing strings, by whole blocks. Over blocks
   * rather than words, it takes a 32nd of the memory and of the time a batch spends
   * rebuilding it (27 MB and about 0.1 s per batch at a million words, mostly fresh pages).
   */
  private table: Uint8Array[] | null = null;

  private blockTable(): Uint8Array[] {
    if (!this.table) this.table = runSteps(this.buildBlockTable());
    return this.table;
  }

  private level0(): Uint8Array {
    return (this.lcp0 ??= runSteps(this.buildLevel0()));
  }

  private *buildLevel0(): Generator<void, Uint8Array> {
    const n = this.words.length;
    const lcp = new Uint8Array(n);
    for (let i = 1; i < n; i++) {
      lcp[i] = commonPrefix(this.words[i - 1]!, this.words[i]!);
      if (i % TURN_WORDS === 0) yield;
    }
    return lcp;
  }

  /** The table's work in steps: at each `yield` the event loop may get a turn. */
  private *buildBlockTable(): Generator<void, Uint8Array[]> {
    const lcp = this.lcp0 ?? (this.lcp0 = yield* this.buildLevel0());
    const blocks = lcp.length >>> BLOCK_BITS;
    const mins = new Uint8Array(blocks);
    for (let b = 0; b < blocks; b++) {
      let m = 255;
      for (let i = b << BLOCK_BITS, end = i + BLOCK; i < end; i++) if (lcp[i]! < m) m = lcp[i]!;
      mins[b] = m;
      if ((b & 1023) === 1023) yield;
    }
    const levels = [mins];
    for (let k = 1; 1 << k <= blocks; k++) {
      const prev = levels[k - 1]!;
      const half = 1 << (k - 1);
      const cur = new Uint8Array(blocks - (1 << k) + 1);
      for (let i = 0; i < cur.length; i++) cur[i] = Math.min(prev[i]!, prev[i + half]!);
      levels.push(cur);
    }
    return levels;
  }

  /** Common-prefix length (code units, capped at 255) of each word with the one before it. */
  prefixLengths(): Uint8Array {
    return this.level0();
  }

  private flat: WordCodes | null = null;

  /**
   * Every word's code units laid end to end, in order: the typo search reads the words of a
   * first letter one after the other, and strings scattered over the heap cost a cache miss
   * each. Built on first use.
   */
  codes(): WordCodes {
    if (!this.flat) this.flat = runSteps(this.buildCodes());
    return this.flat;
  }

  private *buildCodes(): Generator<void, WordCodes> {
    const n = this.words.length;
    const starts = new Uint32Array(n + 1);
    let total = 0;
    for (let i = 0; i < n; i++) {
      starts[i] = total;
      total += this.words[i]!.length;
    }
    starts[n] = total;
    yield;
    const units = new Uint16Array(total);
    for (let i = 0; i < n; i++) {
      const w = this.words[i]!;
      const at = starts[i]!;
      for (let k = 0; k < w.length; k++) units[at + k] = w.charCodeAt(k);
      if (i % TURN_WORDS === TURN_WORDS - 1) yield;
    }
    return { units, starts };
  }

  /** Builds the lookup tables now (off the query path) rather than on first use. */
  prepare(): this {
    this.blockTable();
    this.codes();
    return this;
  }

  /** `prepare`, giving the event loop turns. */
  async prepareInTurns(yielder: Yielder): Promise<this> {
    if (!this.table) this.table = await runStepsInTurns(this.buildBlockTable(), yielder);
    if (!this.flat) this.flat = await runStepsInTurns(this.buildCodes(), yielder);
    return this;
  }

  /** End (exclusive, at most hi) of the run of words sharing words[i]'s first `len` code units. */
  endOfPrefix(i: number, len: number, hi = this.words.length): number {
    if (len > 255) {
      const prefix = this.words[i]!.slice(0, len);
      return lowerBound(this.words, prefix + '\uffff', i, hi);
    }
    const t = this.blockTable();
    const lcp = this.lcp0!;
    // Most runs the typo search skips are a few words long: their neighbours' prefix
    // lengths, side by side, are read before the table's scattered levels.
    let j = i + 1;
    const near = Math.min(hi, i + SHORT_RUN);
    while (j < near && lcp[j]! >= len) j++;
    if (j < near || j >= hi) return j;
    // To the end of j's block, then by whole blocks before hi, then within the block reached.
    const blockEnd = Math.min(hi, ((j >>> BLOCK_BITS) + 1) << BLOCK_BITS);
    while (j < blockEnd && lcp[j]! >= len) j++;
    if (j < blockEnd || j >= hi) return j;
    let b = j >>> BLOCK_BITS;
    const full = hi >>> BLOCK_BITS;
    for (let k = t.length - 1; k >= 0; k--) {
      const span = 1 << k;
      if (b + span <= full && t[k]![b]! >= len) b += span;
    }
    j = b << BLOCK_BITS;
    while (j < hi && lcp[j]! >= len) j++;
    return j;
  }
}
