import { stageKey } from '../auth/key-store.js';
import { ChatWorkspaces } from '../chat/workspaces.js';
import { WebhookStore } from '../webhooks/webhook-store.js';
import { processBatch } from '../engine/apply/apply-batch.js';
import type { BatchTask, IndexOperation } from '../engine/apply/types.js';
import type { Doc } from '../engine/documents/primary-key.js';
import { Engine } from '../engine/engine.js';
import type { EmbedderEnvironment } from '../engine/vector/embedder-environment.js';
import { ExperimentalFeatures } from '../features/experimental-features.js';
import type { KvStore } from '../store/kv.js';
import { PAYLOADS, TaskQueue } from '../tasks/task-queue.js';
import { readDump, type DumpRecord } from './dump-format.js';
import { BackupFileError } from './file-writer.js';
import { encodePayload } from '../engine/documents/document-json.js';

/** Documents indexed per batch while importing: large enough to index fast, small enough to hold in memory. */
const DOCUMENTS_PER_BATCH = 10_000;

type IndexRecord = Extract<DumpRecord, { kind: 'index' }>;

export interface DumpImportSummary {
  indexes: number;
  documents: number;
  tasks: number;
  keys: number;
}

/**
 * Recreates a dump's content in an empty store through the engine's own paths: each index is
 * created, gets its settings, then its documents in batches, exactly as tasks would do it, so
 * the search structures are built by the code that maintains them. Tasks, batches, keys and
 * features are written as they were. The dump is checked while it is read; the caller imports
 * into a scratch database and drops it if this throws.
 */
export async function importDump(path: string, store: KvStore, embedderEnv?: EmbedderEnvironment): Promise<DumpImportSummary> {
  // A fresh node alone: embeddings are asked of the embedders directly.
  const engine = await Engine.open(store, embedderEnv ? { embedderEnv } : {});
  const queue = new TaskQueue();
  const summary: DumpImportSummary = { indexes: 0, documents: 0, tasks: 0, keys: 0 };
  let index: IndexRecord | null = null;
  let docs: Doc[] = [];
  const imported: IndexRecord[] = [];
  let wb = store.batch();
  const flushWrites = async (force = false) => {
    if (!force && wb.size < 1000) return;
    await wb.commit();
    wb = store.batch();
  };

  const run = async (type: string, params: IndexOperation, at: number, documents?: Doc[]) => {
    const task: BatchTask = { uid: 0, type, indexUid: index!.uid, params, details: null, ...(documents ? { documents } : {}) };
    const processed = await processBatch(engine, [task], at);
    const outcome = processed.outcomes.get(0);
    if (outcome?.status === 'failed') {
      throw new BackupFileError(`The dump ${path} could not be imported: index \`${index!.uid}\`: ${outcome.error?.message ?? 'failed'}`);
    }
    const batch = store.batch();
    await processed.write(batch);
    await batch.commit();
    processed.publish();
  };
  const flushDocuments = async () => {
    if (!index || docs.length === 0) return;
    await run('documentAdditionOrUpdate', { op: 'documents', method: 'replace', primaryKey: index.primaryKey }, index.updatedAt, docs);
    summary.documents += docs.length;
    docs = [];
  };

  for await (const rec of readDump(path)) {
    switch (rec.kind) {
      case 'header':
        break;
      case 'features':
        new ExperimentalFeatures().apply(rec.features, 0, wb);
        break;
      case 'key':
        stageKey(wb, rec.key);
        summary.keys++;
        break;
      case 'webhook':
        new WebhookStore().apply({ op: 'create', uuid: rec.uuid, url: rec.webhook.url, headers: rec.webhook.headers }, 0, wb);
        break;
      case 'searchRule':
        engine.searchRules.put(wb, rec.rule);
        break;
      case 'chat':
        new ChatWorkspaces().put(wb, rec.uid, rec.settings);
        break;
      case 'network':
        engine.network.put(wb, rec.network);
        break;
      case 'index':
        await flushDocuments();
        index = rec;
        imported.push(rec);
        summary.indexes++;
        await run('indexCreation', { op: 'createIndex', primaryKey: rec.primaryKey }, rec.createdAt);
        await run('settingsUpdate', { op: 'settings', settings: rec.settings as unknown as Record<string, unknown> }, rec.createdAt);
        break;
      case 'document':
        if (!index || rec.index !== index.uid) {
          throw new BackupFileError(`The dump ${path} is corrupted: a document of \`${rec.index}\` outside that index's section.`);
        }
        docs.push(rec.document);
        if (docs.length >= DOCUMENTS_PER_BATCH) await flushDocuments();
        break;
      case 'payload':
        await flushDocuments();
        index = null;
        // Its task, a record of its own, says whether it holds big integers, as it did where the dump was made.
        wb.put(PAYLOADS.key(rec.taskUid), encodePayload(rec.documents).bytes);
        break;
      case 'task':
        await flushDocuments();
        index = null;
        queue.writeTask(wb, rec.task);
        summary.tasks++;
        break;
      case 'batch':
        queue.writeBatch(wb, rec.batch);
        break;
      case 'end':
        await flushDocuments();
        queue.nextTaskUid = rec.nextTaskUid;
        queue.nextBatchUid = rec.nextBatchUid;
        break;
    }
    await flushWrites();
  }
  await flushDocuments();

  // Indexes keep the dates they had, not the import's.
  for (const rec of imported) {
    const h = engine.getIndex(rec.uid);
    h.meta = { ...h.meta, createdAt: rec.createdAt, updatedAt: rec.updatedAt };
    wb.put(h.metaKey(), JSON.stringify(h.meta));
  }
  // The imported state stands for the first entry of a new log (see `seedRaftState`).
  queue.appliedIndex = 1;
  queue.writeCounters(wb);
  await flushWrites(true);
  return summary;
}
