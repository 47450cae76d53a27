import type { WriteBatch } from '../../store/kv.js';
import type { Doc } from '../documents/primary-key.js';
import type {
  DocChange,
  PrepareOptions,
  PreparedIndexUpdate,
  RebuildOptions,
  SearchIndex,
  SearchIndexContext,
  SearchIndexFactory,
} from './search-index.js';
import type { IndexSettings } from '../settings/settings.js';

/**
 * Several independent structures of one index (full-text postings, facet values, vectors ...)
 * kept in step: each gets every change, each writes into the same atomic batch, all publish
 * together. Each lives in a key space of its own under the index's search space.
 */
export class CompositeIndex implements SearchIndex {
  constructor(readonly parts: ReadonlyMap<string, SearchIndex>) {}

  /** One of the parts by name, e.g. `h.search.part<FacetIndex>('facets')`. */
  part<T extends SearchIndex>(name: string): T | undefined {
    return this.parts.get(name) as T | undefined;
  }

  async prepare(changes: readonly DocChange[], settings: IndexSettings, opts?: PrepareOptions): Promise<PreparedIndexUpdate> {
    const updates: PreparedIndexUpdate[] = [];
    for (const p of this.parts.values()) updates.push(await p.prepare(changes, settings, opts));
    return combine(updates);
  }

  async rebuild(docs: () => AsyncIterable<[number, Doc]>, settings: IndexSettings, opts?: RebuildOptions): Promise<PreparedIndexUpdate> {
    const updates: PreparedIndexUpdate[] = [];
    for (const p of this.parts.values()) updates.push(await p.rebuild(docs, settings, opts));
    return combine(updates);
  }
}

function combine(updates: PreparedIndexUpdate[]): PreparedIndexUpdate {
  return {
    async write(wb: WriteBatch) {
      for (const u of updates) {
        await u.write(wb);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    },
    publish() {
      for (const u of updates) u.publish();
    },
  };
}

/** Opens every named part under `<search space>/<name>`. */
export function compositeFactory(parts: [string, SearchIndexFactory][]): SearchIndexFactory {
  return {
    async open(ctx: SearchIndexContext) {
      const opened = new Map<string, SearchIndex>();
      for (const [name, f] of parts) opened.set(name, await f.open({ ...ctx, space: ctx.space.child(name) }));
      return new CompositeIndex(opened);
    },
  };
}
