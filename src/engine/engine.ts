import { join } from 'node:path';
import { ApiError } from '../errors/api-error.js';
import { KeySpace, decodeUint } from '../store/keys.js';
import type { KvReader, KvStore, WriteBatch } from '../store/kv.js';
import type { Doc } from './documents/primary-key.js';
import { decodeDoc } from './documents/document-json.js';
import { INDEXES, INDEX_UIDS, IndexHandle, type IndexMeta } from './indexes/index-handle.js';
import { readExternalIds } from './indexes/external-ids.js';
import { GRAPH_DIR, graphBytes, removeGraphs } from './vector/graph-file.js';
import type { SearchIndexFactory } from './structures/search-index.js';
import { defaultSearchFactory } from './structures/default-structures.js';
import { defaultSettings, type IndexSettings } from './settings/settings.js';
import { directSource, type EmbeddingSource } from './vector/embedding-source.js';
import { embedderEnvironment, type EmbedderEnvironment } from './vector/embedder-environment.js';
import { SearchScratch } from './search/scratch.js';
import { SearchRuleStore } from './search-rules/rules.js';
import { NetworkStore } from './network/network.js';
import { ExternalIdMap } from './indexes/external-id-map.js';
import { Yielder } from '../util/yielder.js';
import { committedDocuments, removeUncommittedDocuments } from './apply/documents-ahead.js';

const ENGINE_META = new KeySpace('em');
const NEXT_INDEX_ID = ENGINE_META.key('nextIndexId');

export function indexNotFound(uid: string): ApiError {
  return new ApiError('index_not_found', `Index \`${uid}\` not found.`);
}

/** What an engine is built from besides its store; each has a default for a node alone. */
export interface EngineParts {
  /** The search structures every index keeps: full text, facets and vectors by default. */
  structures?: SearchIndexFactory;
  /** Where indexing gets embeddings: the embedders themselves by default, a cluster's exchange in a cluster. */
  embeddings?: EmbeddingSource;
  /** Embedding servers' timeouts and retries, and where local models come from; defaults otherwise. */
  embedderEnv?: EmbedderEnvironment;
  /** Told when an index's stored structures were found damaged at open and rebuilt from its documents. */
  onRebuilt?: (index: string, reason: string) => void;
}

/**
 * The indexes of one node: their metadata and id maps in memory, documents and search
 * structures in the store. Knows nothing of HTTP, tasks or replication; applying a batch
 * changes it, routes read it.
 */
export class Engine {
  readonly indexes = new Map<string, IndexHandle>();
  nextIndexId = 0;
  /** Time of the last change applied, for `GET /stats`. */
  lastUpdate: number | null = null;
  /** Memory every search of this engine ranks in (searches run one at a time). */
  readonly scratch = new SearchScratch();
  /** Node-wide dynamic search rules (pins), changed by `dsrUpdate`/`dsrClear` tasks. */
  readonly searchRules = new SearchRuleStore();
  /** The network of instances (`/network`), changed through the log or by `networkTopologyChange` tasks. */
  readonly network = new NetworkStore();

  private constructor(
    readonly store: KvStore,
    private readonly structures: SearchIndexFactory,
    private readonly embeddings: EmbeddingSource,
    private readonly embedderEnv: EmbedderEnvironment,
    private readonly onRebuilt: EngineParts['onRebuilt'],
  ) {}

  static async open(store: KvStore, parts: EngineParts = {}): Promise<Engine> {
    const engine = new Engine(
      store,
      parts.structures ?? defaultSearchFactory(),
      parts.embeddings ?? directSource,
      parts.embedderEnv ?? embedderEnvironment(),
      parts.onRebuilt,
    );
    await engine.load();
    return engine;
  }

  /** (Re)reads every index from the store, e.g. at start or after installing a snapshot. */
  async load(): Promise<void> {
    this.indexes.clear();
    await this.searchRules.load(this.store);
    await this.network.load(this.store);
    const next = await this.store.get(NEXT_INDEX_ID);
    this.nextIndexId = next ? decodeUint(next) : 0;
    for await (const { value } of this.store.scan({ prefix: INDEX_UIDS.prefix })) {
      const id = decodeUint(value);
      const metaBuf = await this.store.get(INDEXES.child(String(id)).key('meta'));
      if (!metaBuf) continue;
      const meta = JSON.parse(metaBuf.toString()) as IndexMeta;
      meta.settings = { ...defaultSettings(), ...meta.settings };
      // Both mostly wait on the store: the id map is read while the segments are.
      const [handle, { ext, convert }] = await Promise.all([this.openHandle(meta), readExternalIds(this.store, meta.id)]);
      if (convert) {
        const wb = this.store.batch();
        await convert(wb);
        await wb.commit();
      }
      handle.ext = new ExternalIdMap(ext);
      // Searches do not wait for the id map: it is built in slices once the engine is open.
      handle.ext.loadInTurns(new Yielder()).catch(() => {
        // Thrown again to whoever uses the map (a damaged chunk).
      });
      await removeUncommittedDocuments(this.store, handle, meta.nextDocid);
      this.indexes.set(meta.uid, handle);
      if (this.lastUpdate === null || meta.updatedAt > this.lastUpdate) this.lastUpdate = meta.updatedAt;
    }
    // Saved vector graphs of indexes deleted since: an index's id is never used again.
    const live = [...this.indexes.values()].map((h) => h.searchSpace.prefix.toString('hex'));
    await removeGraphs(join(this.store.path, GRAPH_DIR), (stem) => live.some((p) => stem.startsWith(p)));
  }

  async openHandle(meta: IndexMeta): Promise<IndexHandle> {
    const space = IndexHandle.searchSpaceOf(meta.id);
    const docs = IndexHandle.documentSpaceOf(meta.id);
    const store = this.store;
    let handle: IndexHandle | null = null;
    async function* documents(): AsyncGenerator<[number, Doc]> {
      // The meta of the time of the read: a later batch may have stored big integers.
      const now = handle?.meta ?? meta;
      const exact = now.exactIntegers === true;
      for await (const e of store.scan(committedDocuments(docs, now.nextDocid))) yield [decodeUint(docs.strip(e.key)), decodeDoc(e.value, exact)];
    }
    const onRebuilt = (reason: string) => this.onRebuilt?.(meta.uid, reason);
    const search = await this.structures.open({
      store, space, settings: meta.settings, embeddings: this.embeddings, embedderEnv: this.embedderEnv, documents, onRebuilt,
    });
    handle = new IndexHandle(meta, new ExternalIdMap(), search);
    return handle;
  }

  newIndexMeta(uid: string, primaryKey: string | null, at: number, settings?: IndexSettings): IndexMeta {
    const id = this.nextIndexId++;
    return {
      id,
      uid,
      primaryKey,
      createdAt: at,
      updatedAt: at,
      nextDocid: 0,
      docCount: 0,
      rawDocumentBytes: 0,
      fieldDistribution: {},
      settings: settings ?? defaultSettings(),
    };
  }

  writeEngineMeta(wb: WriteBatch): void {
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(this.nextIndexId));
    wb.put(NEXT_INDEX_ID, b);
  }

  getIndex(uid: string): IndexHandle {
    const h = this.indexes.get(uid);
    if (!h) throw indexNotFound(uid);
    return h;
  }

  /** Indexes sorted by uid, as the reference lists them. */
  listIndexes(): IndexHandle[] {
    return [...this.indexes.values()].sort((a, b) => (a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : 0));
  }

  async readDocs(reader: KvReader, h: IndexHandle, docids: readonly number[]): Promise<(Doc | null)[]> {
    const bufs = await reader.getMany(docids.map((d) => h.docKey(d)));
    const exact = h.meta.exactIntegers === true;
    return bufs.map((b) => (b ? decodeDoc(b, exact) : null));
  }

  async getDocument(uid: string, id: string): Promise<Doc | null> {
    const h = this.getIndex(uid);
    const docid = h.ext.get(id);
    if (docid === undefined) return null;
    const [doc] = await this.readDocs(this.store, h, [docid]);
    return doc ?? null;
  }

  /** Every document of an index in docid order, read under one consistent snapshot. */
  async *allDocuments(h: IndexHandle, reader: KvReader = this.store): AsyncGenerator<[number, Doc]> {
    const exact = h.meta.exactIntegers === true;
    for await (const e of reader.scan(committedDocuments(h.docs, h.meta.nextDocid))) {
      yield [decodeUint(h.docs.strip(e.key)), decodeDoc(e.value, exact)];
    }
  }

  /** A page of documents in docid order, optionally restricted to some docids. */
  async listDocuments(
    uid: string,
    /** `docids`: the documents to page through, ascending and each once; without it, every document. */
    opts: { offset: number; limit: number; docids?: Uint32Array | null },
  ): Promise<{ results: Doc[]; total: number }> {
    const h = this.getIndex(uid);
    if (opts.docids) {
      const page = [...opts.docids.subarray(opts.offset, opts.offset + opts.limit)];
      const docs = await this.readDocs(this.store, h, page);
      return { results: docs.filter((d): d is Doc => d !== null), total: opts.docids.length };
    }
    const results: Doc[] = [];
    if (opts.limit > 0 && opts.offset < h.meta.docCount) {
      let skipped = 0;
      for await (const e of this.store.scan({ ...committedDocuments(h.docs, h.meta.nextDocid), limit: opts.offset + opts.limit })) {
        if (skipped++ < opts.offset) continue;
        results.push(decodeDoc(e.value, h.meta.exactIntegers === true));
      }
    }
    return { results, total: h.meta.docCount };
  }

  /** Docids of the given external ids that exist. */
  docidsOf(h: IndexHandle, ids: readonly string[]): number[] {
    const out: number[] = [];
    for (const id of ids) {
      const d = h.ext.get(id);
      if (d !== undefined) out.push(d);
    }
    return out;
  }

  /** Bytes on disk: the store's files and the vector graphs saved beside them. */
  async diskSize(): Promise<number> {
    const [store, graphs] = await Promise.all([this.store.diskSize(), graphBytes(join(this.store.path, GRAPH_DIR))]);
    return store + graphs;
  }

  async indexSize(h: IndexHandle): Promise<number> {
    return this.store.approximateSize(h.space.prefix, h.space.end);
  }
}
