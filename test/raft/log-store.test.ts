// The durable Raft log in a real RocksDB: entries read back after a reopen are the ones
// staged, whether their header was written in front of the data (a command this node
// proposed) or in a copy.

import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { RaftLogStore } from '../../src/raft/log-store.js';
import { RocksStore } from '../../src/store/rocks-store.js';
import { encodeCommand } from '../../src/tasks/command.js';
import { tempDir } from '../helpers/node.js';

const dir = tempDir('trine-log-store-');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('raft log store', () => {
  it('reads back every entry as staged, with or without room for its header', async () => {
    const proposed = await encodeCommand({ kind: 'enqueue', payload: Buffer.from('x'.repeat(70_000)) } as never);
    const copy = Buffer.from(proposed);
    const entries = [
      { index: 1, term: 3, type: 'normal' as const, data: proposed },
      { index: 2, term: 3, type: 'confChange' as const, data: Buffer.from('{"c":1}') },
      // The same command proposed again: its room is taken, so this one is copied.
      { index: 3, term: 4, type: 'normal' as const, data: proposed },
      { index: 4, term: 4, type: 'normal' as const, data: new Uint8Array(0) },
    ];
    let store = await RocksStore.open(dir);
    try {
      const log = await RaftLogStore.open(store);
      const wb = store.batch();
      log.stage(wb, entries, { term: 4, vote: '', commit: 0 });
      await wb.commit();
      log.commitStaged(entries, { term: 4, vote: '', commit: 0 });
    } finally {
      await store.close();
    }
    expect(Buffer.compare(proposed, copy)).toBe(0);
    store = await RocksStore.open(dir);
    try {
      const log = await RaftLogStore.open(store);
      const back = log.memory.entries(1, 5, Infinity);
      expect(back.map((e) => [e.index, e.term, e.type])).toEqual(entries.map((e) => [e.index, e.term, e.type]));
      for (let i = 0; i < entries.length; i++) expect(Buffer.compare(Buffer.from(back[i]!.data), Buffer.from(entries[i]!.data)), `entry ${i + 1}`).toBe(0);
    } finally {
      await store.close();
    }
  });
});
