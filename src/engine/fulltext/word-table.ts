// The word dictionary: word ↔ word id, and a sorted view for prefix and typo lookups.
//
// Word ids are dense and append-only, so posting lists and document records can be
// arrays indexed by id. Words that no document uses any more keep their id (their
// posting list is simply empty) until the next full rebuild renumbers everything.

/**
 * Word ids shared by all states of an index; new words become visible at publish. The
 * word → id map only serves indexing: it is built on the first batch after an index is
 * opened (searches find words in the sorted dictionary), so opening stays cheap.
 */
export class WordTable {
  readonly words: string[];
  private map: Map<string, number> | null = null;

  constructor(words: readonly string[] = []) {
    this.words = [...words];
  }

  get size(): number {
    return this.words.length;
  }

  private get ids(): Map<string, number> {
    if (this.map === null) {
      const m = new Map<string, number>();
      this.words.forEach((w, i) => m.set(w, i));
      this.map = m;
    }
    return this.map;
  }

  id(word: string): number | undefined {
    return this.ids.get(word);
  }

  private append(word: string): void {
    this.ids.set(word, this.words.length);
    this.words.push(word);
  }

  /** A scratch space for one batch: new words get ids after the published ones. */
  stage(): WordStage {
    return new WordStage(this);
  }

  /** Makes a stage's words permanent. */
  commit(stage: WordStage): void {
    if (stage.base !== this.words.length) throw new Error('word table changed under a staged batch');
    for (const w of stage.added) this.append(w);
  }
}

export class WordStage {
  readonly base: number;
  readonly added: string[] = [];
  private readonly fresh = new Map<string, number>();

  constructor(private readonly table: WordTable) {
    this.base = table.size;
  }

  get size(): number {
    return this.base + this.added.length;
  }

  idOf(word: string): number {
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
    return id < this.base ? this.table.words[id]! : this.added[id - this.base]!;
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

/** Runs of words sharing a prefix up to this long are found by reading prefix lengths in turn. */
const SHORT_RUN = 16;

/**
 * Every word in code-unit order (the order of the reference's FST for the common
 * scripts), with the word ids alongside. Immutable: a batch that adds words builds a
 * new one by merging.
 */
export class SortedWords {
  /** Distinct first characters, for the typo rule that allows changing the first one. */
  readonly firstChars: string[];

  /** Index range of the words starting with each first character. */
  private readonly charRanges = new Map<string, [number, number]>();

  constructor(
    readonly words: string[],
    readonly ids: Uint32Array,
  ) {
    const firsts: string[] = [];
    let last = '';
    for (let i = 0; i < words.length; i++) {
      const f = firstChar(words[i]!);
      if (f !== last) {
        const known = this.charRanges.get(f);
        // Runs are contiguous in code-unit order; were one not, its range is every word.
        this.charRanges.set(f, known ? [0, words.length] : [i, i + 1]);
        firsts.push(f);
        last = f;
      } else {
        const r = this.charRanges.get(f)!;
        if (r[1] === i) r[1] = i + 1;
      }
    }
    this.firstChars = firsts;
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
    if (added.length === 0) return this;
    const extra = [...added].sort((a, b) => (a.word < b.word ? -1 : a.word > b.word ? 1 : 0));
    const n = this.words.length + extra.length;
    const words = new Array<string>(n);
    const ids = new Uint32Array(n);
    let i = 0;
    let j = 0;
    for (let k = 0; k < n; k++) {
      if (j >= extra.length || (i < this.words.length && this.words[i]! < extra[j]!.word)) {
        words[k] = this.words[i]!;
        ids[k] = this.ids[i]!;
        i++;
      } else {
        words[k] = extra[j]!.word;
        ids[k] = extra[j]!.id;
        j++;
      }
    }
    return new SortedWords(words, ids);
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

  private table: Uint8Array[] | null = null;

  /**
   * Sparse table of range minima over the common-prefix lengths of neighbours
   * (capped at 255), so the end of a run of words sharing a prefix is found without
   * comparing strings. Built on first use.
   */
  private lcpTable(): Uint8Array[] {
    if (this.table) return this.table;
    const n = this.words.length;
    const lcp = new Uint8Array(n);
    for (let i = 1; i < n; i++) {
      const a = this.words[i - 1]!;
      const b = this.words[i]!;
      const lim = Math.min(a.length, b.length, 255);
      let l = 0;
      while (l < lim && a.charCodeAt(l) === b.charCodeAt(l)) l++;
      lcp[i] = l;
    }
    const levels = [lcp];
    for (let k = 1; 1 << k <= n; k++) {
      const prev = levels[k - 1]!;
      const half = 1 << (k - 1);
      const cur = new Uint8Array(n - (1 << k) + 1);
      for (let i = 0; i < cur.length; i++) cur[i] = Math.min(prev[i]!, prev[i + half]!);
      levels.push(cur);
    }
    this.table = levels;
    return levels;
  }

  /** Common-prefix length (code units, capped at 255) of each word with the one before it. */
  prefixLengths(): Uint8Array {
    return this.lcpTable()[0]!;
  }

  private flat: WordCodes | null = null;

  /**
   * Every word's code units laid end to end, in order: the typo search reads the words of a
   * first letter one after the other, and strings scattered over the heap cost a cache miss
   * each. Built on first use.
   */
  codes(): WordCodes {
    if (this.flat) return this.flat;
    const n = this.words.length;
    const starts = new Uint32Array(n + 1);
    let total = 0;
    for (let i = 0; i < n; i++) {
      starts[i] = total;
      total += this.words[i]!.length;
    }
    starts[n] = total;
    const units = new Uint16Array(total);
    for (let i = 0; i < n; i++) {
      const w = this.words[i]!;
      const at = starts[i]!;
      for (let k = 0; k < w.length; k++) units[at + k] = w.charCodeAt(k);
    }
    this.flat = { units, starts };
    return this.flat;
  }

  /** Builds the lookup tables now (off the query path) rather than on first use. */
  prepare(): this {
    this.lcpTable();
    this.codes();
    return this;
  }

  /** End (exclusive, at most hi) of the run of words sharing words[i]'s first `len` code units. */
  endOfPrefix(i: number, len: number, hi = this.words.length): number {
    if (len > 255) {
      const prefix = this.words[i]!.slice(0, len);
      return lowerBound(this.words, prefix + '\uffff', i, hi);
    }
    const t = this.lcpTable();
    const lcp = t[0]!;
    // Most runs the typo search skips are a few words long: their neighbours' prefix
    // lengths, side by side, are read before the sparse table's scattered levels.
    let j = i + 1;
    const near = Math.min(hi, i + SHORT_RUN);
    while (j < near && lcp[j]! >= len) j++;
    if (j < near || j === hi) return j;
    for (let k = t.length - 1; k >= 0; k--) {
      const span = 1 << k;
      if (j + span <= hi && t[k]![j]! >= len) j += span;
    }
    return j;
  }
}
