import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataset } from '../fixtures/index.js';
import { freePort, startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { readBackupState, reader, waitTask } from './state.js';

/**
 * A dump restores into a fresh cluster: the node started with `--import-dump` (and a Raft
 * address) seeds it, and a node that joins copies the imported state from it. Once both are
 * members, a dump is written by each of them, into its own directory, with one outcome.
 */
const MASTER = 'a-master-key-for-a-cluster';
const SECRET = 'a-cluster-secret';
const work = tempDir('trine-seed-');
const nodes: TestNode[] = [];
let dumpFile: string;
let dumpTaskUid: number;

beforeAll(async () => {
  const source = await startTestNode(['--master-key', MASTER, '--dump-dir', join(work, 'source-dumps')], join(work, 'source'));
  try {
    await source.client.index('movies').addDocuments(dataset('movies')).waitTask();
    await source.client.index('movies').updateFilterableAttributes(['color']).waitTask();
    const t = await source.client.createDump().waitTask();
    dumpTaskUid = t.uid;
    dumpFile = join(work, 'source-dumps', `${(t.details as { dumpUid: string }).dumpUid}.dump`);
  } finally {
    await source.close();
  }
});

afterAll(async () => {
  for (const n of nodes.reverse()) await n.close().catch(() => {});
  rmSync(work, { recursive: true, force: true });
});

async function until<T>(what: string, fn: () => Promise<T | null>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => null);
    if (v !== null) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a dump seeds a fresh cluster', () => {
  it('the seed imports the dump; a joining node receives the imported state', async () => {
    const seedRaft = `127.0.0.1:${await freePort()}`;
    const common = ['--master-key', MASTER, '--cluster-secret', SECRET];
    nodes.push(
      await startTestNode(
        [...common, '--node-id', 'seed', '--raft-addr', seedRaft, '--import-dump', dumpFile, '--dump-dir', join(work, 'seed-dumps')],
        join(work, 'seed'),
      ),
    );
    nodes.push(
      await startTestNode(
        [...common, '--node-id', 'joiner', '--raft-addr', `127.0.0.1:${await freePort()}`, '--join', seedRaft, '--dump-dir', join(work, 'joiner-dumps')],
        join(work, 'joiner'),
      ),
    );
    const [seed, joiner] = nodes as [TestNode, TestNode];
    const expected = await readBackupState(seed.url, MASTER);
    expect(expected.documents['movies']!.length).toBe(dataset('movies').length);
    const got = await until('the joiner to hold the imported indexes', async () => {
      const s = await readBackupState(joiner.url, MASTER);
      return s.documents['movies']?.length === expected.documents['movies']!.length ? s : null;
    });
    expect(got.documents).toEqual(expected.documents);
    expect(got.settings).toEqual(expected.settings);
    expect(got.keys).toEqual(expected.keys);
    expect(got.tasks.filter((t) => (t['uid'] as number) <= dumpTaskUid)).toEqual(expected.tasks);
  });

  it('a dump in the cluster is written by every node into its own directory, with one outcome', async () => {
    const [seed, joiner] = nodes as [TestNode, TestNode];
    const r = await fetch(`${joiner.url}/dumps`, { method: 'POST', headers: { Authorization: `Bearer ${MASTER}` } });
    expect(r.status).toBe(202);
    const { taskUid } = (await r.json()) as { taskUid: number };
    const onSeed = await waitTask(seed.url, taskUid, MASTER);
    const onJoiner = await waitTask(joiner.url, taskUid, MASTER);
    expect(onSeed['status']).toBe('succeeded');
    for (const k of ['status', 'details', 'error', 'batchUid', 'startedAt'] as const) expect(onJoiner[k]).toEqual(onSeed[k]);
    const dumpUid = (onSeed['details'] as { dumpUid: string }).dumpUid;
    await until('both copies', async () =>
      existsSync(join(work, 'seed-dumps', `${dumpUid}.dump`)) && existsSync(join(work, 'joiner-dumps', `${dumpUid}.dump`)) ? true : null,
    );
    // Still one cluster taking writes after it.
    const write = await fetch(`${seed.url}/indexes/movies/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${MASTER}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ id: 'new', title: 'After the cluster dump', color: ['red'] }]),
    });
    const next = (await write.json()) as { taskUid: number };
    expect((await waitTask(joiner.url, next.taskUid, MASTER))['status']).toBe('succeeded');
    expect((await reader(joiner.url, MASTER)('/indexes/movies/documents/new'))['title']).toBe('After the cluster dump');
  });
});
