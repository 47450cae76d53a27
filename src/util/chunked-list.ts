// A list grown by appending, held in arrays of 65,536 items: one array grown past a million
// items copies itself whole at each growth (tens of milliseconds at a million words, in one
// push on the thread serving requests); here a growth copies at most one chunk.

const BITS = 16;
const MASK = (1 << BITS) - 1;

export class ChunkedList<T> {
  private readonly chunks: T[][] = [];
  private n = 0;

  constructor(items: Iterable<T> = []) {
    for (const x of items) this.push(x);
  }

  get length(): number {
    return this.n;
  }

  /** The item at `i`, or undefined past the end. */
  at(i: number): T | undefined {
    return i >= 0 && i < this.n ? this.chunks[i >>> BITS]![i & MASK] : undefined;
  }

  push(x: T): void {
    const c = this.n >>> BITS;
    if (c === this.chunks.length) this.chunks.push([]);
    this.chunks[c]!.push(x);
    this.n++;
  }

  /** Drops the items from index `n` on. */
  truncate(n: number): void {
    if (n >= this.n) return;
    const c = n >>> BITS;
    this.chunks.length = c + 1;
    this.chunks[c]!.length = n & MASK;
    this.n = n;
  }
}
