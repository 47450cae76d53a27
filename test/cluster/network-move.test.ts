// A three-node cluster as one instance of a sharded network: when a topology change gives some
// of its documents to another instance, its Raft leader sends them, and every node of the
// cluster deletes them in the batch that ends the task, from the log.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Meilisearch } from 'meilisearch';
import { TestCluster } from '../helpers/cluster.js';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { shardOf } from '../../src/engine/network/shards.js';

let c: TestCluster;
let other: TestNode;
const WAIT = { timeout: 60_000, interval: 20 };
const DOCS = Array.from({ length: 150 }, (_, i) => ({ id: i, title: `movie ${i}` }));

beforeAll(async () => {
  [c, other] = await Promise.all([TestCluster.start(), startTestNode()]);
  await c.waitForLeader();
}, 120_000);

afterAll(async () => {
  await c?.stop();
  await other?.close();
});

async function held(url: string): Promise<number[]> {
  const r = await fetch(`${url}/indexes/movies/documents?limit=1000&fields=id&useNetwork=false`);
  if (r.status === 404) return [];
  const body = (await r.json()) as { results: { id: number }[] };
  return body.results.map((d) => d.id).sort((a, b) => a - b);
}

describe('a cluster in a sharded network', () => {
  it('moves the documents a new shard gives to another instance, and every node deletes them', async () => {
    const lead = await c.waitForLeader();
    // Written and changed through a follower: only the leader sends the documents.
    const via = new Meilisearch({ host: c.url((lead + 1) % 3) });
    await via.updateExperimentalFeatures({ network: true });
    await other.client.updateExperimentalFeatures({ network: true });
    await other.client.updateNetwork({ self: 'solo' });
    await via.index('movies').addDocuments(DOCS).waitTask(WAIT);
    await via.initializeNetwork({ self: 'cluster', remotes: { cluster: { url: c.url(lead) } }, shards: { s1: { remotes: ['cluster'] } } } as never).waitTask(WAIT);

    const change = await fetch(`${c.url((lead + 1) % 3)}/network`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ remotes: { solo: { url: other.url } }, shards: { s2: { remotes: ['solo'] } } }),
    });
    expect(change.status).toBe(202);
    const { taskUid } = (await change.json()) as { taskUid: number };
    const task = await via.tasks.waitForTask(taskUid, WAIT);
    const moved = DOCS.map((d) => d.id).filter((id) => shardOf(['s1', 's2'], String(id)) === 's2');
    const kept = DOCS.map((d) => d.id).filter((id) => shardOf(['s1', 's2'], String(id)) === 's1');
    expect(moved.length).toBeGreaterThan(30);
    expect(task).toMatchObject({ status: 'succeeded', error: null, details: { movedDocuments: moved.length, message: 'Finished' } });

    expect(await held(other.url)).toEqual(moved);
    // Every node of the cluster, each read after the task was reported finished.
    for (let i = 0; i < 3; i++) expect(await held(c.url(i))).toEqual(kept);
    // The same task, in the same two batches, on every node.
    const seen = await Promise.all([0, 1, 2].map(async (i) => (await (await fetch(`${c.url(i)}/tasks/${taskUid}`)).json()) as Record<string, unknown>));
    for (const t of seen) expect(t).toMatchObject({ status: 'succeeded', batchUid: task.batchUid, details: { movedDocuments: moved.length } });
  }, 120_000);
});
