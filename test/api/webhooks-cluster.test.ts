import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../src/config/options.js';
import { startNode, type RunningNode } from '../../src/server/node.js';
import { freePort, tempDir } from '../helpers/node.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

/** Webhooks in a three-node cluster (in one process): registered anywhere, notified once per batch, by the leader. */

const nodes: RunningNode[] = [];
const dirs: string[] = [];
let rx: Receiver;

async function call(node: RunningNode, method: string, path: string, body?: unknown) {
  const r = await fetch(node.url + path, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : null };
}

async function waitTask(node: RunningNode, uid: number) {
  for (let i = 0; i < 300; i++) {
    const r = await call(node, 'GET', `/tasks/${uid}`);
    if (['succeeded', 'failed', 'canceled'].includes(r.body?.['status'])) return r.body!;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error(`task ${uid} did not finish`);
}

beforeAll(async () => {
  rx = await startReceiver();
  const ids = ['n1', 'n2', 'n3'];
  const raft = await Promise.all(ids.map(() => freePort()));
  const peers = ids.map((id, i) => `${id}=127.0.0.1:${raft[i]}`).join(',');
  nodes.push(
    ...(await Promise.all(
      ids.map(async (id, i) => {
        const dir = tempDir(`trine-webhooks-${id}-`);
        dirs.push(dir);
        const options = parseOptions(
          ['--db-path', dir, '--http-addr', `127.0.0.1:${await freePort()}`, '--log-level', 'error', '--node-id', id, '--raft-addr', `127.0.0.1:${raft[i]}`, '--peers', peers],
          {},
        );
        return startNode(options, { webhookRetryDelaysMs: [50] });
      }),
    )),
  );
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  await rx?.close();
});

describe('webhooks in a cluster', () => {
  it('are shown by every node, and each batch is delivered once, by the leader', async () => {
    let leader = -1;
    for (let i = 0; i < 200 && leader < 0; i++) {
      leader = nodes.findIndex((n) => n.ctx.replicator.isLeader());
      if (leader < 0) await new Promise((r) => setTimeout(r, 50));
    }
    const follower = nodes[(leader + 1) % 3]!;
    const created = await call(follower, 'POST', '/webhooks', { url: rx.url });
    expect(created.status).toBe(201);
    for (const n of nodes) expect((await call(n, 'GET', `/webhooks/${created.body!['uuid']}`)).status).toBe(200);

    const uids: number[] = [];
    for (let i = 0; i < 6; i++) {
      const via = nodes[i % 3]!;
      const r = await call(via, 'POST', '/indexes/shared/documents', [{ id: i, n: i }]);
      expect(r.status).toBe(202);
      uids.push(r.body!['taskUid'] as number);
    }
    for (const u of uids) await waitTask(nodes[leader]!, u);
    await rx.until((r) => uids.every((u) => r.deliveries.some((d) => d.tasks.some((x) => x['uid'] === u))));
    // Followers process the same batches; give a duplicate the time to show up.
    await Promise.all(nodes.map(async (n) => { for (const u of uids) await waitTask(n, u); }));
    await new Promise((r) => setTimeout(r, 500));
    for (const u of uids) {
      expect(rx.deliveries.filter((d) => d.tasks.some((x) => x['uid'] === u)).length, `task ${u}`).toBe(1);
    }
    const batches = new Set(rx.deliveries.flatMap((d) => d.tasks.map((x) => x['batchUid'])));
    expect(rx.deliveries.length).toBe(batches.size);
  });
});
