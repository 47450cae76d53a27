import { byteOrder } from '../filter/rules.js';
import { Bitmap, EMPTY, lowerBound } from './bitmap.js';

/** One normalized string value of a field: its documents, and how each document spelled it. */
export interface StringValue {
  key: string;
  docids: Uint32Array;
  /** Original spelling → documents using it (usually a single entry). */
  spellings: Map<string, Uint32Array>;
}

/** Postings of sorted values laid end to end: value `i` owns `docids[offsets[i] .. offsets[i + 1])`. */
export interface Runs {
  offsets: Uint32Array;
  docids: Uint32Array;
}

function runsOf<K>(keys: ArrayLike<K>, posting: (k: K) => Uint32Array): Runs {
  const offsets = new Uint32Array(keys.length + 1);
  for (let i = 0; i < keys.length; i++) offsets[i + 1] = offsets[i]! + posting(keys[i]!).length;
  const docids = new Uint32Array(offsets[keys.length]!);
  for (let i = 0; i < keys.length; i++) docids.set(posting(keys[i]!), offsets[i]!);
  return { offsets, docids };
}

export interface Bound<T> {
  value: T;
  inclusive: boolean;
}

/** A field's values per document, for the features that start from documents (distinct, small facet counts). */
export interface ForwardIndex {
  /** `values[offsets[d] .. offsets[d + 1])` are the value slots of docid `d`. */
  offsets: Uint32Array;
  values: Uint32Array;
  /** Slot → number, or the {@link StringValue}. Numbers come first, in ascending order, then strings. */
  slots: (number | StringValue)[];
}

/**
 * The facet values of one field: docids per normalized string and per number, and the sets
 * behind `EXISTS`, `IS NULL` and `IS EMPTY`. Sorted views for ranges, prefixes and sorting,
 * and the per-document view, are built on first use and dropped whenever the field changes.
 */
export class FieldFacets {
  strings = new Map<string, StringValue>();
  numbers = new Map<number, Uint32Array>();
  exists: Uint32Array = EMPTY;
  nulls: Uint32Array = EMPTY;
  empties: Uint32Array = EMPTY;
  /** Per docid chunk, the values with documents in it: what a chunk's stored record lists. */
  readonly numberChunks = new Map<number, Iterable<number>>();
  readonly stringChunks = new Map<number, Iterable<string>>();
  private sortedStrings: string[] | null = null;
  private sortedNumbers: Float64Array | null = null;
  private numRuns: Runs | null = null;
  private strRuns: Runs | null = null;
  private fwd: ForwardIndex | null = null;

  constructor(
    readonly name: string,
    readonly id: number,
  ) {}

  changed(): void {
    this.sortedStrings = null;
    this.sortedNumbers = null;
    this.numRuns = null;
    this.strRuns = null;
    this.fwd = null;
  }

  /** Takes the sorted numbers and their runs from a load that laid them out in that order. */
  loadedNumbers(keys: Float64Array, runs: Runs): void {
    this.sortedNumbers = keys;
    this.numRuns = runs;
  }

  /** Normalized string values in the reference's (byte) order. */
  stringKeys(): string[] {
    this.sortedStrings ??= [...this.strings.keys()].sort(byteOrder);
    return this.sortedStrings;
  }

  numberKeys(): Float64Array {
    this.sortedNumbers ??= Float64Array.from(this.numbers.keys()).sort();
    return this.sortedNumbers;
  }

  /** Every number's docids laid end to end in ascending number order, so a range is one slice. */
  numberRuns(): Runs {
    this.numRuns ??= runsOf(this.numberKeys(), (k) => this.numbers.get(k)!);
    return this.numRuns;
  }

  stringRuns(): Runs {
    this.strRuns ??= runsOf(this.stringKeys(), (k) => this.strings.get(k)!.docids);
    return this.strRuns;
  }

  /** Slots `[from, to)` of the sorted numbers between the bounds. */
  numberRange(lo: Bound<number> | null, hi: Bound<number> | null): [number, number] {
    const keys = this.numberKeys();
    if (lo && hi && (lo.value > hi.value || (lo.value === hi.value && !(lo.inclusive && hi.inclusive)))) return [0, 0];
    let from = lo ? lowerBound(keys, lo.value) : 0;
    if (lo && !lo.inclusive && keys[from] === lo.value) from++;
    let to = hi ? lowerBound(keys, hi.value, from) : keys.length;
    if (hi && hi.inclusive && keys[to] === hi.value) to++;
    return [from, Math.max(from, to)];
  }

  /** Slots `[from, to)` of the sorted strings between the bounds (byte order). */
  stringRange(lo: Bound<string> | null, hi: Bound<string> | null): [number, number] {
    const keys = this.stringKeys();
    if (lo && hi) {
      const c = byteOrder(lo.value, hi.value);
      if (c > 0 || (c === 0 && !(lo.inclusive && hi.inclusive))) return [0, 0];
    }
    let from = lo ? this.firstStringAtLeast(lo.value) : 0;
    if (lo && !lo.inclusive && keys[from] === lo.value) from++;
    let to = hi ? this.firstStringAtLeast(hi.value) : keys.length;
    if (hi && hi.inclusive && keys[to] === hi.value) to++;
    return [from, Math.max(from, to)];
  }

  /** Adds to `out` the documents with a number between the bounds. */
  orNumberRange(out: Bitmap, lo: Bound<number> | null, hi: Bound<number> | null): void {
    const [from, to] = this.numberRange(lo, hi);
    const runs = this.numberRuns();
    out.addSorted(runs.docids.subarray(runs.offsets[from], runs.offsets[to]));
  }

  /** Adds to `out` the documents with a normalized string between the bounds (byte order). */
  orStringRange(out: Bitmap, lo: Bound<string> | null, hi: Bound<string> | null): void {
    const [from, to] = this.stringRange(lo, hi);
    const runs = this.stringRuns();
    out.addSorted(runs.docids.subarray(runs.offsets[from], runs.offsets[to]));
  }

  orStringPrefix(out: Bitmap, prefix: string): void {
    const keys = this.stringKeys();
    let to = this.firstStringAtLeast(prefix);
    const from = to;
    while (to < keys.length && keys[to]!.startsWith(prefix)) to++;
    const runs = this.stringRuns();
    out.addSorted(runs.docids.subarray(runs.offsets[from], runs.offsets[to]));
  }

  /**
   * Adds to `out` the documents of `among` whose value falls in the given slot ranges of the
   * sorted numbers and strings: cheaper than the postings when `among` is small.
   */
  orRangeAmong(out: Bitmap, among: Bitmap, numbers: [number, number], strings: [number, number]): void {
    const fwd = this.forward();
    const numCount = this.numberKeys().length;
    const limit = fwd.offsets.length - 1;
    for (const d of among) {
      if (d >= limit) break;
      for (let i = fwd.offsets[d]!; i < fwd.offsets[d + 1]!; i++) {
        const slot = fwd.values[i]!;
        const hit = slot < numCount ? slot >= numbers[0] && slot < numbers[1] : slot - numCount >= strings[0] && slot - numCount < strings[1];
        if (hit) {
          out.add(d);
          break;
        }
      }
    }
  }

  orStringContains(out: Bitmap, needle: string): void {
    for (const v of this.strings.values()) if (v.key.includes(needle)) out.addSorted(v.docids);
  }

  private firstStringAtLeast(v: string): number {
    const keys = this.stringKeys();
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (byteOrder(keys[mid]!, v) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * The spelling shown for a value: the one of the lowest docid among `candidates` (or of all
   * its documents), as the reference reads the original of the first document it meets.
   */
  original(v: StringValue, candidates: Bitmap | null): string {
    if (v.spellings.size === 1) return v.spellings.keys().next().value!;
    let best = '';
    let bestDoc = Infinity;
    for (const [orig, docids] of v.spellings) {
      for (let i = 0; i < docids.length && docids[i]! < bestDoc; i++) {
        if (!candidates || candidates.has(docids[i]!)) {
          best = orig;
          bestDoc = docids[i]!;
          break;
        }
      }
    }
    return best;
  }

  /** Per-document values, built once per version of the field. */
  forward(): ForwardIndex {
    if (this.fwd) return this.fwd;
    const slots: (number | StringValue)[] = [];
    const postings: Uint32Array[] = [];
    for (const n of this.numberKeys()) {
      slots.push(n);
      postings.push(this.numbers.get(n)!);
    }
    for (const k of this.stringKeys()) {
      const v = this.strings.get(k)!;
      slots.push(v);
      postings.push(v.docids);
    }
    let max = -1;
    for (const p of postings) if (p.length > 0 && p[p.length - 1]! > max) max = p[p.length - 1]!;
    const offsets = new Uint32Array(max + 2);
    for (const p of postings) for (let i = 0; i < p.length; i++) offsets[p[i]! + 1]!++;
    for (let d = 1; d < offsets.length; d++) offsets[d]! += offsets[d - 1]!;
    const fill = offsets.slice(0, Math.max(0, offsets.length - 1));
    const values = new Uint32Array(offsets[offsets.length - 1] ?? 0);
    postings.forEach((p, slot) => {
      for (let i = 0; i < p.length; i++) values[fill[p[i]!]!++] = slot;
    });
    this.fwd = { offsets, values, slots };
    return this.fwd;
  }
}
