import { rmSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { afterAll, describe, expect, it } from 'vitest';
import { ClusterServiceClient } from '../../src/gen/trine/v1/cluster.js';
import { TestCluster } from '../helpers/cluster.js';
import { digest, waitConverged } from '../helpers/cluster-state.js';
import { tempDir } from '../helpers/node.js';
import { issueCert, makeCa } from '../helpers/certs.js';

const certs = tempDir('trine-tls-');
const clusters: TestCluster[] = [];

afterAll(async () => {
  await Promise.all(clusters.map((c) => c.stop()));
  rmSync(certs, { recursive: true, force: true });
});

/** Every node presents the same certificate for 127.0.0.1 (every test node listens there). */
function makeCerts(): string[] {
  const ca = makeCa(certs, 'trine-test-ca');
  const node = issueCert(certs, ca, 'node', '127.0.0.1');
  return ['--raft-tls-cert', node.cert, '--raft-tls-key', node.key, '--raft-tls-ca', ca.cert];
}

async function post(url: string, doc: Record<string, unknown>): Promise<Response> {
  return fetch(`${url}/indexes/secure/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([doc]) });
}

describe('cluster security', () => {
  it('runs node-to-node traffic over mutual TLS: elections, replication and forwarded writes', async () => {
    const c = await TestCluster.start({ flags: makeCerts() });
    clusters.push(c);
    const lead = await c.waitForLeader();
    const follower = [0, 1, 2].find((i) => i !== lead)!;
    const acked: number[] = [];
    for (let k = 0; k < 5; k++) {
      const r = await post(c.url(follower), { id: k });
      expect(r.status).toBe(202);
      acked.push(((await r.json()) as { taskUid: number }).taskUid);
    }
    const states = await waitConverged([0, 1, 2].map((i) => c.url(i)), acked);
    expect(new Set(states.map(digest)).size).toBe(1);
    expect(states[0]!.documents['secure']).toHaveLength(5);
    const view = await c.view(follower);
    expect(view.members.every((m) => m.reachable)).toBe(true);

    // Plaintext gRPC gets nowhere, even with the right secret.
    const plain = new ClusterServiceClient(c.raftAddr(lead), grpc.credentials.createInsecure());
    const md = new grpc.Metadata();
    md.set('x-trine-cluster-secret', 'test-cluster-secret');
    const err = await new Promise<grpc.ServiceError | null>((res) => plain.status({}, md, { deadline: Date.now() + 3000 }, (e) => res(e)));
    plain.close();
    expect(err?.code).toBe(grpc.status.UNAVAILABLE);
  });

  it('refuses and logs calls from a node with the wrong cluster secret; that node never joins in', async () => {
    const c = await TestCluster.start({
      flags: ['--write-timeout', '1s', '--read-timeout', '1s'],
      nodeFlags: (i) => (i === 2 ? ['--cluster-secret', 'not-the-secret'] : []),
    });
    clusters.push(c);
    const lead = await c.waitForLeader([0, 1]);
    expect([0, 1]).toContain(lead);
    const ok = await post(c.url(lead), { id: 'accepted' });
    expect(ok.status).toBe(202);
    const refused = await post(c.url(2), { id: 'refused' });
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ code: 'no_leader' });
    const view = await c.view(lead);
    expect(view.members.find((m) => m.id === 'n3')).toMatchObject({ reachable: false });
    const logs = [0, 1].map((i) => c.nodes[i]!.output()).join('\n');
    expect(logs).toContain('refused a cluster call with a missing or wrong cluster secret');
    // It can vouch for no read (it reaches no leader), and holds nothing of what the others wrote.
    const unsure = await fetch(`${c.url(2)}/indexes/secure/documents/accepted`);
    expect(unsure.status).toBe(503);
    expect(await unsure.json()).toMatchObject({ code: 'consistent_read_timeout' });
    const missing = await fetch(`${c.url(2)}/indexes/secure/documents/accepted`, { headers: { 'Trine-Read-Consistency': 'stale' } });
    expect(missing.status).toBe(404);
  });

  it('accepts a key on every node as soon as one node answered its creation, and refuses it once one answered its deletion', async () => {
    const master = 'a-master-key-of-sixteen-bytes-or-more';
    const c = await TestCluster.start({ flags: ['--master-key', master] });
    clusters.push(c);
    // GET /cluster wants the master key; the balancer's check is public and says who leads.
    let lead = -1;
    for (const deadline = Date.now() + 30_000; lead < 0 && Date.now() < deadline; await new Promise((r) => setTimeout(r, 200))) {
      for (const i of [0, 1, 2]) {
        const h = (await fetch(`${c.url(i)}/cluster/health`).then((r) => r.json()).catch(() => ({}))) as { role?: string; status?: string };
        if (h.role === 'leader' && h.status === 'available') lead = i;
      }
    }
    expect(lead).toBeGreaterThanOrEqual(0);
    const followers = [0, 1, 2].filter((i) => i !== lead);
    const createKey = async () => {
      const created = await fetch(`${c.url(lead)}/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
        body: JSON.stringify({ actions: ['indexes.get'], indexes: ['*'], expiresAt: null }),
      });
      expect(created.status).toBe(201);
      return (await created.json()) as { key: string; uid: string };
    };
    const useOnFollowers = (key: string) =>
      Promise.all(followers.map((f) => fetch(`${c.url(f)}/indexes`, { headers: { authorization: `Bearer ${key}` } }).then((r) => r.status)));
    // Each follower applies the key a moment after the leader answered: before it looked again
    // once caught up, about one use in ten straight after the creation was refused.
    const statuses: number[] = [];
    for (let k = 0; k < 40; k++) statuses.push(...(await useOnFollowers((await createKey()).key)));
    expect(statuses.filter((x) => x !== 200)).toEqual([]);
    // And a key deleted through the leader is refused at once everywhere: the node that checked
    // the token before catching up looks again (before, a follower could still let it read).
    const afterDelete: number[] = [];
    for (let k = 0; k < 40; k++) {
      const { key, uid } = await createKey();
      await useOnFollowers(key);
      const deleted = await fetch(`${c.url(lead)}/keys/${uid}`, { method: 'DELETE', headers: { authorization: `Bearer ${master}` } });
      expect(deleted.status).toBe(204);
      afterDelete.push(...(await useOnFollowers(key)));
    }
    expect(afterDelete.filter((x) => x !== 403)).toEqual([]);
    // Writes too: a follower that had not applied the deletion when the write came in accepts
    // it, but the log orders the deletion first, and every node refuses the write there.
    const writeKey = async () => {
      const created = await fetch(`${c.url(lead)}/keys`, {
        method: 'POST',
        headers: { authorization: `Bearer ${master}`, 'content-type': 'application/json' },
        body: JSON.stringify({ actions: ['documents.add', 'indexes.create'], indexes: ['*'], expiresAt: null }),
      });
      expect(created.status).toBe(201);
      return (await created.json()) as { key: string; uid: string };
    };
    const writeOnFollowers = (key: string, id: number) =>
      Promise.all(
        followers.map((f, k) =>
          fetch(`${c.url(f)}/indexes/revoked/documents`, {
            method: 'POST',
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
            body: JSON.stringify([{ id: `${id}-${k}` }]),
          }).then(async (r) => ({ status: r.status, body: (await r.json()) as { code?: string } })),
        ),
      );
    const writesAfterDelete: { status: number; body: { code?: string } }[] = [];
    let accepted = 0;
    for (let k = 0; k < 30; k++) {
      const { key, uid } = await writeKey();
      accepted += (await writeOnFollowers(key, k)).filter((r) => r.status === 202).length;
      const deleted = await fetch(`${c.url(lead)}/keys/${uid}`, { method: 'DELETE', headers: { authorization: `Bearer ${master}` } });
      expect(deleted.status).toBe(204);
      writesAfterDelete.push(...(await writeOnFollowers(key, 1000 + k)));
    }
    expect(accepted).toBe(60);
    expect(writesAfterDelete.filter((r) => r.status !== 403 || r.body.code !== 'invalid_api_key')).toEqual([]);
    // None of them became a task, on any node.
    for (const i of [0, 1, 2]) {
      const tasks = await fetch(`${c.url(i)}/tasks?indexUids=revoked&limit=1000`, { headers: { authorization: `Bearer ${master}` } });
      expect(((await tasks.json()) as { total: number }).total).toBe(60);
    }
    // A key no node knows is still refused, after the node caught up.
    const wrong = await fetch(`${c.url(followers[0]!)}/indexes`, { headers: { authorization: 'Bearer not-a-key' } });
    expect(wrong.status).toBe(403);
    expect(await wrong.json()).toMatchObject({ code: 'invalid_api_key' });
  });
});
