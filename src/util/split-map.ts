// Maps split over 64 smaller ones. A JS Map grows by rehashing all of its entries at once:
// at a million entries that is one pause of a few hundred milliseconds on the thread serving
// requests, however finely the loop filling it gives turns. Split, each part rehashes a
// sixty-fourth of them.

const PARTS = 64;

function partOf(key: string | number): number {
  if (typeof key === 'number') return (key ^ (key >>> 6) ^ (key >>> 12)) & (PARTS - 1);
  let h = key.length;
  for (let i = 0; i < key.length; i++) h = (Math.imul(h, 31) + key.charCodeAt(i)) | 0;
  return (h ^ (h >>> 6) ^ (h >>> 12)) & (PARTS - 1);
}

/** Iterated part by part (an order of its own, the same for the same operations). */
export class SplitMap<K extends string | number, V> {
  protected readonly parts: Map<K, V>[] = Array.from({ length: PARTS }, () => new Map<K, V>());

  get size(): number {
    let n = 0;
    for (const p of this.parts) n += p.size;
    return n;
  }

  get(key: K): V | undefined {
    return this.parts[partOf(key)]!.get(key);
  }

  has(key: K): boolean {
    return this.parts[partOf(key)]!.has(key);
  }

  set(key: K, value: V): this {
    this.parts[partOf(key)]!.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    return this.parts[partOf(key)]!.delete(key);
  }

  *entries(): IterableIterator<[K, V]> {
    for (const p of this.parts) yield* p;
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }

  *keys(): IterableIterator<K> {
    for (const [k] of this.entries()) yield k;
  }

  *values(): IterableIterator<V> {
    for (const [, v] of this.entries()) yield v;
  }
}

/** Iterated in insertion order, as a Map is. Deleting is cheap for the key inserted last only (undoing an insertion). */
export class OrderedSplitMap<K extends string | number, V> extends SplitMap<K, V> {
  private readonly order: K[] = [];

  override get size(): number {
    return this.order.length;
  }

  override set(key: K, value: V): this {
    const p = this.parts[partOf(key)]!;
    if (!p.has(key)) this.order.push(key);
    p.set(key, value);
    return this;
  }

  override delete(key: K): boolean {
    if (!this.parts[partOf(key)]!.delete(key)) return false;
    if (this.order[this.order.length - 1] === key) this.order.pop();
    else this.order.splice(this.order.lastIndexOf(key), 1);
    return true;
  }

  override *entries(): IterableIterator<[K, V]> {
    for (const k of this.order) yield [k, this.get(k)!];
  }

  override keys(): IterableIterator<K> {
    return this.order[Symbol.iterator]();
  }
}
