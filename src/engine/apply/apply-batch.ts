import { ApiError, toErrorBody } from '../../errors/api-error.js';
import { encodeUint } from '../../store/keys.js';
import { processIndexTask } from './index-lifecycle.js';
import { processRuleTask } from '../search-rules/rule-tasks.js';
import { processNetworkTask } from '../network/topology-change.js';
import { ownedDocuments } from '../network/shards.js';
import { filterDocids } from '../facets/index.js';
import { engineFilterOptions } from '../search/answer-query.js';
import { parseRequiredFilter } from '../filter/filter-tree.js';
import type { BatchTask, IndexOperation, ProcessedBatch, TaskOutcome } from './types.js';
import type { Doc } from '../documents/primary-key.js';
import { encodeDoc } from '../documents/document-json.js';
import { extractDocumentId, inferPrimaryKey } from '../documents/primary-key.js';
import { Engine, indexNotFound } from '../engine.js';
import { INDEX_UIDS, IndexHandle, type IndexMeta } from '../indexes/index-handle.js';
import type { DocChange, PreparedIndexUpdate } from '../structures/search-index.js';
import { applySettingsPatch } from '../settings/apply.js';
import { Yielder } from '../../util/yielder.js';
import { OrderedSplitMap, type SplitMap } from '../../util/split-map.js';
import { compileEdition, editDocument, TASK_LIMITS } from '../documents/edit-by-function.js';
import { Interpreter } from '../rhai/interpreter.js';
import { fromJson } from '../rhai/values.js';
import { writeExternalIds } from '../indexes/external-ids.js';
import type { IdMapLayer } from '../indexes/external-id-map.js';
import { removeUncommittedDocuments, writeDocumentsAhead } from './documents-ahead.js';

function succeeded(details: Record<string, unknown> | null): TaskOutcome {
  return { status: 'succeeded', details, error: null };
}

function failed(details: Record<string, unknown> | null, e: unknown): TaskOutcome {
  if (!(e instanceof ApiError)) throw e; // an internal error aborts the batch instead of failing one task
  return { status: 'failed', details, error: toErrorBody(e) };
}

/** Errors about the index's primary key or a filter on it name the index, as the reference's task errors do. */
function aboutIndex(uid: string, e: unknown): unknown {
  if (!(e instanceof ApiError)) return e;
  return e.code.startsWith('index_primary_key_') || e.code === 'invalid_document_filter' ? e.prefixed(`Index \`${uid}\`: `) : e;
}

function docBytes(doc: Doc): number {
  return Buffer.byteLength(encodeDoc(doc).text);
}

const ABSENT = Symbol('absent');

/** What a task changed in the maps of a `DocState`, to take it back if the task fails. */
class UndoLog {
  readonly maps: SplitMap<string | number, unknown>[] = [];
  readonly keys: unknown[] = [];
  readonly olds: unknown[] = [];

  clear(): void {
    this.maps.length = this.keys.length = this.olds.length = 0;
  }
}

/**
 * A map whose changes are logged, so that a failed task's can be undone. Split (`SplitMap`):
 * a batch of many tasks changes a million documents.
 */
class LoggedMap<K extends string | number, V> extends OrderedSplitMap<K, V> {
  constructor(private readonly log: UndoLog) {
    super();
  }

  override set(key: K, value: V): this {
    this.log.maps.push(this as SplitMap<string | number, unknown>);
    this.log.keys.push(key);
    this.log.olds.push(this.has(key) ? this.get(key) : ABSENT);
    return super.set(key, value);
  }
}

interface Savepoint {
  changed: LoggedMap<number, Doc | null>;
  ext: LoggedMap<string, number | null>;
  cleared: boolean;
  primaryKey: string | null;
  nextDocid: number;
}

/**
 * The state of one index's documents while a batch is processed. Each task works on it
 * directly; one that fails is rolled back to the savepoint taken before it (a copy per task
 * would cost a batch of many tasks time quadratic in its documents).
 */
class DocState {
  private readonly log = new UndoLog();
  changed = new LoggedMap<number, Doc | null>(this.log);
  ext = new LoggedMap<string, number | null>(this.log);
  cleared = false;
  primaryKey: string | null;
  nextDocid: number;

  constructor(
    readonly engine: Engine,
    readonly handle: IndexHandle | null,
    meta: IndexMeta,
    /** Documents as stored before the batch, loaded on demand. */
    readonly originals: Map<number, Doc | null>,
  ) {
    this.primaryKey = meta.primaryKey;
    this.nextDocid = meta.nextDocid;
  }

  /** Where `rollback` returns to; the log before it is no longer needed. */
  savepoint(): Savepoint {
    this.log.clear();
    return { changed: this.changed, ext: this.ext, cleared: this.cleared, primaryKey: this.primaryKey, nextDocid: this.nextDocid };
  }

  rollback(to: Savepoint): void {
    const { maps, keys, olds } = this.log;
    for (let i = keys.length - 1; i >= 0; i--) {
      // Straight to the unlogged methods: undoing is not logged.
      if (olds[i] === ABSENT) maps[i]!.delete(keys[i] as string | number);
      else OrderedSplitMap.prototype.set.call(maps[i], keys[i] as string | number, olds[i]);
    }
    this.log.clear();
    this.changed = to.changed;
    this.ext = to.ext;
    this.cleared = to.cleared;
    this.primaryKey = to.primaryKey;
    this.nextDocid = to.nextDocid;
  }

  /** Every task has run: nothing is rolled back any more (the log would hold the batch's documents). */
  seal(): void {
    this.log.clear();
  }

  /** Empty maps for a task that clears the index (the old ones come back on rollback). */
  clearMaps(): void {
    this.changed = new LoggedMap(this.log);
    this.ext = new LoggedMap(this.log);
  }

  lookup(id: string): number | undefined {
    if (this.ext.has(id)) return this.ext.get(id) ?? undefined;
    if (this.cleared || !this.handle) return undefined;
    return this.handle.ext.get(id);
  }

  existingDocids(): number[] {
    const out = new Set<number>();
    if (this.handle && !this.cleared) for (const d of this.handle.ext.values()) out.add(d);
    for (const [id, d] of this.ext) {
      const base = this.cleared || !this.handle ? undefined : this.handle.ext.get(id);
      if (base !== undefined && d !== base) out.delete(base);
      if (d !== null) out.add(d);
    }
    return [...out].sort((a, b) => a - b);
  }

  async load(docids: number[]): Promise<void> {
    if (!this.handle) return;
    const missing = docids.filter((d) => !this.originals.has(d));
    if (missing.length === 0) return;
    const docs = await this.engine.readDocs(this.engine.store, this.handle, missing);
    missing.forEach((d, i) => this.originals.set(d, docs[i] ?? null));
  }

  async current(docid: number): Promise<Doc | null> {
    if (this.changed.has(docid)) return this.changed.get(docid) ?? null;
    if (this.cleared) return null;
    await this.load([docid]);
    return this.originals.get(docid) ?? null;
  }
}

async function applyDocuments(st: DocState, p: Extract<IndexOperation, { op: 'documents' }>, docs: Doc[]): Promise<number> {
  // No document: nothing to infer a primary key from, and nothing to do (the reference succeeds).
  if (docs.length === 0 && p.primaryKey === null) return 0;
  if (st.primaryKey === null) {
    st.primaryKey = p.primaryKey ?? inferPrimaryKey(docs[0]);
  } else if (p.primaryKey !== null && p.primaryKey !== st.primaryKey) {
    throw new ApiError('index_primary_key_already_exists', `Index already has a primary key: \`${st.primaryKey}\`.`);
  }
  const pk = st.primaryKey;
  const ids = docs.map((d) => extractDocumentId(d, pk));
  // In a sharded network, each instance keeps the documents of its own shards only: the
  // network is part of the replicated state, so every node of a cluster keeps the same ones.
  const owned = ownedDocuments(st.engine.network.get());
  if (p.method === 'update') {
    const existing = ids.map((id) => st.lookup(id)).filter((d): d is number => d !== undefined && !st.changed.has(d));
    await st.load(existing);
  }
  let indexed = 0;
  const turns = new Yielder();
  for (let i = 0; i < docs.length; i++) {
    if ((i & 255) === 255) await turns.maybe();
    const id = ids[i]!;
    if (owned && !owned(id)) continue;
    let docid = st.lookup(id);
    let doc = docs[i]!;
    if (docid === undefined) {
      if (p.skipCreation) continue;
      docid = st.nextDocid++;
      st.ext.set(id, docid);
    } else if (p.method === 'update') {
      const old = await st.current(docid);
      if (old) doc = { ...old, ...doc };
    }
    st.changed.set(docid, doc);
    indexed++;
  }
  return indexed;
}

function deleteDocids(st: DocState, docids: number[], idsOf: Map<number, string>): number {
  for (const d of docids) {
    st.changed.set(d, null);
    const id = idsOf.get(d);
    if (id !== undefined) st.ext.set(id, null);
  }
  return docids.length;
}

/** A write whose requester lacks `indexes.create` must not create its index. */
function mayNotCreate(t: BatchTask): boolean {
  const p = t.params;
  return (p.op === 'documents' || p.op === 'settings') && p.createIndex === false;
}

/** Processes the document tasks of one batch on one index. */
async function processDocumentTasks(engine: Engine, tasks: BatchTask[], at: number): Promise<ProcessedBatch> {
  const uid = tasks[0]!.indexUid!;
  const outcomes = new Map<number, TaskOutcome>();
  const existing = engine.indexes.get(uid) ?? null;
  const creates = existing === null;
  // The autobatcher keeps tasks whose requester may not create indexes in batches of their own.
  if (creates && (tasks.every((t) => t.params.op !== 'documents') || mayNotCreate(tasks[0]!))) {
    for (const t of tasks) outcomes.set(t.uid, failed(deletionDetails(t, 0), indexNotFound(uid)));
    return { outcomes, write() {}, publish() {} };
  }
  const meta: IndexMeta = existing ? { ...existing.meta } : engine.newIndexMeta(uid, null, at);
  const st = new DocState(engine, existing, meta, new Map());
  let indexCreated = creates;

  for (const t of tasks) {
    const p = t.params;
    if (!existing && !indexCreated && p.op !== 'documents') {
      outcomes.set(t.uid, failed(deletionDetails(t, 0), indexNotFound(uid)));
      continue;
    }
    // Tasks work on the batch's state directly; a failed one is rolled back.
    const savepoint = st.savepoint();
    try {
      if (p.op === 'documents') {
        const n = await applyDocuments(st, p, t.documents ?? []);
        outcomes.set(t.uid, succeeded({ ...t.details, indexedDocuments: n }));
      } else if (p.op === 'deleteIds') {
        const idsOf = new Map<number, string>();
        const docids: number[] = [];
        for (const id of new Set(p.ids)) {
          const d = st.lookup(id);
          if (d !== undefined) {
            docids.push(d);
            idsOf.set(d, id);
          }
        }
        await st.load(docids.filter((d) => !st.changed.has(d)));
        outcomes.set(t.uid, succeeded({ ...t.details, deletedDocuments: deleteDocids(st, docids, idsOf) }));
      } else if (p.op === 'clear') {
        const n = st.existingDocids().length;
        st.cleared = true;
        st.clearMaps();
        outcomes.set(t.uid, succeeded({ deletedDocuments: n }));
      } else if (p.op === 'deleteFilter') {
        // The autobatcher starts a new batch at a filter deletion, so the published state is the one to filter.
        if (t !== tasks[0]) throw new Error('a deletion by filter must come first in its batch');
        // Never "every document" by default: a filter that says nothing fails the task.
        parseRequiredFilter(p.filter, { code: 'invalid_document_filter', containsFilter: true });
        const docids = existing ? [...(filterDocids(existing, p.filter, appliedFilterOptions(engine)) ?? [])] : [];
        const idsOf = new Map<number, string>();
        const wanted = new Set(docids);
        const lookupIds = (m: Iterable<[string, number | null]>) => {
          for (const [id, d] of m) if (d !== null && wanted.has(d)) idsOf.set(d, id);
        };
        if (existing && !st.cleared) lookupIds(existing.ext);
        lookupIds(st.ext);
        await st.load(docids.filter((d) => !st.changed.has(d)));
        outcomes.set(t.uid, succeeded({ ...t.details, deletedDocuments: deleteDocids(st, docids, idsOf) }));
      } else if (p.op === 'edit') {
        // Processed alone (see the autobatcher): the filter reads the published state.
        if (t !== tasks[0]) throw new Error('a document edition must come first in its batch');
        const counts = await editDocuments(engine, existing, st, p);
        outcomes.set(t.uid, succeeded({ ...t.details, ...counts }));
      } else {
        throw new Error(`unexpected task in a documents batch: ${p.op}`);
      }
    } catch (e) {
      st.rollback(savepoint);
      outcomes.set(t.uid, failed(failureDetails(t), aboutIndex(uid, e)));
    }
  }
  st.seal();
  // Like the reference, a batch that had to create its index keeps it even when every task failed.
  if (!creates && ![...outcomes.values()].some((o) => o.status === 'succeeded')) {
    return { outcomes, write() {}, publish() {} };
  }
  const pristine = structuredClone(meta);
  try {
    return await finishDocuments(engine, existing, meta, st, at, outcomes);
  } catch (e) {
    // The search structures refused the batch (an embedder failing, bad `_vectors`): every
    // task it had applied fails with that error and none of their changes is kept.
    if (!(e instanceof ApiError)) throw e;
    const err = e.prefixed(`Index \`${uid}\`: `);
    for (const t of tasks) if (outcomes.get(t.uid)?.status === 'succeeded') outcomes.set(t.uid, failed(failureDetails(t), err));
    if (!creates) return { outcomes, write() {}, publish() {} };
    return finishDocuments(engine, null, pristine, new DocState(engine, null, pristine, new Map()), at, outcomes);
  }
}

/**
 * A filter of a logged task, read as its route accepted it (features were checked there):
 * `_foreign(…)` against the other indexes and `_shard` against the network as this point of the
 * log left them, so every node selects the same documents.
 */
function appliedFilterOptions(engine: Engine) {
  return { code: 'invalid_document_filter' as const, ...engineFilterOptions(engine, { containsFilter: true, foreignKeys: true }) };
}

function deletionDetails(t: BatchTask, deleted: number): Record<string, unknown> | null {
  if (t.params.op === 'edit') return { ...t.details, editedDocuments: 0, deletedDocuments: deleted };
  return t.details ? { ...t.details, deletedDocuments: deleted } : null;
}

/** Runs an edition function over the documents its filter keeps; any error fails the whole task. */
async function editDocuments(
  engine: Engine,
  existing: IndexHandle | null,
  work: DocState,
  p: Extract<IndexOperation, { op: 'edit' }>,
): Promise<{ editedDocuments: number; deletedDocuments: number }> {
  const run = new Interpreter(compileEdition(p.function), TASK_LIMITS);
  const context = p.context ? fromJson(p.context) : undefined;
  const filtered = p.filter !== null && p.filter !== undefined;
  // A blank filter reaching the log is refused here too, not read as every document.
  if (filtered) parseRequiredFilter(p.filter, { code: 'invalid_document_filter', containsFilter: true });
  const docids = !existing
    ? []
    : filtered
      ? [...(filterDocids(existing, p.filter, appliedFilterOptions(engine)) ?? [])].sort((a, b) => a - b)
      : work.existingDocids();
  let edited = 0;
  let deleted = 0;
  const yielder = new Yielder();
  for (let i = 0; i < docids.length; i += 1000) {
    const chunk = docids.slice(i, i + 1000);
    await work.load(chunk.filter((d) => !work.changed.has(d)));
    for (const docid of chunk) {
      const doc = await work.current(docid);
      if (!doc) continue;
      const r = editDocument(run, doc, context, work.primaryKey);
      if (r.kind === 'deleted') {
        deleteDocids(work, [docid], new Map([[docid, extractDocumentId(doc, work.primaryKey!)]]));
        deleted++;
      } else if (r.kind === 'edited') {
        work.changed.set(docid, r.doc);
        edited++;
      }
      // Editions run for a while on large indexes: heartbeats and searches get their turns.
      await yielder.maybe();
    }
  }
  return { editedDocuments: edited, deletedDocuments: deleted };
}

function failureDetails(t: BatchTask): Record<string, unknown> | null {
  const p = t.params;
  if (p.op === 'documents') return { ...t.details, indexedDocuments: 0 };
  if (p.op === 'edit') return { ...t.details, editedDocuments: 0, deletedDocuments: 0 };
  return deletionDetails(t, 0);
}

function topLevelFields(doc: Doc): string[] {
  return Object.keys(doc);
}

async function finishDocuments(
  engine: Engine,
  existing: IndexHandle | null,
  meta: IndexMeta,
  st: DocState,
  at: number,
  outcomes: Map<number, TaskOutcome>,
): Promise<ProcessedBatch> {
  meta.primaryKey = st.primaryKey;
  meta.nextDocid = st.nextDocid;
  meta.updatedAt = at;
  const fd = new Map(Object.entries(st.cleared ? {} : meta.fieldDistribution));
  const bump = (doc: Doc, by: number) => {
    for (const f of topLevelFields(doc)) {
      const n = (fd.get(f) ?? 0) + by;
      if (n > 0) fd.set(f, n);
      else fd.delete(f);
    }
  };
  if (st.cleared) {
    meta.docCount = 0;
    meta.rawDocumentBytes = 0;
  }
  const changes: DocChange[] = [];
  // Before-images of everything the batch touched, read in one go.
  if (!st.cleared) await st.load([...st.changed.keys()].filter((d) => d < (existing?.meta.nextDocid ?? 0)));
  // Each new document is encoded once: its size counts in the stats, its text is stored.
  const encoded = new Map<number, string>();
  const yielder = new Yielder();
  for (const [docid, after] of st.changed) {
    const before = st.cleared ? null : (st.originals.get(docid) ?? null);
    if (before === null && after === null) continue;
    if (before) {
      bump(before, -1);
      meta.docCount--;
      meta.rawDocumentBytes -= docBytes(before);
    }
    if (after) {
      const { text: json, exactIntegers } = encodeDoc(after);
      if (exactIntegers && !meta.exactIntegers) {
        meta.exactIntegers = true;
        // Readers see the new documents once the batch is committed, a moment before the new
        // meta is published: they must already read them with their big integers.
        if (existing) existing.meta.exactIntegers = true;
      }
      encoded.set(docid, json);
      bump(after, +1);
      meta.docCount++;
      meta.rawDocumentBytes += Buffer.byteLength(json);
    }
    changes.push({ docid, before, after });
    await yielder.maybe();
  }
  meta.fieldDistribution = Object.fromEntries([...fd.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

  const handle = existing ?? (await engine.openHandle(meta));
  const update: PreparedIndexUpdate = await handle.search.prepare(changes, meta.settings, { reset: st.cleared, primaryKey: meta.primaryKey });
  let ids: IdMapLayer | null = null;
  return {
    outcomes,
    async write(wb) {
      if (!existing) {
        wb.put(INDEX_UIDS.key(meta.uid), u64(meta.id));
        engine.writeEngineMeta(wb);
      }
      if (st.cleared) wb.delPrefix(handle.docs.prefix);
      // Documents under docids the index never used go ahead in writes of their own
      // (documents-ahead.ts); a cleared index's stay behind its deletion, in this write.
      const firstNew = st.cleared ? Infinity : (existing?.meta.nextDocid ?? 0);
      const ahead: number[] = [];
      const turns = new Yielder();
      for (const [docid, after] of st.changed) {
        if (after && docid >= firstNew) ahead.push(docid);
        else if (after) wb.put(handle.docKey(docid), encoded.get(docid)!);
        else if (!st.cleared) wb.del(handle.docKey(docid));
        await turns.maybe();
      }
      if (ahead.length > 0) {
        // An index id is used again when its creation never committed: so may be its docids.
        if (!existing) await removeUncommittedDocuments(engine.store, handle, 0);
        await writeDocumentsAhead(engine.store, handle, ahead, encoded);
      }
      await writeExternalIds(engine.store, wb, meta.id, st.ext, (id) => handle.ext.get(id), st.cleared);
      ids = await handle.ext.prepare(st.ext, st.cleared, turns);
      wb.put(handle.metaKey(), JSON.stringify(meta));
      await update.write(wb);
    },
    publish() {
      handle.meta = meta;
      if (ids) handle.ext.publish(ids);
      update.publish();
      engine.indexes.set(meta.uid, handle);
      engine.lastUpdate = at;
    },
  };
}

const u64 = (n: number) => encodeUint(n, 8);

/** Processes the settings tasks of one batch on one index; a missing index is created. */
async function processSettingsTasks(engine: Engine, tasks: BatchTask[], at: number): Promise<ProcessedBatch> {
  const uid = tasks[0]!.indexUid!;
  const existing = engine.indexes.get(uid) ?? null;
  const outcomes = new Map<number, TaskOutcome>();
  if (!existing && mayNotCreate(tasks[0]!)) {
    for (const t of tasks) outcomes.set(t.uid, failed(t.details, indexNotFound(uid)));
    return { outcomes, write() {}, publish() {} };
  }
  const meta: IndexMeta = existing ? { ...existing.meta } : engine.newIndexMeta(uid, null, at);
  let settings = meta.settings;
  for (const t of tasks) {
    try {
      if (t.params.op !== 'settings') throw new Error(`unexpected task in a settings batch: ${t.params.op}`);
      settings = applySettingsPatch(settings, t.params.settings);
      outcomes.set(t.uid, succeeded(t.details));
    } catch (e) {
      outcomes.set(t.uid, failed(t.details, e));
    }
  }
  const previous = meta.settings;
  meta.settings = settings;
  meta.updatedAt = at;
  const handle = existing ?? (await engine.openHandle(meta));
  const changed = JSON.stringify(previous) !== JSON.stringify(settings);
  let update: PreparedIndexUpdate | null = null;
  try {
    if (existing && changed) update = await handle.search.rebuild(() => engine.allDocuments(handle), settings, { primaryKey: meta.primaryKey });
  } catch (e) {
    // Re-indexing under the new settings failed (an embedder failing): the settings stay as they were.
    if (!(e instanceof ApiError)) throw e;
    const err = e.prefixed(`Index \`${uid}\`: `);
    for (const t of tasks) if (outcomes.get(t.uid)?.status === 'succeeded') outcomes.set(t.uid, failed(t.details, err));
    return { outcomes, write() {}, publish() {} };
  }
  return {
    outcomes,
    async write(wb) {
      if (!existing) {
        wb.put(INDEX_UIDS.key(meta.uid), u64(meta.id));
        engine.writeEngineMeta(wb);
      }
      wb.put(handle.metaKey(), JSON.stringify(meta));
      await update?.write(wb);
    },
    publish() {
      handle.meta = meta;
      update?.publish();
      engine.indexes.set(meta.uid, handle);
      engine.lastUpdate = at;
    },
  };
}

/** Processes a batch prepared by the autobatcher. Never mutates visible state before `publish`. */
export async function processBatch(engine: Engine, tasks: BatchTask[], at: number): Promise<ProcessedBatch> {
  const first = tasks[0]!;
  const op = first.params.op;
  if (op === 'documents' || op === 'deleteIds' || op === 'deleteFilter' || op === 'clear' || op === 'edit') {
    return processDocumentTasks(engine, tasks, at);
  }
  if (op === 'settings') return processSettingsTasks(engine, tasks, at);
  if (tasks.length !== 1) throw new Error(`a ${first.type} task must be processed alone`);
  if (op === 'dsrUpdate' || op === 'dsrDelete' || op === 'dsrClear') return processRuleTask(engine, first, at);
  if (op === 'export') return processExportTask(first);
  if (op === 'network') {
    const deleteIds = (indexUid: string, ids: string[]) =>
      processDocumentTasks(engine, [{ uid: first.uid, type: 'documentDeletion', indexUid, params: { op: 'deleteIds', ids }, details: null }], at);
    return processNetworkTask(engine, first, deleteIds);
  }
  return processIndexTask(engine, first, at);
}

/**
 * An export does its sending between two batches: the first leaves it processing, the second
 * ends it with what the sending reported (see `network/exporter.ts`). It changes nothing here.
 */
function processExportTask(t: BatchTask): ProcessedBatch {
  let outcome: TaskOutcome;
  if (!t.resume) outcome = { status: 'processing', details: t.details, error: null, continuation: {} };
  else if (t.resume.error) outcome = { status: 'failed', details: t.resume.details ?? t.details, error: t.resume.error };
  else outcome = { status: 'succeeded', details: t.resume.details ?? t.details, error: null };
  return { outcomes: new Map([[t.uid, outcome]]), write() {}, publish() {} };
}
