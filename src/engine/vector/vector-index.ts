// The `vectors` part of an index's search structures: per embedder, the documents'
// embeddings. Document changes and settings changes go through `plan.ts` (what each
// document needs), embeddings come from the node's EmbeddingSource, and the result is
// written in the batch's atomic write and made searchable on publish.

import { join } from 'node:path';
import type { KeySpace } from '../../store/keys.js';
import type { KvStore, WriteBatch } from '../../store/kv.js';
import type { Doc } from '../documents/primary-key.js';
import type { DocChange, PreparedIndexUpdate, SearchIndex, SearchIndexContext, SearchIndexFactory } from '../structures/search-index.js';
import type { IndexSettings } from '../settings/settings.js';
import { EmbedError, indexingError } from './embed-error.js';
import { buildEmbedder, type RuntimeEmbedder } from './embedders.js';
import { Yielder } from '../../util/yielder.js';
import { DEFAULT_ANN, type AnnGraph } from './ann-graph.js';
import { decodeRecord, EmbedderState, encodeRecord, EXACT_LIMIT, type DocVectors, type EmbedderMeta } from './embedder-state.js';
import { GRAPH_DIR, graphName, loadSavedGraph, removeGraphs, saveGraph, vectorHash, type GraphIdentity } from './graph-file.js';
import type { EmbeddingSource } from './embedding-source.js';
import type { EmbedderEnvironment } from './embedder-environment.js';
import { DocumentPlanner, indexingKey } from './plan.js';

export const VECTORS_PART = 'vectors';

/** One embedder's pending change: records to write, and whether everything before goes. */
interface EmbedderDelta {
  name: string;
  meta: EmbedderMeta;
  reset: boolean;
  set: Map<number, DocVectors>;
  removed: Set<number>;
}

export interface PrepareOptions {
  reset?: boolean;
  /** To name documents in errors by their id. */
  primaryKey?: string | null;
}

function spaceName(embedder: string): string {
  return Buffer.from(embedder, 'utf8').toString('hex');
}

export class VectorIndex implements SearchIndex {
  /** Published state, by embedder name. */
  readonly embedders = new Map<string, EmbedderState>();
  private readonly runtime = new Map<string, { config: string; embedder: RuntimeEmbedder }>();
  /** Per embedder, the graph last saved and how many vectors it held then. */
  private readonly savedGraphs = new Map<string, { graph: AnnGraph; size: number }>();
  private readonly savingGraphs = new Set<string>();

  constructor(
    private readonly store: KvStore,
    private readonly space: KeySpace,
    private readonly source: EmbeddingSource,
    private readonly env: EmbedderEnvironment,
  ) {}

  static async open(ctx: SearchIndexContext): Promise<VectorIndex> {
    const v = new VectorIndex(ctx.store, ctx.space, ctx.embeddings, ctx.embedderEnv);
    await v.load(ctx.settings);
    return v;
  }

  private metaKey(name: string): Buffer {
    return this.space.child(spaceName(name)).key('m');
  }

  private docKey(name: string, docid: number): Buffer {
    return this.space.child(spaceName(name)).child('d').key(docid);
  }

  private get graphDir(): string {
    return join(this.store.path, GRAPH_DIR);
  }

  private graphIdentity(meta: EmbedderMeta): GraphIdentity | null {
    return meta.dims === null ? null : { fingerprint: meta.fingerprint, dims: meta.dims, quantized: meta.quantized, params: DEFAULT_ANN };
  }

  private async load(settings: IndexSettings): Promise<void> {
    const ours = this.space.prefix.toString('hex');
    const configured = new Set(Object.keys(settings.embedders).map((n) => graphName(this.space.prefix, n)));
    await removeGraphs(this.graphDir, (stem) => !stem.startsWith(ours) || configured.has(stem));
    for (const name of Object.keys(settings.embedders)) {
      const metaBuf = await this.store.get(this.metaKey(name));
      if (!metaBuf) continue;
      const state = this.watched(name, new EmbedderState(name, JSON.parse(metaBuf.toString()) as EmbedderMeta));
      const id = this.graphIdentity(state.meta);
      const saved = id && (await loadSavedGraph(this.graphDir, graphName(this.space.prefix, name), id));
      const restore = saved ? state.restoreFrom(saved, id.dims) : null;
      const later: [number, DocVectors][] = [];
      const docs = this.space.child(spaceName(name)).child('d');
      for await (const { key, value } of this.store.scan({ prefix: docs.prefix })) {
        const docid = docs.strip(key).readUInt32BE(4);
        const r = decodeRecord(value);
        if (!restore) state.set(docid, r);
        else if (!restore.place(docid, r)) later.push([docid, r]);
      }
      for (const [docid, r] of later) state.set(docid, r);
      restore?.finish();
      if (state.graph) this.savedGraphs.set(name, { graph: state.graph, size: state.graph.size });
      this.embedders.set(name, state);
      state.scheduleIndexing();
    }
  }

  private watched(name: string, state: EmbedderState): EmbedderState {
    state.onGraphComplete = (st) => this.saveGraph(name, st);
    return state;
  }

  /**
   * Saves a completed graph once it holds enough vectors that relinking them at the next
   * start would cost more than a few seconds, and again each time it has grown by a tenth.
   * A failed save leaves the last one, which the next start checks vector by vector anyway.
   */
  private saveGraph(name: string, st: EmbedderState): void {
    const g = st.graph;
    const slots = st.slots;
    const id = this.graphIdentity(st.meta);
    if (!g || !slots || !id || g.size < EXACT_LIMIT || this.savingGraphs.has(name)) return;
    const last = this.savedGraphs.get(name);
    if (last && last.graph === g && g.size - last.size < Math.max(EXACT_LIMIT, last.size / 10)) return;
    const n = g.size;
    const docOf = slots.docOf.slice(0, n);
    // A slot's vector never changes once written: hashed in turns after the graph is written.
    const hashes = async () => {
      const out = new Uint32Array(n);
      const turns = new Yielder();
      for (let i = 0; i < n; i++) {
        if ((i & 255) === 0) await turns.maybe();
        if (docOf[i]! >= 0) out[i] = vectorHash(slots.vector(i));
      }
      return out;
    };
    // Still this embedder's published state, and the embedder still stored (not deleted with its index).
    const stillWanted = async () => this.embedders.get(name) === st && (await this.store.get(this.metaKey(name))) !== null;
    this.savingGraphs.add(name);
    saveGraph(this.graphDir, graphName(this.space.prefix, name), id, (path) => g.save(path), docOf, hashes, stillWanted)
      .then(
        () => this.savedGraphs.set(name, { graph: g, size: n }),
        () => undefined,
      )
      .finally(() => this.savingGraphs.delete(name));
  }

  /** The runtime embedder of a configured embedder, rebuilt only when its setting changes. */
  embedder(name: string, settings: IndexSettings): RuntimeEmbedder | null {
    const config = settings.embedders[name];
    if (!config) return null;
    const json = JSON.stringify(config);
    const cached = this.runtime.get(name);
    if (cached && cached.config === json) return cached.embedder;
    const embedder = buildEmbedder(name, config, this.env);
    this.runtime.set(name, { config: json, embedder });
    return embedder;
  }

  async prepare(changes: readonly DocChange[], settings: IndexSettings, opts: PrepareOptions = {}): Promise<PreparedIndexUpdate> {
    const deltas: EmbedderDelta[] = [];
    for (const name of Object.keys(settings.embedders)) {
      const state = this.embedders.get(name);
      const embedder = this.runtimeOrFail(name, settings);
      const meta: EmbedderMeta = state?.meta ?? newMeta(embedder, settings);
      const planner = new DocumentPlanner(embedder, meta, settings, opts.primaryKey ?? null, { strict: true, full: false });
      for (const c of changes) {
        const old = opts.reset ? undefined : state?.docs.get(c.docid);
        planner.plan(c.docid, c.after, old ? () => this.record(name, c.docid) : null, old);
      }
      planner.throwMissing();
      deltas.push(await this.complete(planner, { name, meta, reset: !!opts.reset, set: new Map(), removed: new Set() }));
    }
    return this.prepared(deltas, []);
  }

  async rebuild(docs: () => AsyncIterable<[number, Doc]>, settings: IndexSettings): Promise<PreparedIndexUpdate> {
    const deltas: EmbedderDelta[] = [];
    const dropped = [...this.embedders.keys()].filter((n) => !(n in settings.embedders));
    for (const name of Object.keys(settings.embedders)) {
      const state = this.embedders.get(name);
      const embedder = this.runtimeOrFail(name, settings);
      const key = indexingKey(embedder, settings);
      if (state && state.meta.key === key && state.meta.fingerprint === embedder.fingerprint) continue;
      const full = !state || state.meta.fingerprint !== embedder.fingerprint;
      const meta: EmbedderMeta = { ...(state?.meta ?? newMeta(embedder, settings)), key, fingerprint: embedder.fingerprint };
      if (full && embedder.configuredDimensions !== undefined) meta.dims = embedder.configuredDimensions;
      const requantize = !!state && meta.quantized !== embedder.quantized;
      meta.quantized = embedder.quantized;
      const planner = new DocumentPlanner(embedder, meta, settings, null, { strict: false, full });
      for await (const [docid, doc] of docs()) {
        const old = state?.docs.get(docid);
        planner.plan(docid, doc, old ? () => this.record(name, docid) : null, old, requantize);
      }
      deltas.push(await this.complete(planner, { name, meta, reset: false, set: new Map(), removed: new Set() }));
    }
    return this.prepared(deltas, dropped);
  }

  private runtimeOrFail(name: string, settings: IndexSettings): RuntimeEmbedder {
    try {
      return this.embedder(name, settings)!;
    } catch (e) {
      if (e instanceof EmbedError) throw indexingError(name, e);
      throw e;
    }
  }

  /** A document's stored embeddings for one embedder (as given or generated, quantized if so). */
  async record(name: string, docid: number): Promise<DocVectors | null> {
    const b = await this.store.get(this.docKey(name, docid));
    return b ? decodeRecord(b) : null;
  }

  /** Embeds what the planner asked for and turns its decisions into records. */
  private async complete(planner: DocumentPlanner, delta: EmbedderDelta): Promise<EmbedderDelta> {
    const texts = planner.textsToEmbed();
    let vectors = new Map<string, Float32Array>();
    const te = planner.embedder.indexing;
    if (texts.size > 0 && te) {
      vectors = await this.source.obtain({ embedder: delta.name, texts, embed: (t) => te.embed(t) });
    }
    await planner.resolve(vectors, delta.set, delta.removed);
    delta.meta = planner.meta;
    return delta;
  }

  private prepared(deltas: EmbedderDelta[], dropped: string[]): PreparedIndexUpdate {
    const release = this.source.release?.() ?? null;
    return {
      write: (wb: WriteBatch) => {
        for (const name of dropped) wb.delPrefix(this.space.child(spaceName(name)).prefix);
        for (const d of deltas) {
          if (d.reset) wb.delPrefix(this.space.child(spaceName(d.name)).child('d').prefix);
          wb.put(this.metaKey(d.name), JSON.stringify(d.meta));
          for (const docid of d.removed) wb.del(this.docKey(d.name, docid));
          for (const [docid, r] of d.set) wb.put(this.docKey(d.name, docid), encodeRecord(r, d.meta.quantized));
        }
        release?.write(wb);
      },
      publish: () => {
        for (const name of dropped) this.embedders.delete(name);
        for (const d of deltas) {
          let state = this.embedders.get(d.name);
          if (!state || state.meta.quantized !== d.meta.quantized) {
            const previous = state;
            state = this.watched(d.name, new EmbedderState(d.name, d.meta));
            // A newly quantized store is refilled from the records rewritten in this batch.
            if (previous && !d.reset) for (const [docid, e] of previous.docs) if (!d.set.has(docid) && !d.removed.has(docid) && e.slots.length === 0) state.set(docid, { ...e, vectors: [] });
            this.embedders.set(d.name, state);
          }
          state.meta = d.meta;
          if (d.reset) state.clear();
          for (const docid of d.removed) state.remove(docid);
          for (const [docid, r] of d.set) state.set(docid, r);
          state.scheduleIndexing();
        }
        release?.publish();
      },
    };
  }
}

function newMeta(e: RuntimeEmbedder, settings: IndexSettings): EmbedderMeta {
  return { fingerprint: e.fingerprint, key: indexingKey(e, settings), dims: e.configuredDimensions ?? null, quantized: e.quantized };
}

export const vectorIndexFactory: SearchIndexFactory = {
  open: (ctx) => VectorIndex.open(ctx),
};
