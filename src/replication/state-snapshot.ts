import { createReadStream, createWriteStream, existsSync, readdirSync, rmSync, type WriteStream } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import { prefixEnd, KeySpace } from '../store/keys.js';
import type { KvStore, WriteBatch } from '../store/kv.js';
import type { SnapshotMeta } from '../raft/core/index.js';
import { RAFT_PREFIXES, RAFT_STATE } from '../raft/log-store.js';
import { SNAPSHOT_CHUNK, type SnapshotSink, type SnapshotSource } from '../raft/transport/grpc-transport.js';

/** Where the applied state records the log position it stands for; part of every snapshot. */
export const APPLIED_META = new KeySpace('ra').key('meta');

export function emptyMeta(): SnapshotMeta {
  return { index: 0, term: 0, confState: { voters: [], learners: [] } };
}

export async function readAppliedMeta(store: { get(k: Buffer): Promise<Buffer | null> }): Promise<SnapshotMeta> {
  const b = await store.get(APPLIED_META);
  return b ? (JSON.parse(b.toString()) as SnapshotMeta) : emptyMeta();
}

/** Key ranges of the applied state: everything but Raft's own log and votes. */
export function stateRanges(): [Buffer, Buffer][] {
  const bounds = RAFT_PREFIXES;
  const ranges: [Buffer, Buffer][] = [];
  let start: Buffer = Buffer.from([0x00]);
  for (const p of bounds) {
    ranges.push([start, p]);
    start = prefixEnd(p);
  }
  ranges.push([start, Buffer.alloc(16, 0xff)]);
  return ranges;
}

function frame(key: Buffer, value: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(key.length, 0);
  head.writeUInt32BE(value.length, 4);
  return Buffer.concat([head, key, value]);
}

/**
 * A consistent copy of the applied state (indexes, documents, tasks, keys, settings) with the
 * log position it stands for, taken under one RocksDB snapshot. Used to catch up followers,
 * and by backups.
 */
export function stateSnapshotSource(store: KvStore): SnapshotSource {
  return {
    async open() {
      const snap = store.snapshot();
      const meta = await readAppliedMeta(snap);
      async function* chunks(): AsyncGenerator<Buffer> {
        try {
          let parts: Buffer[] = [];
          let size = 0;
          for (const [gte, lt] of stateRanges()) {
            for await (const { key, value } of snap.scan({ gte, lt })) {
              const f = frame(key, value);
              parts.push(f);
              size += f.length;
              if (size >= SNAPSHOT_CHUNK) {
                yield Buffer.concat(parts);
                parts = [];
                size = 0;
              }
            }
          }
          if (parts.length > 0) yield Buffer.concat(parts);
        } finally {
          await snap.release();
        }
      }
      return { meta, chunks: chunks() };
    },
  };
}

/**
 * Receives a streamed snapshot into a file beside the database; the core gets the file's path.
 * Every snapshot gets its own file, so that one arriving while another is being installed
 * cannot overwrite it.
 */
export function fileSnapshotSink(base: string): SnapshotSink {
  let seq = 0;
  return {
    async begin(meta) {
      const path = `${base}.${meta.index}.${Date.now()}-${seq++}`;
      const out: WriteStream = createWriteStream(path);
      return {
        async write(chunk) {
          if (!out.write(chunk)) await once(out, 'drain');
        },
        async finish() {
          out.end();
          await once(out, 'finish');
          return Buffer.from(path);
        },
        async abort() {
          out.destroy();
          rmSync(path, { force: true });
        },
      };
    },
  };
}

/** Removes received snapshot files left by a crash, except the one an installation still needs. */
export function removeStaleSnapshotFiles(base: string, keep: string | null): void {
  const dir = dirname(base);
  const prefix = `${basename(base)}.`;
  if (!existsSync(dir)) return;
  for (const f of readdirSync(dir)) {
    const full = join(dir, f);
    if (f.startsWith(prefix) && full !== keep) rmSync(full, { force: true });
  }
}

/**
 * Reads the key/value records of a snapshot file, or of the records section `[start, end)` of
 * a file that wraps them (a backup snapshot has a header and a checksum around them).
 */
export async function* readSnapshotFile(path: string, range?: { start: number; end: number }): AsyncGenerator<[Buffer, Buffer]> {
  if (!existsSync(path)) throw new Error(`snapshot file ${path} is missing`);
  let buf: Buffer = Buffer.alloc(0);
  const bounds = range ? (range.end > range.start ? { start: range.start, end: range.end - 1 } : null) : {};
  if (bounds === null) return;
  for await (const chunk of createReadStream(path, { highWaterMark: SNAPSHOT_CHUNK, ...bounds })) {
    buf = buf.length === 0 ? (chunk as Buffer) : Buffer.concat([buf, chunk as Buffer]);
    let off = 0;
    while (buf.length - off >= 8) {
      const kl = buf.readUInt32BE(off);
      const vl = buf.readUInt32BE(off + 4);
      if (buf.length - off < 8 + kl + vl) break;
      const key = buf.subarray(off + 8, off + 8 + kl);
      const value = buf.subarray(off + 8 + kl, off + 8 + kl + vl);
      yield [Buffer.from(key), Buffer.from(value)];
      off += 8 + kl + vl;
    }
    buf = buf.subarray(off);
  }
  if (buf.length !== 0) throw new Error(`snapshot file ${path} is truncated`);
}

/** Writes records read from a snapshot file into the store, in write batches of about 8 MiB. */
export async function putRecords(store: KvStore, records: AsyncIterable<[Buffer, Buffer]>): Promise<void> {
  let wb = store.batch();
  let bytes = 0;
  for await (const [key, value] of records) {
    wb.put(key, value);
    bytes += key.length + value.length;
    if (bytes > 8 * 1024 * 1024) {
      await wb.commit();
      wb = store.batch();
      bytes = 0;
    }
  }
  await wb.commit();
}

const INSTALLING = RAFT_STATE.key('installing');

/**
 * Replaces the applied state with the one in `path` and returns the log position it stands
 * for. Not atomic (a state can exceed one write batch), so a marker is kept until the caller
 * has also reset the Raft log (see `finishInstall`): a node restarting with the marker set
 * installs the file again before anything else.
 */
export async function installStateFile(store: KvStore, path: string): Promise<SnapshotMeta> {
  await store.batch().put(INSTALLING, path).commit({ sync: true });
  const wipe = store.batch();
  for (const [gte, lt] of stateRanges()) wipe.delRange(gte, lt);
  await wipe.commit();
  await putRecords(store, readSnapshotFile(path));
  await store.sync();
  return readAppliedMeta(store);
}

/** Clears the marker in the same durable write as the caller's Raft log reset, then drops the file. */
export async function finishInstall(wb: WriteBatch, path: string): Promise<void> {
  wb.del(INSTALLING);
  await wb.commit({ sync: true });
  rmSync(path, { force: true });
}

export async function pendingInstall(store: KvStore): Promise<string | null> {
  const b = await store.get(INSTALLING);
  return b ? b.toString() : null;
}
