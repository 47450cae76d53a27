// Per-search scratch memory. A search over a short prefix ranks up to every document of
// the index, and each rule pass needs arrays of that size; allocated fresh, hundreds of
// kilobytes per pass land in the old generation and bring frequent full collections.
// Searches run synchronously one at a time, so one SearchScratch per engine (two
// bump-allocated arenas, rewound when the search ends, and the match table's buffers)
// serves them all.

const MAX_ARENA = 1 << 23;

class Arena<T extends Int32Array | Uint32Array> {
  private buf: T;
  private at = 0;
  private peak = 0;

  constructor(private readonly make: (n: number) => T) {
    this.buf = make(1 << 16);
  }

  take(n: number): T {
    if (this.at + n > this.buf.length) {
      this.peak = Math.max(this.peak, this.at + n);
      return this.make(n);
    }
    const v = this.buf.subarray(this.at, this.at + n) as T;
    v.fill(0);
    this.at += n;
    return v;
  }

  /** Rewinds; grows for next time when this search needed more. */
  reset(): void {
    this.peak = Math.max(this.peak, this.at);
    if (this.peak > this.buf.length && this.peak <= MAX_ARENA) this.buf = this.make(Math.min(MAX_ARENA, this.peak * 2));
    this.at = 0;
    this.peak = 0;
  }
}

/** The match table's per-document buffers, sized for the largest index searched so far. */
export class MatchBuffers {
  mask = new Uint32Array(0);
  agg = new Uint32Array(0);
  /** One bit per document touched, 32 documents per word: collecting and clearing skip empty stretches. */
  blocks = new Uint32Array(0);
  private inUse = false;

  /** Sizes the buffers for a table; one table at a time. */
  acquire(maxDoc: number, units: number): void {
    if (this.inUse) throw new Error('match table already in use');
    this.inUse = true;
    if (this.mask.length < maxDoc) {
      this.mask = new Uint32Array(Math.ceil(maxDoc * 1.25) + 64);
      this.blocks = new Uint32Array((this.mask.length >>> 5) + 1);
    }
    const slots = this.mask.length * units;
    if (this.agg.length < slots) this.agg = new Uint32Array(slots);
  }

  release(): void {
    this.inUse = false;
  }
}

/** The word map's slot per word id (-1 when the word matches no unit), kept all -1 between searches. */
export class WordSlots {
  private slots = new Int32Array(0);
  private inUse = false;

  acquire(words: number): Int32Array {
    if (this.inUse) throw new Error('word map already in use');
    this.inUse = true;
    if (this.slots.length < words) this.slots = new Int32Array(Math.ceil(words * 1.25) + 64).fill(-1);
    return this.slots;
  }

  release(): void {
    this.inUse = false;
  }
}

/** Byte tables kept between searches: a query pairs a handful of units, each pair two tables. */
const KEPT_BYTE_TABLES = 8;
/** Masks the level cache holds: a direct-mapped table in front of the level map. */
export const LEVEL_CACHE_SIZE = 4096;

/**
 * Tables of a byte per document (the proximity rule's pair costs), handed out for one search
 * and taken back when it ends: each fresh one was memory the garbage collector counts as
 * external, which starts a full collection every 64 MB; these were a third of the 0.6 MB a
 * three-word search of the longdocs dictionary allocated, and the collections' marking steps
 * ran in the next idle moment, a search's document read.
 */
class ByteTables {
  private readonly free: Uint8Array[] = [];
  private readonly used: Uint8Array[] = [];

  take(n: number, fill: number): Uint8Array {
    const i = this.free.findIndex((b) => b.length >= n);
    const b = i >= 0 ? this.free.splice(i, 1)[0]! : new Uint8Array(Math.ceil(n * 1.25) + 64);
    this.used.push(b);
    const v = b.subarray(0, n);
    v.fill(fill);
    return v;
  }

  reset(): void {
    for (const b of this.used) if (this.free.length < KEPT_BYTE_TABLES) this.free.push(b);
    this.used.length = 0;
  }
}

export class SearchScratch {
  private readonly intArena = new Arena((n) => new Int32Array(n));
  private readonly uintArena = new Arena((n) => new Uint32Array(n));
  private readonly bytes = new ByteTables();
  readonly tables = new MatchBuffers();
  readonly words = new WordSlots();
  private levels = new Uint8Array(0);
  private admitted = new Uint8Array(0);
  private readonly levelKeys = new Uint32Array(LEVEL_CACHE_SIZE);
  private readonly levelVals = new Int16Array(LEVEL_CACHE_SIZE);
  private levelCacheInUse = false;

  /** The `words` level index by docid, filled with `empty` past its previous use. */
  levelIndex(n: number, empty: number): Uint8Array {
    if (this.levels.length < n) this.levels = new Uint8Array(Math.ceil(n * 1.25) + 64).fill(empty);
    return this.levels;
  }

  /**
   * A mask by docid of the documents a search may match (contents left to the caller), valid
   * until the next search asks for it: kept from search to search, since a fresh megabyte per
   * search at a million documents costs more in first-touch page faults than its use.
   */
  admissions(n: number): Uint8Array {
    if (this.admitted.length < n) this.admitted = new Uint8Array(Math.ceil(n * 1.25) + 64);
    return this.admitted.subarray(0, n);
  }

  /** A table of `n` bytes, each `fill`, valid until the current search ends. */
  byteTable(n: number, fill: number): Uint8Array {
    return this.bytes.take(n, fill);
  }

  /**
   * The level cache's keys and values (values all -2, none cached) for the current search, or
   * fresh ones while another search context holds them.
   */
  levelCache(): { keys: Uint32Array; vals: Int16Array } {
    if (this.levelCacheInUse) return { keys: new Uint32Array(LEVEL_CACHE_SIZE), vals: new Int16Array(LEVEL_CACHE_SIZE).fill(-2) };
    this.levelCacheInUse = true;
    this.levelVals.fill(-2);
    return { keys: this.levelKeys, vals: this.levelVals };
  }

  /** A zeroed Int32Array valid until the current search ends. */
  ints(n: number): Int32Array {
    return this.intArena.take(n);
  }

  /** A zeroed Uint32Array valid until the current search ends. */
  uints(n: number): Uint32Array {
    return this.uintArena.take(n);
  }

  reset(): void {
    this.intArena.reset();
    this.uintArena.reset();
    this.bytes.reset();
    this.levelCacheInUse = false;
  }
}
