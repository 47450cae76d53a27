// The map from a document's external id to its docid, as searches and reads see it.
//
// A batch's changes must become visible at once, at publish, where nothing may take long: set
// one by one into a map of a million ids they cost the better part of a second (the map grows
// by rehashing everything). So a published batch's changes are laid over the map as they
// are, and folded into it a slice at a time right after (before the next batch publishes).

import { SplitMap } from '../../util/split-map.js';
import { Yielder } from '../../util/yielder.js';

/** A batch's changes to the map: an id's docid after the batch, null when removed. */
export interface IdChanges extends Iterable<[string, number | null]> {
  get(id: string): number | null | undefined;
}

/** A batch's changes, ready to publish: `ExternalIdMap.prepare`. */
export interface IdMapLayer {
  readonly over: IdChanges | null;
  readonly base: SplitMap<string, number> | null;
  readonly count: number;
}

export class ExternalIdMap {
  /** Split: folding a batch into a million ids must not rehash them all at once. */
  private base: SplitMap<string, number>;
  /** The last published batch's changes (null: removed), read before `base` until folded into it. */
  private over: IdChanges | null = null;
  private count: number;
  private folding: Promise<void> | null = null;

  constructor(entries: SplitMap<string, number> = new SplitMap()) {
    this.base = entries;
    this.count = entries.size;
  }

  get size(): number {
    return this.count;
  }

  get(id: string): number | undefined {
    const o = this.over?.get(id);
    if (o !== undefined) return o ?? undefined;
    return this.base.get(id);
  }

  has(id: string): boolean {
    return this.get(id) !== undefined;
  }

  *entries(): IterableIterator<[string, number]> {
    const over = this.over;
    if (!over) {
      yield* this.base;
      return;
    }
    for (const [id, docid] of this.base) {
      const o = over.get(id);
      if (o === undefined) yield [id, docid];
      else if (o !== null) yield [id, o];
    }
    for (const [id, o] of over) if (o !== null && !this.base.has(id)) yield [id, o];
  }

  [Symbol.iterator](): IterableIterator<[string, number]> {
    return this.entries();
  }

  *keys(): IterableIterator<string> {
    for (const [id] of this.entries()) yield id;
  }

  *values(): IterableIterator<number> {
    for (const [, docid] of this.entries()) yield docid;
  }

  /**
   * Folds the changes laid over the map into it, then works out what publishing `changes`
   * (after a clear of every id, with `cleared`) makes of it. Readers see the same map all
   * along: a folded change reads the same from the layer and from the map.
   */
  async prepare(changes: IdChanges, cleared: boolean, yielder: Yielder): Promise<IdMapLayer> {
    await this.folding;
    let n = 0;
    if (cleared) {
      const base = new SplitMap<string, number>();
      for (const [id, docid] of changes) {
        if (docid !== null) base.set(id, docid);
        if ((++n & 4095) === 0) await yielder.maybe();
      }
      return { over: null, base, count: base.size };
    }
    let count = this.count;
    for (const [id, docid] of changes) {
      const had = this.base.has(id);
      if (had && docid === null) count--;
      else if (!had && docid !== null) count++;
      if ((++n & 4095) === 0) await yielder.maybe();
    }
    return { over: changes, base: null, count };
  }

  /** Makes a prepared batch's changes visible: no work proportional to them. */
  publish(layer: IdMapLayer): void {
    if (this.over) throw new Error('external ids published over changes not yet folded');
    if (layer.base) this.base = layer.base;
    this.over = layer.over;
    this.count = layer.count;
    if (layer.over) this.folding = this.fold(new Yielder());
  }

  private async fold(yielder: Yielder): Promise<void> {
    const over = this.over;
    if (!over) return;
    // Not inside `publish`: after it.
    await new Promise<void>((resolve) => setImmediate(resolve));
    // A set that grows one of the map's parts rehashes it: at a million ids a few of those fell
    // in one run of 4,096 sets and held the thread 60-100 ms; the slice is checked every 256.
    let n = 0;
    for (const [id, docid] of over) {
      if (docid === null) this.base.delete(id);
      else this.base.set(id, docid);
      if ((++n & 255) === 0) await yielder.maybe();
    }
    this.over = null;
    this.folding = null;
  }
}
