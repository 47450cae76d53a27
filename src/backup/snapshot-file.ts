import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { putRecords, readSnapshotFile, stateSnapshotSource } from '../replication/state-snapshot.js';
import type { KvStore } from '../store/kv.js';
import { summarizeBatch, type BatchRecord } from '../tasks/batch.js';
import { BATCHES, PENDING, TASKS, type PendingBatch } from '../tasks/task-queue.js';
import type { TaskRecord } from '../tasks/task.js';
import { VERSION } from '../version.js';
import { AtomicFileWriter, BackupFileError, u32 } from './file-writer.js';

/**
 * Snapshot files: the consistent copy the Raft snapshots stream to followers (every key of the
 * applied state, read under one RocksDB snapshot), wrapped with a versioned header and a
 * checksum so that a damaged file is refused before anything is written.
 *
 *   "TRINESNP" | u32 header length | header JSON | records | footer JSON | u32 footer length
 *   | SHA-256 of everything before it (32 bytes) | "TRINEEND"
 *
 * Records are the Raft snapshot's frames: u32 key length, u32 value length, key, value.
 * A snapshot is tied to this version's storage layout (unlike a dump, which is portable);
 * the header's `version` says which layout, and a file of another version is refused.
 */

export const SNAPSHOT_FORMAT = 'trine-snapshot';
export const SNAPSHOT_VERSION = 1;
const MAGIC = Buffer.from('TRINESNP');
const END = Buffer.from('TRINEEND');
const TAIL = 4 + 32 + END.length;

export interface SnapshotHeader {
  format: typeof SNAPSHOT_FORMAT;
  version: number;
  trineVersion: string;
  nodeId: string;
  /** Raft log position the copy stands for. */
  appliedIndex: number;
  term: number;
  /** The snapshotCreation task that wrote it, finished in the copy when it is imported. */
  task: { uid: number; batch: PendingBatch };
}

export interface SnapshotFooter {
  bodyBytes: number;
  /** When the copy was complete: the task's `finishedAt`. */
  finishedAt: number;
}

/** Writes a snapshot of `store` to `path`; resolves with the moment the copy was complete. */
export async function writeSnapshotFile(
  store: KvStore,
  path: string,
  info: { nodeId: string; taskUid: number; batch: PendingBatch },
): Promise<number> {
  const { meta, chunks } = await stateSnapshotSource(store).open();
  let w: AtomicFileWriter | null = null;
  let started = false;
  try {
    w = new AtomicFileWriter(path);
    const header: SnapshotHeader = {
      format: SNAPSHOT_FORMAT,
      version: SNAPSHOT_VERSION,
      trineVersion: VERSION.pkgVersion,
      nodeId: info.nodeId,
      appliedIndex: meta.index,
      term: meta.term,
      task: { uid: info.taskUid, batch: info.batch },
    };
    const h = Buffer.from(JSON.stringify(header));
    await w.write(Buffer.concat([MAGIC, u32(h.length), h]));
    let body = 0;
    for await (const c of chunks) {
      started = true;
      await w.write(c);
      body += c.length;
    }
    const finishedAt = Date.now();
    const f = Buffer.from(JSON.stringify({ bodyBytes: body, finishedAt } satisfies SnapshotFooter));
    await w.write(Buffer.concat([f, u32(f.length)]));
    await w.writeRaw(Buffer.concat([w.digest(), END]));
    await w.finish();
    return finishedAt;
  } catch (e) {
    w?.abort();
    // The RocksDB snapshot is released when the scan ends: a scan never started must be
    // started to be ended (a loop left early ends it itself).
    if (!started) for await (const _ of chunks) break;
    throw e;
  }
}

export interface VerifiedSnapshot {
  path: string;
  header: SnapshotHeader;
  footer: SnapshotFooter;
  /** Where the records lie in the file. */
  range: { start: number; end: number };
}

async function readAt(path: string, position: number, length: number): Promise<Buffer> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(length);
    const { bytesRead } = await fh.read(buf, 0, length, position);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

async function sha256Of(path: string, end: number): Promise<Buffer> {
  const hash = createHash('sha256');
  if (end > 0) for await (const chunk of createReadStream(path, { start: 0, end: end - 1 })) hash.update(chunk as Buffer);
  return hash.digest();
}

function parseJson<T>(buf: Buffer, what: string, path: string): T {
  try {
    return JSON.parse(buf.toString('utf8')) as T;
  } catch {
    throw new BackupFileError(`The snapshot ${path} is corrupted: its ${what} is not valid JSON.`);
  }
}

/**
 * Checks a snapshot file end to end (marker, checksum, header, version, sizes) without
 * writing anything; throws a BackupFileError naming what is wrong.
 */
export async function verifySnapshotFile(path: string): Promise<VerifiedSnapshot> {
  const size = (await stat(path)).size;
  const head = await readAt(path, 0, 12);
  if (head.length < MAGIC.length || !head.subarray(0, MAGIC.length).equals(MAGIC)) {
    throw new BackupFileError(`${path} is not a Trine snapshot: it does not start with the TRINESNP marker.`);
  }
  if (size < 12 + TAIL) throw new BackupFileError(`The snapshot ${path} is truncated: it is only ${size} bytes long.`);
  const tail = await readAt(path, size - TAIL, TAIL);
  if (!tail.subarray(36).equals(END)) {
    throw new BackupFileError(`The snapshot ${path} is truncated: it does not end with the TRINEEND marker (${size} bytes).`);
  }
  const digest = await sha256Of(path, size - END.length - 32);
  if (!digest.equals(tail.subarray(4, 36))) {
    throw new BackupFileError(`The snapshot ${path} is corrupted: its SHA-256 checksum does not match its content.`);
  }
  const hlen = head.readUInt32BE(8);
  const flen = tail.readUInt32BE(0);
  const start = 12 + hlen;
  const end = size - TAIL - flen;
  if (end < start) throw new BackupFileError(`The snapshot ${path} is corrupted: its header and footer overlap.`);
  const header = parseJson<SnapshotHeader>(await readAt(path, 12, hlen), 'header', path);
  if (header.format !== SNAPSHOT_FORMAT) throw new BackupFileError(`${path} is not a Trine snapshot (format \`${String(header.format)}\`).`);
  if (header.version !== SNAPSHOT_VERSION) {
    throw new BackupFileError(
      `The snapshot ${path} has format version ${header.version} (written by Trine ${header.trineVersion}); this build reads version ${SNAPSHOT_VERSION} only. Use a dump to move data between versions.`,
    );
  }
  const footer = parseJson<SnapshotFooter>(await readAt(path, end, flen), 'footer', path);
  if (footer.bodyBytes !== end - start) {
    throw new BackupFileError(`The snapshot ${path} is corrupted: it holds ${end - start} bytes of records, its footer says ${footer.bodyBytes}.`);
  }
  return { path, header, footer, range: { start, end } };
}

/**
 * Writes a verified snapshot's records into an empty store, then finishes the snapshot task
 * in the copy (it was processing when the copy was taken) so that it does not run again.
 * Returns the log position the copy stands for.
 */
export async function loadSnapshotFile(store: KvStore, v: VerifiedSnapshot): Promise<{ index: number; term: number }> {
  try {
    await putRecords(store, readSnapshotFile(v.path, v.range));
  } catch (e) {
    throw new BackupFileError(`The snapshot ${v.path} is corrupted: ${e instanceof Error ? e.message : String(e)}.`);
  }
  const wb = store.batch();
  const { uid, batch } = v.header.task;
  const raw = await store.get(TASKS.key(uid));
  if (raw) {
    const task = JSON.parse(raw.toString()) as TaskRecord;
    const finishedAt = Math.max(v.footer.finishedAt, batch.startedAt);
    Object.assign(task, { status: 'succeeded', batchUid: batch.uid, startedAt: batch.startedAt, finishedAt, error: null });
    // Built as the executor builds it, so that the batch reads the same as on the source node.
    const record: BatchRecord = {
      uid: batch.uid,
      taskUids: batch.taskUids,
      startedAt: batch.startedAt,
      finishedAt,
      reason: batch.reason,
      stats: null,
      details: {},
    };
    summarizeBatch(record, [task]);
    wb.put(TASKS.key(uid), JSON.stringify(task));
    wb.put(BATCHES.key(batch.uid), JSON.stringify(record));
    wb.del(PENDING.key(batch.uid));
  }
  await wb.commit();
  return { index: v.header.appliedIndex, term: v.header.term };
}
