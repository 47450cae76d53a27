// Prefixes indexed at indexing time (`prefixSearch: indexingTime`).
//
// A one- or two-letter query prefix can match thousands of words; instead of reading
// all their lists, the index keeps one list per short prefix holding, for each
// document and field, the first position where a word with that prefix occurs. That is
// exact for a prefix at query position 0 (a one-word query); after other words the first
// position in each field stands for the others.

import type { WordStage } from './word-table.js';
import type { ListKeys } from './postings.js';
import { runSteps, runStepsInTurns, type Yielder } from '../../util/yielder.js';

/** Lengths (in characters) of the prefixes that get their own list. */
export const INDEXED_PREFIX_LENGTHS = [1, 2] as const;
const SLOTS = INDEXED_PREFIX_LENGTHS.length;

/** The indexed prefixes of a word, shortest first. */
export function indexedPrefixes(word: string): string[] {
  const out: string[] = [];
  let i = 0;
  let chars = 0;
  for (const len of INDEXED_PREFIX_LENGTHS) {
    while (chars < len && i < word.length) {
      const c = word.charCodeAt(i);
      i += c >= 0xd800 && c <= 0xdbff && i + 1 < word.length ? 2 : 1;
      chars++;
    }
    if (chars < len) break;
    out.push(word.slice(0, i));
  }
  return out;
}

/** Prefix ids and, per word id, the ids of its indexed prefixes. Append-only like words. */
export class PrefixTable {
  readonly keys: string[] = [];
  private readonly ids = new Map<string, number>();
  /** SLOTS entries per word id, -1 when the word is too short. */
  ofWord: Int32Array = new Int32Array(0);
  words = 0;

  get size(): number {
    return this.keys.length;
  }

  id(prefix: string): number | undefined {
    return this.ids.get(prefix);
  }

  stage(words: WordStage): PrefixStage {
    return new PrefixStage(this, words);
  }

  commit(stage: PrefixStage): void {
    for (const k of stage.addedKeys) {
      this.ids.set(k, this.keys.length);
      this.keys.push(k);
    }
    this.ofWord = stage.ofWord;
    this.words = stage.words.size;
  }
}

export class PrefixStage implements ListKeys {
  readonly addedKeys: string[] = [];
  private readonly fresh = new Map<string, number>();
  ofWord: Int32Array;
  readonly firstPerField = true;
  readonly perWord = SLOTS;

  constructor(
    private readonly table: PrefixTable,
    readonly words: WordStage,
  ) {
    this.ofWord = table.ofWord;
  }

  get count(): number {
    return this.table.size + this.addedKeys.length;
  }

  get slots(): Int32Array {
    return this.ofWord;
  }

  private idOf(prefix: string): number {
    const known = this.table.id(prefix);
    if (known !== undefined) return known;
    let id = this.fresh.get(prefix);
    if (id === undefined) {
      id = this.table.size + this.addedKeys.length;
      this.fresh.set(prefix, id);
      this.addedKeys.push(prefix);
    }
    return id;
  }

  /** Assigns prefix ids to every word added to the stage so far. */
  sync(): void {
    runSteps(this.syncSteps());
  }

  /** `sync`, giving the event loop turns: a large batch adds a hundred thousand words. */
  syncInTurns(yielder: Yielder): Promise<void> {
    return runStepsInTurns(this.syncSteps(), yielder);
  }

  private *syncSteps(): Generator<void, void> {
    const from = this.ofWord.length / SLOTS;
    const to = this.words.size;
    if (to <= from) return;
    // The published table reads only its own words' slots: the new ones are written past
    // them, in the same buffer while it has room (grown by doubling, not copied every batch).
    let buffer = this.ofWord.buffer as ArrayBuffer;
    if (this.ofWord.byteOffset !== 0 || buffer.byteLength < to * SLOTS * 4) {
      const grown = new Int32Array(Math.max(to * SLOTS, (2 * buffer.byteLength) / 4, 1024));
      grown.set(this.ofWord);
      buffer = grown.buffer;
      yield;
    }
    const next = new Int32Array(buffer, 0, to * SLOTS);
    next.fill(-1, from * SLOTS);
    for (let w = from; w < to; w++) {
      const prefixes = indexedPrefixes(this.words.word(w));
      for (let k = 0; k < prefixes.length; k++) next[w * SLOTS + k] = this.idOf(prefixes[k]!);
      if ((w & 4095) === 4095) yield;
    }
    this.ofWord = next;
  }
}
