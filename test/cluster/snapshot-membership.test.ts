import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster } from '../helpers/cluster.js';
import { digest, lostWrites, waitConverged, WriteLoad } from '../helpers/cluster-state.js';
import { freePort, spawnNode, tempDir, type NodeProcess } from '../helpers/node.js';
import { rmSync } from 'node:fs';

// A small snapshot threshold compacts the log after a few dozen entries, so that a node that
// lost its data (or a new one) can only catch up through a snapshot of the applied state.
const FLAGS = ['--raft-snapshot-threshold', '20', '--log-level', 'info'];
let c: TestCluster;
let extra: NodeProcess | null = null;
const extraDir = tempDir('trine-cluster-n4-');

beforeAll(async () => {
  c = await TestCluster.start({ flags: FLAGS });
});

afterAll(async () => {
  await extra?.kill('SIGKILL');
  rmSync(extraDir, { recursive: true, force: true });
  await c?.stop();
});

async function expectConverged(urls: string[], load: WriteLoad, index: string): Promise<void> {
  const states = await waitConverged(urls, load.acked);
  for (const s of states.slice(1)) expect(s).toEqual(states[0]);
  expect(new Set(states.map(digest)).size).toBe(1);
  expect(lostWrites(states[0]!, index, load)).toEqual([]);
}

async function waitFor<T>(what: string, fn: () => Promise<T | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const v = await fn();
      if (v !== null) return v;
    } catch {
      // not there yet
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${c.output()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('catching up through snapshots', () => {
  it('a node whose data was wiped rejoins through a snapshot and ends identical', async () => {
    const lead = await c.waitForLeader();
    const victim = [0, 1, 2].find((i) => i !== lead)!;
    const load = new WriteLoad(() => c.alive().map((i) => c.url(i)), 'wiped');
    try {
      await load.waitForAcks(30);
      await c.kill(victim, 'SIGKILL');
      // Enough entries that the leader's log no longer reaches back to where the victim was.
      await load.waitForAcks(60);
      await c.restart(victim, { wipe: true });
      await load.waitForAcks(20);
    } finally {
      await load.stop();
    }
    await expectConverged([0, 1, 2].map((i) => c.url(i)), load, 'wiped');
    const out = c.nodes[victim]!.output();
    expect(out).toContain('the cluster already exists: joining it with an empty log');
    expect(out).toContain('installing a snapshot from the leader');
    // The snapshot carried the search structures: nothing was rebuilt from documents.
    expect(out).not.toContain('rebuilt from the documents');
  });

  it('a new node joins with --join as a learner, is promoted once caught up, and can be removed', async () => {
    const lead = await c.waitForLeader();
    const follower = [0, 1, 2].find((i) => i !== lead)!;
    const raftPort = await freePort();
    const load = new WriteLoad(() => c.alive().map((i) => c.url(i)), 'joined');
    try {
      await load.waitForAcks(30);
      // Joining through a follower: it passes the request on to the leader.
      extra = await spawnNode(
        ['--node-id', 'n4', '--raft-addr', `127.0.0.1:${raftPort}`, '--join', c.raftAddr(follower), '--cluster-secret', 'test-cluster-secret', ...FLAGS],
        extraDir,
      );
      const promoted = await waitFor('n4 to become a voter', async () => {
        const v = await c.view(lead);
        const n4 = v.members.find((m) => m.id === 'n4');
        return n4?.voter && n4.role === 'follower' ? v : null;
      });
      expect(promoted.members.map((m) => m.id).sort()).toEqual(['n1', 'n2', 'n3', 'n4']);
      await load.waitForAcks(20);
    } finally {
      await load.stop();
    }
    const urls = [...[0, 1, 2].map((i) => c.url(i)), extra.url];
    await expectConverged(urls, load, 'joined');
    expect(extra.output()).toContain('installing a snapshot from the leader');
    const n4View = (await (await fetch(`${extra.url}/cluster`)).json()) as { members: { id: string; reachable: boolean }[] };
    expect(n4View.members.every((m) => m.reachable)).toBe(true);

    // Removed through a follower's admin route; the others carry on as three.
    const r = await fetch(`${c.url(follower)}/cluster/nodes/n4`, { method: 'DELETE' });
    expect(r.status).toBe(200);
    const after = (await r.json()) as { members: { id: string }[] };
    expect(after.members.map((m) => m.id).sort()).toEqual(['n1', 'n2', 'n3']);
    await extra.kill('SIGKILL');
    extra = null;
    const w = await fetch(`${c.url(follower)}/indexes/joined/documents`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify([{ id: 'after-removal' }]),
    });
    expect(w.status).toBe(202);
    const missing = await fetch(`${c.url(lead)}/cluster/nodes/n9`, { method: 'DELETE' });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ code: 'bad_request' });
  });

  it('hands leadership over on request and when the leader is stopped with SIGTERM', async () => {
    const lead = await c.waitForLeader();
    const to = [0, 1, 2].find((i) => i !== lead)!;
    const r = await fetch(`${c.url(lead)}/cluster/transfer-leadership`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ to: c.ids[to] }),
    });
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ leader: c.ids[to] });
    expect(await c.waitForLeader()).toBe(to);

    await c.kill(to, 'SIGTERM');
    const next = await c.waitForLeader(c.alive());
    expect(next).not.toBe(to);
    expect(c.output()).toContain('handed leadership over before stopping');
    await c.restart(to);
    await c.waitForLeader();
  });
});
