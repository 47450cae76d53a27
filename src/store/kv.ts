/**
 * A small key-value interface: what the rest of Trine needs from storage, and nothing more.
 * One implementation (`rocks-store.ts`) sits on RocksDB; keys and values are bytes.
 */

export interface KvEntry {
  key: Buffer;
  value: Buffer;
}

export interface ScanOptions {
  /** Every key starting with these bytes. Combines with the bounds below. */
  prefix?: Buffer;
  gte?: Buffer;
  gt?: Buffer;
  lt?: Buffer;
  lte?: Buffer;
  reverse?: boolean;
  limit?: number;
  /** Skip reading values (they come back empty). */
  keysOnly?: boolean;
}

export interface KvReader {
  get(key: Buffer): Promise<Buffer | null>;
  /** One round trip to the storage engine for many keys: prefer it over awaiting `get` in a loop. */
  getMany(keys: readonly Buffer[]): Promise<(Buffer | null)[]>;
  scan(opts: ScanOptions): AsyncIterable<KvEntry>;
}

export interface WriteBatch {
  put(key: Buffer, value: Buffer | string): this;
  del(key: Buffer): this;
  /** Deletes every key in [start, end). */
  delRange(start: Buffer, end: Buffer): this;
  /** Deletes every key starting with `prefix`. */
  delPrefix(prefix: Buffer): this;
  readonly size: number;
  /** Applies all operations atomically. With `sync`, returns only once they are on disk (fsync). */
  commit(opts?: { sync?: boolean }): Promise<void>;
}

/** A consistent, read-only view of the store as of when it was taken. */
export interface KvSnapshot extends KvReader {
  release(): Promise<void>;
}

export interface KvStore extends KvReader {
  batch(): WriteBatch;
  snapshot(): KvSnapshot;
  /** Flushes the write-ahead log to disk: everything committed so far survives a power loss. */
  sync(): Promise<void>;
  /**
   * Writes what is held in memory to the store's files once more than `minBytes` were
   * written since the last time, so that a restart after a crash replays little.
   */
  settle(minBytes: number): Promise<void>;
  /** Approximate bytes used on disk by keys in [start, end). */
  approximateSize(start: Buffer, end: Buffer): Promise<number>;
  /** Total bytes of the database directory. */
  diskSize(): Promise<number>;
  readonly path: string;
  close(): Promise<void>;
}
