import { KeyStore } from '../auth/key-store.js';
import { ChatWorkspaces } from '../chat/workspaces.js';
import { SearchRuleStore } from '../engine/search-rules/rules.js';
import { NetworkStore } from '../engine/network/network.js';
import { WebhookStore } from '../webhooks/webhook-store.js';
import type { Engine } from '../engine/engine.js';
import { ExperimentalFeatures } from '../features/experimental-features.js';
import type { KvStore } from '../store/kv.js';
import { summarizeBatch, type BatchRecord } from '../tasks/batch.js';
import { PAYLOADS, type PendingBatch, type TaskQueue } from '../tasks/task-queue.js';
import { isFinished, type TaskRecord } from '../tasks/task.js';
import { VERSION } from '../version.js';
import { DUMP_FORMAT, DUMP_VERSION, type DumpRecord } from './dump-format.js';
import { AtomicFileWriter } from './file-writer.js';
import { stringifyJson } from '../util/exact-json.js';
import { decodePayload, payloadHasExactIntegers } from '../engine/documents/document-json.js';

export interface DumpJob {
  path: string;
  dumpUid: string;
  nodeId: string;
  /** The dumpCreation task, processing in `batch`. */
  task: TaskRecord;
  batch: PendingBatch;
  /** Checked between records: a dump can take a while, and the node may be stopping. */
  shouldStop(): boolean;
}

/** Thrown when a dump stopped half-way because the node is stopping. */
export class DumpInterrupted extends Error {}

/**
 * Writes a dump (format in `dump-format.ts`) of the state this node holds at the dump's place
 * in the log. The executor is blocked on the dump's batch, so indexes and the tasks before the
 * dump cannot change meanwhile; keys, features, webhooks, chat workspaces and the network,
 * which the log may change at any moment, are read under one RocksDB snapshot. Tasks after the dump are left out, so that every node
 * dumps the same history whatever it had received by then. Resolves with the moment the dump
 * was complete, which is the task's `finishedAt` (inside the dump too).
 */
export async function writeDump(store: KvStore, engine: Engine, queue: TaskQueue, job: DumpJob): Promise<number> {
  const snap = store.snapshot();
  const w = new AtomicFileWriter(job.path, { gzip: true });
  let records = 0;
  const put = async (rec: DumpRecord) => {
    await w.write(Buffer.from(stringifyJson(rec) + '\n'));
    records++;
  };
  try {
    await put({
      kind: 'header',
      format: DUMP_FORMAT,
      version: DUMP_VERSION,
      trineVersion: VERSION.pkgVersion,
      dumpUid: job.dumpUid,
      nodeId: job.nodeId,
      createdAt: job.batch.startedAt,
      taskUid: job.task.uid,
    });
    const features = new ExperimentalFeatures();
    await features.load(snap);
    await put({ kind: 'features', features: features.get() });
    const keys = new KeyStore(null);
    await keys.load(snap);
    for (const key of keys.list().reverse()) await put({ kind: 'key', key });
    const webhooks = new WebhookStore();
    await webhooks.load(snap);
    for (const [uuid, webhook] of webhooks.all()) await put({ kind: 'webhook', uuid, webhook });
    const rules = new SearchRuleStore();
    await rules.load(snap);
    for (const rule of rules.list()) await put({ kind: 'searchRule', rule });
    const chats = new ChatWorkspaces();
    await chats.load(snap);
    for (const uid of chats.list()) await put({ kind: 'chat', uid, settings: chats.get(uid)! });
    const network = new NetworkStore();
    await network.load(snap);
    await put({ kind: 'network', network: network.get() });

    for (const h of engine.listIndexes()) {
      const m = h.meta;
      await put({ kind: 'index', uid: m.uid, primaryKey: m.primaryKey, createdAt: m.createdAt, updatedAt: m.updatedAt, settings: m.settings });
      let n = 0;
      for await (const [, document] of engine.allDocuments(h, snap)) {
        await put({ kind: 'document', index: m.uid, document });
        if (++n % 1000 === 0 && job.shouldStop()) throw new DumpInterrupted('the node is stopping');
      }
    }

    const tasks = [...queue.tasks.values()].filter((t) => t.uid < job.task.uid).sort((a, b) => a.uid - b.uid);
    // Tasks not processed yet go in as enqueued with their documents: the importing node runs
    // them. Finished tasks keep theirs too, as they do here (`GET /tasks/{uid}/documents`).
    const withPayload = tasks.filter((t) => t.params.op === 'documents');
    const payloads = await snap.getMany(withPayload.map((t) => PAYLOADS.key(t.uid)));
    for (let i = 0; i < withPayload.length; i++) {
      const buf = payloads[i];
      if (buf) await put({ kind: 'payload', taskUid: withPayload[i]!.uid, documents: decodePayload(buf, payloadHasExactIntegers(withPayload[i]!.params)) });
    }
    const finishedAt = Math.max(Date.now(), job.batch.startedAt);
    for (const t of tasks) {
      const task: TaskRecord = isFinished(t.status) ? t : { ...t, status: 'enqueued', batchUid: null, startedAt: null };
      await put({ kind: 'task', task });
    }
    // The dump's own task, as the executor will finish it once the file is in place.
    const own: TaskRecord = {
      ...job.task,
      status: 'succeeded',
      batchUid: job.batch.uid,
      startedAt: job.batch.startedAt,
      finishedAt,
      details: { ...job.task.details, dumpUid: job.dumpUid },
      error: null,
    };
    await put({ kind: 'task', task: own });

    const batches = [...queue.batches.values()].filter((b) => b.uid < job.batch.uid).sort((a, b) => a.uid - b.uid);
    for (const batch of batches) await put({ kind: 'batch', batch });
    const ownBatch: BatchRecord = {
      uid: job.batch.uid,
      taskUids: job.batch.taskUids,
      startedAt: job.batch.startedAt,
      finishedAt,
      reason: job.batch.reason,
      stats: null,
      details: {},
    };
    summarizeBatch(ownBatch, [own]);
    await put({ kind: 'batch', batch: ownBatch });

    const end = {
      kind: 'end' as const,
      records,
      nextTaskUid: job.task.uid + 1,
      nextBatchUid: job.batch.uid + 1,
      sha256: w.digest().toString('hex'),
    };
    await w.writeRaw(Buffer.from(JSON.stringify(end) + '\n'));
    await w.finish();
    return finishedAt;
  } catch (e) {
    w.abort();
    throw e;
  } finally {
    await snap.release();
  }
}
