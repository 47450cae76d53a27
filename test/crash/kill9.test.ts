import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { Meilisearch } from 'meilisearch';
import { spawnNode, tempDir, type NodeProcess } from '../helpers/node.js';

const dir = tempDir('trine-kill9-');
let node: NodeProcess | null = null;

afterAll(async () => {
  await node?.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function ndjson(from: number, count: number): string {
  const lines: string[] = [];
  for (let i = from; i < from + count; i++) lines.push(JSON.stringify({ id: i, title: `title ${i}`, body: `some text for document ${i}` }));
  return lines.join('\n');
}

describe('kill -9 in the middle of indexing', () => {
  it('keeps every acknowledged task, finishes it after restart, and never half-writes a task', async () => {
    node = await spawnNode([], dir);
    const acked: number[] = [];
    const sizes = new Map<number, number>();
    const send = async (from: number, count: number) => {
      const r = await fetch(`${node!.url}/indexes/crash/documents`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-ndjson' },
        body: ndjson(from, count),
      });
      expect(r.status).toBe(202);
      const { taskUid } = (await r.json()) as { taskUid: number };
      acked.push(taskUid);
      sizes.set(taskUid, count);
    };
    await send(0, 100_000);
    for (let i = 0; i < 5; i++) await send(200_000 + i * 1000, 1000);
    node.proc.kill('SIGKILL');
    await new Promise((r) => node!.proc.once('exit', r));

    node = await spawnNode([], dir);
    const client = new Meilisearch({ host: node.url });
    let expected = 0;
    for (const uid of acked) {
      const task = await client.tasks.waitForTask(uid, { timeout: 60_000 });
      expect(task.status).toBe('succeeded');
      expected += sizes.get(uid)!;
    }
    const stats = await client.index('crash').getStats();
    expect(stats.numberOfDocuments).toBe(expected);
    const tasks = await client.tasks.getTasks({ limit: 100 });
    expect(tasks.results.map((t) => t.uid).sort((a, b) => a - b)).toEqual(acked);
  });
});
