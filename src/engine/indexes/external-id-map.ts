// The map from a document's external id to its docid, as searches and reads see it.
//
// A batch's changes must become visible at once, at publish, where nothing may take long: set
// one by one into a map of a million ids they cost the better part of a second (the map grows
// by rehashing everything). So a published batch's changes are laid over the map as they
// are, and folded into it a slice at a time right after (before the next batch publishes).
//
// An index opened from the store gets its map built after it opens, a slice at a time
// (`loadInTurns`): a million ids took 1.0-1.3 s of a 5 s open, and searches do not need them.
// Whoever needs the map before it is built finishes building it at once.

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

/** A map still to build: its steps (each a pause), and how many ids it will hold. */
export interface PendingIds {
  steps: Generator<void, SplitMap<string, number>>;
  count: number;
}

export class ExternalIdMap {
  /** Split: folding a batch into a million ids must not rehash them all at once. */
  private built: SplitMap<string, number> | null;
  /** The steps that build `built`, until they have. */
  private pending: Generator<void, SplitMap<string, number>> | null = null;
  /** Why building failed (a damaged chunk): every use of the map throws it. */
  private failure: unknown = null;
  /** The last published batch's changes (null: removed), read before `base` until folded into it. */
  private over: IdChanges | null = null;
  private count: number;
  private folding: Promise<void> | null = null;

  constructor(entries: SplitMap<string, number> | PendingIds = new SplitMap()) {
    if (entries instanceof SplitMap) {
      this.built = entries;
      this.count = entries.size;
    } else {
      this.built = null;
      this.pending = entries.steps;
      this.count = entries.count;
    }
  }

  /** The map as stored, built now if the slices have not finished it. */
  private get base(): SplitMap<string, number> {
    while (!this.step());
    return this.built!;
  }

  private set base(m: SplitMap<string, number>) {
    this.built = m;
    this.pending = null;
  }

  /**
   * Takes one step of building the map; true once it is built. A step that throws (a damaged
   * chunk) fails the map for good: every later step throws the same error.
   */
  private step(): boolean {
    if (this.built !== null) return true;
    if (this.failure !== null) throw this.failure;
    let r: IteratorResult<void, SplitMap<string, number>>;
    try {
      r = this.pending!.next();
    } catch (e) {
      this.failure = e;
      throw e;
    }
    if (r.done) this.base = r.value;
    return r.done === true;
  }

  /** Builds the map a slice at a time, unless something needed it first. */
  async loadInTurns(yielder: Yielder): Promise<void> {
    while (this.failure === null && !this.step()) await yielder.maybe();
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
