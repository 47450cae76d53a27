// Per-search scratch memory. A search over a short prefix ranks up to every document of
// the index, and each rule pass needs arrays of that size; allocated fresh, hundreds of
// kilobytes per pass land in the old generation and bring frequent full collections.
// Searches run synchronously one at a time, so two bump-allocated arenas, rewound when
// the search ends, serve them all.

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

const ints = new Arena((n) => new Int32Array(n));
const uints = new Arena((n) => new Uint32Array(n));

/** A zeroed Int32Array valid until the current search ends. */
export function scratchInts(n: number): Int32Array {
  return ints.take(n);
}

/** A zeroed Uint32Array valid until the current search ends. */
export function scratchUints(n: number): Uint32Array {
  return uints.take(n);
}

export function resetScratch(): void {
  ints.reset();
  uints.reset();
}
