// Minimal typings for the parts of rocksdb-native that the store uses.
declare module 'rocksdb-native' {
  interface IteratorRange {
    gt?: Buffer | null;
    gte?: Buffer | null;
    lt?: Buffer | null;
    lte?: Buffer | null;
    reverse?: boolean;
    limit?: number;
    values?: boolean;
    capacity?: number;
  }
  interface ReadBatch {
    get(key: Buffer): Promise<Buffer | null>;
    flush(): Promise<void>;
    tryFlush(): void;
    destroy(): void;
  }
  interface WriteBatch {
    put(key: Buffer, value: Buffer): Promise<void>;
    tryPut(key: Buffer, value: Buffer): void;
    tryDelete(key: Buffer): void;
    tryDeleteRange(start: Buffer, end: Buffer): void;
    flush(): Promise<void>;
    destroy(): void;
  }
  class RocksDB {
    constructor(path: string, opts?: Record<string, unknown>);
    ready(): Promise<void>;
    close(opts?: { force?: boolean }): Promise<void>;
    read(opts?: { capacity?: number; autoDestroy?: boolean }): ReadBatch;
    write(opts?: { capacity?: number; autoDestroy?: boolean }): WriteBatch;
    get(key: Buffer): Promise<Buffer | null>;
    iterator(range?: IteratorRange): AsyncIterable<{ key: Buffer; value: Buffer | null }> & { destroy(): void };
    snapshot(): RocksDB;
    currentWalFile(): Promise<{ path: string; number: number; size: number }>;
    approximateSize(start: Buffer, end: Buffer, opts?: Record<string, unknown>): Promise<number>;
    flush(): Promise<void>;
    readonly path: string;
  }
  export default RocksDB;
}
