// kill -9 while batches build and merge full-text segments, and while a snapshot is written:
// after each restart every acknowledged task succeeds and searches see exactly the
// documents the tasks added.

import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Meilisearch } from 'meilisearch';
import { spawnNode, tempDir, type NodeProcess } from '../helpers/node.js';

const dir = tempDir('trine-kill9-segments-');
let node: NodeProcess | null = null;

afterAll(async () => {
  await node?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function ndjson(from: number, count: number): string {
  const lines: string[] = [];
  for (let i = from; i < from + count; i++) {
    lines.push(JSON.stringify({ id: i, text: `common batch${Math.floor(from / 1000)} word${i % 97} filler${i % 13} tail${i}` }));
  }
  return lines.join('\n');
}

async function post(path: string, body: string, type = 'application/json', method = 'POST'): Promise<number> {
  const r = await fetch(`${node!.url}${path}`, { method, headers: { 'content-type': type }, body });
  expect(r.status).toBe(202);
  return ((await r.json()) as { taskUid: number }).taskUid;
}

async function killWhile(status: 'processing', type: string): Promise<void> {
  // Wait for a task of that type to be processing, then a moment more, then kill.
  const end = Date.now() + 30_000;
  for (;;) {
    const r = (await (await fetch(`${node!.url}/tasks?statuses=${status}&types=${type}`)).json()) as { results: unknown[] };
    if (r.results.length > 0 || Date.now() > end) break;
    await new Promise((res) => setTimeout(res, 5));
  }
  await new Promise((res) => setTimeout(res, 40));
  await node!.kill('SIGKILL');
}

async function expectDocuments(acked: number[], count: number): Promise<void> {
  const client = new Meilisearch({ host: node!.url });
  for (const uid of acked) expect((await client.tasks.waitForTask(uid, { timeout: 120_000 })).status).toBe('succeeded');
  const idx = client.index('seg');
  expect((await idx.getStats()).numberOfDocuments).toBe(count);
  expect((await idx.search('common', { hitsPerPage: 1 })).totalHits).toBe(count);
  for (const i of [0, 1, Math.floor(count / 2), count - 1]) {
    expect((await idx.search(`"tail${i}"`)).hits.map((h) => h['id'])).toEqual([i]);
  }
  expect((await idx.search('"word5"', { hitsPerPage: 1 })).totalHits).toBe(Array.from({ length: count }, (_, i) => i).filter((i) => i % 97 === 5).length);
}

describe('kill -9 and the full-text segments', () => {
  it('loses nothing acknowledged when killed while batches build and merge segments', async () => {
    node = await spawnNode([], dir);
    const acked: number[] = [await post('/indexes/seg/settings', JSON.stringify({ pagination: { maxTotalHits: 1_000_000 } }), 'application/json', 'PATCH')];
    let count = 0;
    // Four batches alike: each one is killed while it builds its segment, the fourth while it
    // merges all four too.
    for (const size of [6_000, 6_000, 6_000, 6_000]) {
      acked.push(await post('/indexes/seg/documents?primaryKey=id', ndjson(count, size), 'application/x-ndjson'));
      count += size;
      await killWhile('processing', 'documentAdditionOrUpdate');
      node = await spawnNode([], dir, node.port);
    }
    await expectDocuments(acked, count);
  });

  it('loses nothing when killed while a snapshot is written, and snapshots again', async () => {
    const before = await fetch(`${node!.url}/indexes/seg/stats`).then((r) => r.json() as Promise<{ numberOfDocuments: number }>);
    const acked = [await post('/snapshots', '')];
    await killWhile('processing', 'snapshotCreation');
    node = await spawnNode([], dir, node!.port);
    const client = new Meilisearch({ host: node.url });
    // The interrupted snapshot runs again (or had finished); either way it ends.
    expect(['succeeded', 'failed']).toContain((await client.tasks.waitForTask(acked[0]!, { timeout: 120_000 })).status);
    const again = await post('/snapshots', '');
    expect((await client.tasks.waitForTask(again, { timeout: 120_000 })).status).toBe('succeeded');
    await expectDocuments([], before.numberOfDocuments);
  });
});
