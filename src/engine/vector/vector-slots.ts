// The searchable copy of one embedder's vectors: unit-length vectors in one growing float
// array, one slot each. Slots are only appended and killed, never rewritten, so the graph
// built over them and a search running between two batches always read settled data.

import { dotAt } from './distance.js';

export interface Scored {
  docid: number;
  /** Cosine of the query and the document's closest vector. */
  dot: number;
}

/** A bounded min-heap keeping the `k` best documents (one entry per document). */
export class TopK {
  private readonly heap: Scored[] = [];
  private readonly best = new Map<number, number>();

  constructor(readonly k: number) {}

  get full(): boolean {
    return this.heap.length >= this.k;
  }

  /** The score a new document must beat. */
  get floor(): number {
    return this.full ? this.heap[0]!.dot : -Infinity;
  }

  offer(docid: number, dot: number): void {
    if (this.k <= 0) return;
    const seen = this.best.get(docid);
    if (seen !== undefined) {
      // A second vector of a document already kept: keep its best only.
      if (dot <= seen) return;
      const i = this.heap.findIndex((e) => e.docid === docid);
      this.heap.splice(i, 1);
      this.rebuild();
    } else if (this.full && dot <= this.heap[0]!.dot) return;
    if (this.full) {
      this.best.delete(this.heap[0]!.docid);
      this.heap[0] = { docid, dot };
      this.down(0);
    } else {
      this.heap.push({ docid, dot });
      this.up(this.heap.length - 1);
    }
    this.best.set(docid, dot);
  }

  /** Best first; ties by docid. */
  sorted(): Scored[] {
    return [...this.heap].sort((a, b) => b.dot - a.dot || a.docid - b.docid);
  }

  private rebuild(): void {
    for (let i = (this.heap.length >> 1) - 1; i >= 0; i--) this.down(i);
  }

  private up(i: number): void {
    const h = this.heap;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p]!.dot <= h[i]!.dot) break;
      [h[p], h[i]] = [h[i]!, h[p]!];
      i = p;
    }
  }

  private down(i: number): void {
    const h = this.heap;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && h[l]!.dot < h[m]!.dot) m = l;
      if (r < h.length && h[r]!.dot < h[m]!.dot) m = r;
      if (m === i) return;
      [h[m], h[i]] = [h[i]!, h[m]!];
      i = m;
    }
  }
}

export class VectorSlots {
  data: Float32Array;
  /** Slot → docid, -1 once killed. */
  docOf: Int32Array;
  count = 0;
  live = 0;

  constructor(
    readonly dims: number,
    capacity = 64,
  ) {
    this.data = new Float32Array(capacity * dims);
    this.docOf = new Int32Array(capacity).fill(-1);
  }

  /** `count` slots, every one killed until `put` gives it its vector again (a saved graph's slots). */
  static killed(dims: number, count: number): VectorSlots {
    const s = new VectorSlots(dims, Math.max(64, count));
    s.count = count;
    return s;
  }

  /** Gives a killed slot below `count` its document and vector back. */
  put(slot: number, docid: number, unit: Float32Array): void {
    this.data.set(unit, slot * this.dims);
    if (this.docOf[slot]! < 0) this.live++;
    this.docOf[slot] = docid;
  }

  get capacity(): number {
    return this.docOf.length;
  }

  append(docid: number, unit: Float32Array): number {
    if (this.count === this.capacity) this.grow();
    const slot = this.count++;
    this.data.set(unit, slot * this.dims);
    this.docOf[slot] = docid;
    this.live++;
    return slot;
  }

  kill(slot: number): void {
    if (this.docOf[slot]! >= 0) {
      this.docOf[slot] = -1;
      this.live--;
    }
  }

  dot(query: Float32Array, slot: number): number {
    return dotAt(query, this.data, slot * this.dims, this.dims);
  }

  vector(slot: number): Float32Array {
    return this.data.subarray(slot * this.dims, (slot + 1) * this.dims);
  }

  /** Exact scan of the slots in [from, to) whose document `allowed` accepts. */
  scan(query: Float32Array, top: TopK, allowed: ((docid: number) => boolean) | null, from = 0, to = this.count): void {
    const { docOf, data, dims } = this;
    for (let s = from; s < to; s++) {
      const d = docOf[s]!;
      if (d < 0 || (allowed && !allowed(d))) continue;
      top.offer(d, dotAt(query, data, s * dims, dims));
    }
  }

  private grow(): void {
    const cap = this.capacity * 2;
    const data = new Float32Array(cap * this.dims);
    data.set(this.data);
    const docOf = new Int32Array(cap).fill(-1);
    docOf.set(this.docOf);
    this.data = data;
    this.docOf = docOf;
  }
}
