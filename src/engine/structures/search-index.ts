import type { KeySpace } from '../../store/keys.js';
import type { KvStore, WriteBatch } from '../../store/kv.js';
import type { Doc } from '../documents/primary-key.js';
import type { IndexSettings } from '../settings/settings.js';
import type { EmbeddingSource } from '../vector/embedding-source.js';
import type { EmbedderEnvironment } from '../vector/embedder-environment.js';

/** One document's change within a batch: added (before null), deleted (after null) or replaced. */
export interface DocChange {
  docid: number;
  before: Doc | null;
  after: Doc | null;
}

/**
 * A computed but not yet visible change of an index's search structures. The batch processor
 * writes it into the batch's atomic write, commits, and only then publishes it, so searches
 * never see half of a batch.
 */
export interface PreparedIndexUpdate {
  /** May give the event loop turns while it fills the batch (large batches take a while). */
  write(wb: WriteBatch): void | Promise<void>;
  publish(): void;
}

export interface SearchIndexContext {
  store: KvStore;
  /** The key space this index's search structures live under. */
  space: KeySpace;
  settings: IndexSettings;
  /** Where indexing gets embeddings: the embedders themselves, or a cluster's exchange. */
  embeddings: EmbeddingSource;
  /** The node's settings for embedders (servers' timeouts, the model hub). */
  embedderEnv: EmbedderEnvironment;
  /** The index's stored documents in docid order, to rebuild structures found damaged at open. */
  documents?: () => AsyncIterable<[number, Doc]>;
  /** Told when stored structures were found damaged at open and rebuilt (why, in words). */
  onRebuilt?: (reason: string) => void;
}

export interface PrepareOptions {
  reset?: boolean;
  primaryKey?: string | null;
}

/** The search structures of one index (postings, dictionaries, facets, ...). */
export interface RebuildOptions {
  /** To name documents in errors by their id. */
  primaryKey?: string | null;
}

export interface SearchIndex {
  /**
   * With `reset`, every document indexed so far is gone and `changes` only hold additions.
   * `primaryKey` lets a part name documents by their id in the errors it throws (an
   * ApiError from `prepare` fails the batch's document tasks and nothing is applied).
   */
  prepare(changes: readonly DocChange[], settings: IndexSettings, opts?: PrepareOptions): Promise<PreparedIndexUpdate>;
  /** Re-indexes every document, e.g. after a settings change. */
  rebuild(docs: () => AsyncIterable<[number, Doc]>, settings: IndexSettings, opts?: RebuildOptions): Promise<PreparedIndexUpdate>;
}

export interface SearchIndexFactory {
  open(ctx: SearchIndexContext): Promise<SearchIndex>;
}
