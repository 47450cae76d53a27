import RocksDB from 'rocksdb-native';
import { mkdirSync, readdirSync, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import type { KvEntry, KvReader, KvSnapshot, KvStore, ScanOptions, WriteBatch } from './kv.js';
import { prefixEnd } from './keys.js';
import { Yielder } from '../util/yielder.js';

type Op =
  | { t: 'put'; k: Buffer; v: Buffer }
  | { t: 'del'; k: Buffer }
  | { t: 'range'; s: Buffer; e: Buffer };

function maxBuf(a: Buffer | undefined, b: Buffer | undefined): Buffer | undefined {
  if (!a) return b;
  if (!b) return a;
  return Buffer.compare(a, b) >= 0 ? a : b;
}

function minBuf(a: Buffer | undefined, b: Buffer | undefined): Buffer | undefined {
  if (!a) return b;
  if (!b) return a;
  return Buffer.compare(a, b) <= 0 ? a : b;
}

async function* scanDb(db: RocksDB, opts: ScanOptions): AsyncGenerator<KvEntry> {
  let gte = opts.gte;
  let lt = opts.lt;
  let gt = opts.gt;
  let lte = opts.lte;
  if (opts.prefix) {
    gte = maxBuf(gte, opts.prefix);
    lt = minBuf(lt, prefixEnd(opts.prefix));
  }
  // The binding honours one bound per side (given gte and gt it yields nothing): keep the tighter.
  if (gt && gte) {
    if (Buffer.compare(gt, gte) >= 0) gte = undefined;
    else gt = undefined;
  }
  if (lt && lte) {
    if (Buffer.compare(lte, lt) < 0) lt = undefined;
    else lte = undefined;
  }
  const range = {
    gt: gt ?? null,
    gte: gte ?? null,
    lt: lt ?? null,
    lte: lte ?? null,
    reverse: opts.reverse ?? false,
    limit: opts.limit ?? Infinity,
    values: !opts.keysOnly,
    capacity: 256,
  };
  const empty = Buffer.alloc(0);
  for await (const e of db.iterator(range)) {
    yield { key: e.key, value: e.value ?? empty };
  }
}

async function getMany(db: RocksDB, keys: readonly Buffer[]): Promise<(Buffer | null)[]> {
  if (keys.length === 0) return [];
  const r = db.read({ capacity: keys.length, autoDestroy: true });
  const ps = keys.map((k) => r.get(k));
  r.tryFlush();
  return Promise.all(ps);
}

class RocksReader implements KvReader {
  constructor(protected readonly db: RocksDB) {}

  async get(key: Buffer): Promise<Buffer | null> {
    return this.db.get(key);
  }

  getMany(keys: readonly Buffer[]): Promise<(Buffer | null)[]> {
    return getMany(this.db, keys);
  }

  scan(opts: ScanOptions): AsyncIterable<KvEntry> {
    return scanDb(this.db, opts);
  }
}

class RocksSnapshot extends RocksReader implements KvSnapshot {
  async release(): Promise<void> {
    await this.db.close();
  }
}

class RocksWriteBatch implements WriteBatch {
  private ops: Op[] = [];

  constructor(private readonly store: RocksStore) {}

  get size(): number {
    return this.ops.length;
  }

  put(key: Buffer, value: Buffer | string): this {
    this.ops.push({ t: 'put', k: key, v: typeof value === 'string' ? Buffer.from(value) : value });
    return this;
  }

  del(key: Buffer): this {
    this.ops.push({ t: 'del', k: key });
    return this;
  }

  delRange(start: Buffer, end: Buffer): this {
    this.ops.push({ t: 'range', s: start, e: end });
    return this;
  }

  delPrefix(prefix: Buffer): this {
    return this.delRange(prefix, prefixEnd(prefix));
  }

  async commit(opts: { sync?: boolean } = {}): Promise<void> {
    const ops = this.ops;
    this.ops = [];
    await this.store.applyOps(ops, opts.sync ?? false);
  }
}

/**
 * RocksDB through rocksdb-native. The binding writes with RocksDB's default write options
 * (WAL on, no fsync), so a committed batch survives a process crash; `sync` additionally
 * fsyncs the current write-ahead log file so that it survives a power loss too.
 */
export class RocksStore implements KvStore {
  private constructor(
    private readonly db: RocksDB,
    readonly path: string,
  ) {}

  static async open(path: string): Promise<RocksStore> {
    mkdirSync(path, { recursive: true });
    const db = new RocksDB(path);
    await db.ready();
    return new RocksStore(db, path);
  }

  get(key: Buffer): Promise<Buffer | null> {
    return this.db.get(key);
  }

  getMany(keys: readonly Buffer[]): Promise<(Buffer | null)[]> {
    return getMany(this.db, keys);
  }

  scan(opts: ScanOptions): AsyncIterable<KvEntry> {
    return scanDb(this.db, opts);
  }

  batch(): WriteBatch {
    return new RocksWriteBatch(this);
  }

  snapshot(): KvSnapshot {
    return new RocksSnapshot(this.db.snapshot());
  }

  /** Bytes written since the memtables were last flushed by `settle` (an estimate). */
  private unsettled = 0;

  async settle(minBytes: number): Promise<void> {
    if (this.unsettled <= minBytes) return;
    this.unsettled = 0;
    await this.db.flush();
  }

  async applyOps(ops: Op[], sync: boolean): Promise<void> {
    for (const op of ops) this.unsettled += op.t === 'put' ? op.k.length + op.v.length : op.t === 'del' ? op.k.length : op.s.length + op.e.length;
    if (ops.length > 0) {
      const w = this.db.write({ capacity: ops.length, autoDestroy: true });
      // A batch of 50,000 documents is as many operations: the thread serving searches gets turns.
      const turns = new Yielder();
      for (let i = 0; i < ops.length; i++) {
        const op = ops[i]!;
        if (op.t === 'put') w.tryPut(op.k, op.v);
        else if (op.t === 'del') w.tryDelete(op.k);
        else w.tryDeleteRange(op.s, op.e);
        if ((i & 1023) === 1023) await turns.maybe();
      }
      await w.flush();
    }
    if (sync) await this.sync();
  }

  async sync(): Promise<void> {
    const wal = await this.db.currentWalFile();
    const file = join(this.path, wal.path);
    let fh;
    try {
      fh = await open(file, 'r');
    } catch {
      // The log rolled over between the two calls: the old one was synced when it was closed.
      return;
    }
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  }

  approximateSize(start: Buffer, end: Buffer): Promise<number> {
    return this.db.approximateSize(start, end, { includeMemtables: true });
  }

  async diskSize(): Promise<number> {
    let total = 0;
    for (const f of readdirSync(this.path)) {
      try {
        total += statSync(join(this.path, f)).size;
      } catch {
        // a file removed by compaction while we listed
      }
    }
    return total;
  }

  async close(): Promise<void> {
    await this.db.close({ force: true });
  }
}
