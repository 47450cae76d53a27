import { byteOrder } from '../filter/rules.js';
import { Bitmap, EMPTY, lowerBound } from './bitmap.js';

/** One normalized string value of a field: its documents, and how each document spelled it. */
export interface StringValue {
  key: string;
  docids: Uint32Array;
  /** Original spelling → documents using it (usually a single entry). */
  spellings: Map<string, Uint32Array>;
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
  private sortedStrings: string[] | null = null;
  private sortedNumbers: Float64Array | null = null;
  private fwd: ForwardIndex | null = null;

  constructor(
    readonly name: string,
    readonly id: number,
  ) {}

  changed(): void {
    this.sortedStrings = null;
    this.sortedNumbers = null;
    this.fwd = null;
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

  /** Adds to `out` the documents with a number between the bounds. */
  orNumberRange(out: Bitmap, lo: Bound<number> | null, hi: Bound<number> | null): void {
    if (lo && hi && (lo.value > hi.value || (lo.value === hi.value && !(lo.inclusive && hi.inclusive)))) return;
    const keys = this.numberKeys();
    let i = lo ? lowerBound(keys, lo.value) : 0;
    if (lo && !lo.inclusive && keys[i] === lo.value) i++;
    for (; i < keys.length; i++) {
      const k = keys[i]!;
      if (hi && (k > hi.value || (k === hi.value && !hi.inclusive))) break;
      out.addSorted(this.numbers.get(k)!);
    }
  }

  /** Adds to `out` the documents with a normalized string between the bounds (byte order). */
  orStringRange(out: Bitmap, lo: Bound<string> | null, hi: Bound<string> | null): void {
    if (lo && hi) {
      const c = byteOrder(lo.value, hi.value);
      if (c > 0 || (c === 0 && !(lo.inclusive && hi.inclusive))) return;
    }
    const keys = this.stringKeys();
    let i = lo ? this.firstStringAtLeast(lo.value) : 0;
    if (lo && !lo.inclusive && keys[i] === lo.value) i++;
    for (; i < keys.length; i++) {
      const k = keys[i]!;
      if (hi) {
        const c = byteOrder(k, hi.value);
        if (c > 0 || (c === 0 && !hi.inclusive)) break;
      }
      out.addSorted(this.strings.get(k)!.docids);
    }
  }

  orStringPrefix(out: Bitmap, prefix: string): void {
    const keys = this.stringKeys();
    for (let i = this.firstStringAtLeast(prefix); i < keys.length && keys[i]!.startsWith(prefix); i++) {
      out.addSorted(this.strings.get(keys[i]!)!.docids);
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
