// The engine's search structures for one index, behind the SearchIndex contract used by
// the batch processor: prepare/rebuild compute the next state and its writes, publish
// swaps it in once the write batch is committed.

import type { Doc } from '../documents/primary-key.js';
import { CompositeIndex } from '../structures/composite-index.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import type {
  DocChange, PreparedIndexUpdate, SearchIndex, SearchIndexContext, SearchIndexFactory,
} from '../structures/search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import type { KvStore, WriteBatch } from '../../store/kv.js';
import { valueAttributes } from './field-values.js';
import { applyChanges, buildFromDocuments, emptyState, stateFromStored, type IndexState, type StagedState } from './index-state.js';
import {
  deleteSegment, IndexKeys, putDictionary, putMeta, putWords, readStored, storeSegment,
} from './persistence.js';
import { CorruptStructureError } from './blob-codec.js';
import { buildSynonyms } from './synonyms.js';
import { FieldRules } from './field-table.js';
import { Yielder } from '../../util/yielder.js';

/** The parts of the settings that change what is stored; anything else is query time only. */
export function indexingKey(s: IndexSettings): string {
  return JSON.stringify([
    s.searchableAttributes,
    s.stopWords,
    s.separatorTokens,
    s.nonSeparatorTokens,
    s.dictionary,
    s.localizedAttributes,
    s.prefixSearch,
    valueAttributes(s),
  ]);
}

/** The same structures answering with other query-time settings. */
function withSettings(state: IndexState, settings: IndexSettings): IndexState {
  return {
    ...state,
    settings,
    rules: new FieldRules(state.names, settings),
    synonyms: buildSynonyms(settings, state.tokenizer),
    memo: new Map(),
  };
}

/** What opening found wrong with the stored structures, when they had to be rebuilt (for logs and tests). */
export interface OpenReport {
  rebuilt: string | null;
}

export class TrineSearchIndex implements SearchIndex {
  private constructor(
    private readonly store: KvStore,
    private readonly keys: IndexKeys,
    private current: IndexState,
    readonly opened: OpenReport,
  ) {}

  static async open(ctx: SearchIndexContext): Promise<TrineSearchIndex> {
    // A child space of its own, so other structures can share the index's search space.
    const keys = new IndexKeys(ctx.space.child('t'));
    try {
      const stored = await readStored(ctx.store, keys);
      if (!stored) return new TrineSearchIndex(ctx.store, keys, emptyState(ctx.settings), { rebuilt: null });
      const { meta } = stored;
      const state = stateFromStored(ctx.settings, meta.names, stored.words, stored.dictionary, stored.segments, meta.nextSeq);
      if (stored.orphans.length > 0) {
        // Segments written by a batch that never committed: nothing refers to them.
        const wb = ctx.store.batch();
        for (const seq of stored.orphans) deleteSegment(wb, keys, seq);
        await wb.commit();
      }
      return new TrineSearchIndex(ctx.store, keys, state, { rebuilt: null });
    } catch (e) {
      if (!(e instanceof CorruptStructureError) || !ctx.documents) throw e;
      // Torn, damaged or of another format: never served; rebuilt from the documents.
      await ctx.store.batch().delPrefix(keys.space.prefix).commit();
      const staged = await buildFromDocuments(ctx.settings, ctx.documents(), new Yielder());
      const wb = ctx.store.batch();
      await writeStaged(ctx.store, wb, keys, staged);
      await wb.commit({ sync: true });
      staged.commitTables();
      ctx.onRebuilt?.(e.message);
      return new TrineSearchIndex(ctx.store, keys, staged.state, { rebuilt: e.message });
    }
  }

  /** The published state; searches keep the one they started with. */
  get state(): IndexState {
    return this.current;
  }

  async prepare(changes: readonly DocChange[], settings: IndexSettings, opts: { reset?: boolean } = {}): Promise<PreparedIndexUpdate> {
    const yielder = new Yielder();
    let base = this.current;
    const fresh = opts.reset || indexingKey(base.settings) !== indexingKey(settings);
    if (fresh) {
      const docs: [number, Doc][] = [];
      for (const c of changes) if (c.after) docs.push([c.docid, c.after]);
      if (!opts.reset) {
        // Settings and stored structures disagree: only a full rebuild can reconcile them.
        const changed = new Set(changes.map((c) => c.docid));
        for (const d of base.docids) if (!changed.has(d)) throw new Error('index structures are out of date with the settings');
      }
      return this.publishing(await buildFromDocuments(settings, docs, yielder, base));
    }
    if (base.settings !== settings) base = withSettings(base, settings);
    return this.publishing(await applyChanges(base, changes, yielder));
  }

  async rebuild(docs: () => AsyncIterable<[number, Doc]>, settings: IndexSettings): Promise<PreparedIndexUpdate> {
    if (indexingKey(this.current.settings) === indexingKey(settings)) {
      const next = withSettings(this.current, settings);
      return { write() {}, publish: () => void (this.current = next) };
    }
    return this.publishing(await buildFromDocuments(settings, docs(), new Yielder(), this.current));
  }

  private publishing(staged: StagedState): PreparedIndexUpdate {
    return {
      write: (wb) => writeStaged(this.store, wb, this.keys, staged),
      publish: () => {
        staged.commitTables();
        this.current = staged.state;
      },
    };
  }
}

/**
 * Stores the new segments (each in writes of its own, under numbers no live segment has),
 * then puts in `wb` what makes them live: the meta naming the live segments, the new words,
 * the removal of the segments they replace.
 */
async function writeStaged(store: KvStore, wb: WriteBatch, keys: IndexKeys, staged: StagedState): Promise<void> {
  const s = staged.state;
  const { changes } = staged;
  for (const seg of changes.put) await storeSegment(store, keys, seg);
  const { words, base } = staged.added;
  await staged.writeAhead(new Yielder());
  if (changes.all) wb.delPrefix(keys.words.prefix);
  putMeta(wb, keys, { names: [...s.names.names], words: s.wordCount, segments: s.view.segments.map((g) => g.seq), nextSeq: s.nextSeq });
  if (words.length > 0) putWords(wb, keys, words, base);
  for (const seq of changes.removed) deleteSegment(wb, keys, seq);
  if (changes.merged) await putDictionary(wb, keys, s.sorted.ids);
}

export const trineSearchFactory: SearchIndexFactory = {
  open: (ctx) => TrineSearchIndex.open(ctx),
};

/** The name of the full-text structures among an index's search parts. */
export const TEXT_PART = 'text';

/** The search state of an open index, or null when the node keeps no full-text structures. */
export function searchStateOf(handle: IndexHandle): IndexState | null {
  const s = handle.search;
  if (s instanceof TrineSearchIndex) return s.state;
  if (s instanceof CompositeIndex) {
    const part = s.part(TEXT_PART);
    return part instanceof TrineSearchIndex ? part.state : null;
  }
  return null;
}

export { emptyState };
