// An idle node flushes what large batches left in RocksDB's memtables, so that a restart after
// a crash replays a short write-ahead log rather than everything since the last flush.

import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { RocksStore } from '../../src/store/rocks-store.js';
import { tempDir } from '../helpers/node.js';

const dir = tempDir('trine-settle-');

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('settling the store', () => {
  it('flushes once more than the given bytes were written, and only then', async () => {
    const store = await RocksStore.open(dir);
    try {
      // The write-ahead logs' bytes, as a restart would replay them.
      const wal = async () => readdirSync(dir).filter((f) => f.endsWith('.log')).reduce((n, f) => n + statSync(join(dir, f)).size, 0);
      const value = Buffer.alloc(1024 * 1024, 7);
      for (let i = 0; i < 4; i++) await store.batch().put(Buffer.from(`k${i}`), value).commit();
      const before = await wal();
      expect(before).toBeGreaterThan(4 * 1024 * 1024);
      // Under the threshold: nothing happens.
      await store.settle(8 * 1024 * 1024);
      expect(await wal()).toBe(before);
      for (let i = 4; i < 10; i++) await store.batch().put(Buffer.from(`k${i}`), value).commit();
      await store.settle(8 * 1024 * 1024);
      // The memtable went to a table file: the log starts over.
      expect(await wal()).toBeLessThan(1024 * 1024);
      expect(await store.get(Buffer.from('k9'))).toEqual(value);
    } finally {
      await store.close();
    }
  });
});
