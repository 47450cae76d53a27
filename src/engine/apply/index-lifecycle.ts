import { ApiError, toErrorBody } from '../../errors/api-error.js';
import { encodeUint } from '../../store/keys.js';
import type { BatchTask, ProcessedBatch, TaskOutcome } from './types.js';
import { Engine, indexNotFound } from '../engine.js';
import { INDEX_UIDS, type IndexHandle } from '../indexes/index-handle.js';

function single(t: BatchTask, outcome: TaskOutcome, write: ProcessedBatch['write'] = () => {}, publish = () => {}): ProcessedBatch {
  return { outcomes: new Map([[t.uid, outcome]]), write, publish };
}

function fail(t: BatchTask, e: ApiError, details = t.details): ProcessedBatch {
  return single(t, { status: 'failed', details, error: toErrorBody(e) });
}

function alreadyExists(uid: string): ApiError {
  return new ApiError('index_already_exists', `Index \`${uid}\` already exists.`);
}

/** Index creation, update (primary key, rename), deletion and swaps: one task per batch. */
export async function processIndexTask(engine: Engine, t: BatchTask, at: number): Promise<ProcessedBatch> {
  const p = t.params;
  const ok = (details = t.details): TaskOutcome => ({ status: 'succeeded', details, error: null });
  switch (p.op) {
    case 'createIndex': {
      const uid = t.indexUid!;
      if (engine.indexes.has(uid)) return fail(t, alreadyExists(uid));
      const meta = engine.newIndexMeta(uid, p.primaryKey, at);
      const handle = await engine.openHandle(meta);
      return single(
        t,
        ok(),
        (wb) => {
          wb.put(INDEX_UIDS.key(uid), encodeUint(meta.id));
          engine.writeEngineMeta(wb);
          wb.put(handle.metaKey(), JSON.stringify(meta));
        },
        () => {
          engine.indexes.set(uid, handle);
          engine.lastUpdate = at;
        },
      );
    }
    case 'updateIndex': {
      const uid = t.indexUid!;
      const h = engine.indexes.get(uid);
      if (!h) return fail(t, indexNotFound(uid));
      const meta = { ...h.meta, updatedAt: at };
      if (p.primaryKey !== undefined && p.primaryKey !== null && p.primaryKey !== h.meta.primaryKey) {
        if (h.meta.docCount > 0) {
          return fail(
            t,
            new ApiError('index_primary_key_already_exists', `Index \`${uid}\`: Index already has a primary key: \`${h.meta.primaryKey}\`.`),
          );
        }
        meta.primaryKey = p.primaryKey;
      }
      if (p.newUid !== null && p.newUid !== uid) {
        if (engine.indexes.has(p.newUid)) return fail(t, alreadyExists(p.newUid));
        meta.uid = p.newUid;
      }
      const details = { ...t.details, primaryKey: meta.primaryKey };
      return single(
        t,
        ok(details),
        (wb) => {
          if (meta.uid !== uid) {
            wb.del(INDEX_UIDS.key(uid));
            wb.put(INDEX_UIDS.key(meta.uid), encodeUint(meta.id));
          }
          wb.put(h.metaKey(), JSON.stringify(meta));
        },
        () => {
          h.meta = meta;
          engine.indexes.delete(uid);
          engine.indexes.set(meta.uid, h);
          engine.lastUpdate = at;
        },
      );
    }
    case 'deleteIndex': {
      const uid = t.indexUid!;
      const h = engine.indexes.get(uid);
      if (!h) return fail(t, indexNotFound(uid), { deletedDocuments: 0 });
      return single(
        t,
        ok({ deletedDocuments: h.meta.docCount }),
        (wb) => {
          wb.del(INDEX_UIDS.key(uid));
          wb.delPrefix(h.space.prefix);
        },
        () => {
          engine.indexes.delete(uid);
          engine.lastUpdate = at;
        },
      );
    }
    case 'swap': {
      const missing: string[] = [];
      for (const s of p.swaps) {
        const [a, b] = s.indexes;
        if (!engine.indexes.has(a) && !missing.includes(a)) missing.push(a);
        if (!s.rename && !engine.indexes.has(b) && !missing.includes(b)) missing.push(b);
        if (s.rename && engine.indexes.has(b)) return fail(t, alreadyExists(b));
      }
      if (missing.length === 1) return fail(t, indexNotFound(missing[0]!));
      if (missing.length > 1) {
        return fail(
          t,
          new ApiError('index_not_found', `Indexes ${missing.map((m) => `\`${m}\``).join(', ')} not found.`),
        );
      }
      // Work out the final uid of every handle touched, applying swaps in order.
      const current = new Map<string, IndexHandle>();
      for (const [uid, h] of engine.indexes) current.set(uid, h);
      const touched = new Set<IndexHandle>();
      for (const s of p.swaps) {
        const [a, b] = s.indexes;
        const ha = current.get(a)!;
        const hb = current.get(b);
        current.delete(a);
        current.delete(b);
        current.set(b, ha);
        touched.add(ha);
        if (hb && !s.rename) {
          current.set(a, hb);
          touched.add(hb);
        }
      }
      const finalUid = new Map<IndexHandle, string>();
      for (const [uid, h] of current) if (touched.has(h)) finalUid.set(h, uid);
      return single(
        t,
        ok(),
        (wb) => {
          for (const h of touched) wb.del(INDEX_UIDS.key(h.uid));
          for (const [h, uid] of finalUid) {
            wb.put(INDEX_UIDS.key(uid), encodeUint(h.meta.id));
            wb.put(h.metaKey(), JSON.stringify({ ...h.meta, uid, updatedAt: at }));
          }
        },
        () => {
          for (const h of touched) engine.indexes.delete(h.uid);
          for (const [h, uid] of finalUid) {
            h.meta = { ...h.meta, uid, updatedAt: at };
            engine.indexes.set(uid, h);
          }
          engine.lastUpdate = at;
        },
      );
    }
    default:
      throw new Error(`not an index task: ${p.op}`);
  }
}
