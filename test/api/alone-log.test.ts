// A node that is the only member of its cluster has no one to send its Raft log to: it keeps
// a little of it (not up to the 512 MiB a member of a cluster keeps for lagging followers),
// so that neither its memory nor its restart carry every payload it was sent.

import { afterAll, describe, expect, it } from 'vitest';
import { RocksStore } from '../../src/store/rocks-store.js';
import { RAFT_LOG } from '../../src/raft/log-store.js';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { call, write } from '../helpers/vector-api.js';

const dir = tempDir('trine-alone-log-');
let t: TestNode;

afterAll(async () => {
  await t?.close();
});

describe('the Raft log of a node alone', () => {
  it('stays small after large imports, and a restart still has every document', async () => {
    t = await startTestNode([], dir);
    const filler = 'x'.repeat(1000);
    for (let b = 0; b < 3; b++) {
      await write(t, 'POST', '/indexes/big/documents', Array.from({ length: 8000 }, (_, i) => ({ id: b * 8000 + i, text: `word${i % 50} ${filler}` })));
    }
    await t.close({ keepData: true });
    const store = await RocksStore.open(dir);
    let bytes = 0;
    try {
      for await (const e of store.scan({ prefix: RAFT_LOG.prefix })) bytes += e.value.length;
    } finally {
      await store.close();
    }
    // 24 MiB of payloads were sent; at most the 16 MiB threshold (and the entry that crossed it) remain.
    expect(bytes).toBeLessThan(16 * 1024 * 1024);
    t = await startTestNode([], dir);
    expect((await call(t, 'GET', '/indexes/big/stats')).body).toMatchObject({ numberOfDocuments: 24000 });
    expect((await call(t, 'POST', '/indexes/big/search', { q: 'word7', limit: 1 })).body).toHaveProperty('hits.0.text', expect.stringMatching(/^word7 /));
    await write(t, 'POST', '/indexes/big/documents', [{ id: 'after', text: 'restart' }]);
    expect((await call(t, 'GET', '/indexes/big/documents/after')).status).toBe(200);
  });
});
