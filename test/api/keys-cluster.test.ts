import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../src/config/options.js';
import { startNode, type RunningNode } from '../../src/server/node.js';
import { freePort, tempDir } from '../helpers/node.js';

/** Keys in a three-node cluster (in one process): created anywhere, the same everywhere. */

const MASTER = 'cluster-keys-master-key-0123456789';
const nodes: RunningNode[] = [];
const dirs: string[] = [];

async function call(node: RunningNode, method: string, path: string, body?: unknown, key = MASTER) {
  const headers: Record<string, string> = { authorization: `Bearer ${key}` };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(node.url + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : null };
}

async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

beforeAll(async () => {
  const ids = ['n1', 'n2', 'n3'];
  const raft = await Promise.all(ids.map(() => freePort()));
  const peers = ids.map((id, i) => `${id}=127.0.0.1:${raft[i]}`).join(',');
  const started = await Promise.all(
    ids.map(async (id, i) => {
      const dir = tempDir(`trine-keys-${id}-`);
      dirs.push(dir);
      const http = await freePort();
      const options = parseOptions(
        ['--db-path', dir, '--http-addr', `127.0.0.1:${http}`, '--log-level', 'error', '--node-id', id,
          '--raft-addr', `127.0.0.1:${raft[i]}`, '--peers', peers, '--master-key', MASTER],
        {},
      );
      return startNode(options);
    }),
  );
  nodes.push(...started);
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('keys in a cluster', () => {
  it('has the same four default keys on every node', async () => {
    const lists = await Promise.all(
      nodes.map((n) => eventually(() => call(n, 'GET', '/keys'), (r) => r.status === 200 && r.body!['total'] === 4)),
    );
    for (const l of lists) expect(l.body!['total']).toBe(4);
    const uids = lists.map((l) => l.body!['results'].map((k: any) => `${k.uid}:${k.key}`).join());
    expect(new Set(uids).size).toBe(1);
  });

  it('serves a key created, renamed and deleted through any node on every node', async () => {
    const leaderIndex = nodes.findIndex((n) => n.ctx.replicator.isLeader());
    const via = nodes[(leaderIndex + 1) % nodes.length]!;
    const created = await call(via, 'POST', '/keys', { actions: ['indexes.get'], indexes: ['*'], expiresAt: null });
    expect(created.status).toBe(201);
    const key = created.body!['key'] as string;
    // A refusal decided where the change is applied comes back through the follower as it is.
    const again = await call(via, 'POST', '/keys', { uid: created.body!['uid'], actions: ['search'], indexes: ['*'], expiresAt: null });
    expect(again.status).toBe(409);
    expect(again.body!['code']).toBe('api_key_already_exists');
    // The answer came once the change was applied on the node that took the request.
    expect((await call(via, 'GET', '/indexes', undefined, key)).status).toBe(200);
    for (const n of nodes) {
      const r = await eventually(() => call(n, 'GET', '/indexes', undefined, key), (x) => x.status === 200);
      expect(r.status).toBe(200);
    }
    const renamed = await call(nodes[leaderIndex]!, 'PATCH', `/keys/${key}`, { name: 'shared' });
    expect(renamed.body!['name']).toBe('shared');
    for (const n of nodes) {
      const r = await eventually(() => call(n, 'GET', `/keys/${created.body!['uid']}`), (x) => x.body?.['name'] === 'shared');
      expect(r.body!['updatedAt']).toBe(renamed.body!['updatedAt']);
    }
    expect((await call(via, 'DELETE', `/keys/${key}`)).status).toBe(204);
    for (const n of nodes) {
      const r = await eventually(() => call(n, 'GET', '/indexes', undefined, key), (x) => x.status === 403);
      expect(r.status).toBe(403);
    }
  });
});
