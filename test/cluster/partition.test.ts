import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster } from '../helpers/cluster.js';
import { digest, lostWrites, waitConverged, WriteLoad } from '../helpers/cluster-state.js';

// Every node reaches every other through its own fault-injecting proxy; writes that find no
// quorum give up after 2 s, and reads that cannot be made consistent after 1 s, so that
// refusals show quickly.
let c: TestCluster;

beforeAll(async () => {
  c = await TestCluster.start({ proxied: true, flags: ['--write-timeout', '2s', '--read-timeout', '1s'] });
});

afterAll(async () => {
  await c?.stop();
});

async function write(i: number, index: string, doc: Record<string, unknown>): Promise<Response> {
  return fetch(`${c.url(i)}/indexes/${index}/documents`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([doc]),
  });
}

async function converge(load: WriteLoad, index: string) {
  const states = await waitConverged([0, 1, 2].map((i) => c.url(i)), load.acked);
  for (const s of states.slice(1)) expect(s).toEqual(states[0]);
  expect(new Set(states.map(digest)).size).toBe(1);
  expect(lostWrites(states[0]!, index, load)).toEqual([]);
  return states[0]!;
}

describe('network partitions', () => {
  it('a follower cut off refuses writes with no_leader and reads it cannot vouch for, tells the balancer, and catches up once healed', async () => {
    const lead = await c.waitForLeader();
    const cut = [0, 1, 2].find((i) => i !== lead)!;
    const majority = [0, 1, 2].filter((i) => i !== cut);
    const first = await write(lead, 'part', { id: 'before' });
    expect(first.status).toBe(202);
    const { taskUid } = (await first.json()) as { taskUid: number };
    const seen = await fetch(`${c.url(cut)}/tasks/${taskUid}`, { headers: { 'Trine-Wait-For-Task': String(taskUid), 'Trine-Wait-Timeout': '30000' } });
    expect(seen.status).toBe(200);

    c.isolate(cut);
    const load = new WriteLoad(() => majority.map((i) => c.url(i)), 'part');
    try {
      await load.waitForAcks(20);
      const refused = await write(cut, 'part', { id: 'from-the-cut-node' });
      expect(refused.status).toBe(503);
      expect(await refused.json()).toMatchObject({ code: 'no_leader', type: 'system' });
      // It cannot learn what the others acknowledged since: its reads fail rather than lie,
      // and its health check takes it out of a balancer's rotation.
      const read = await fetch(`${c.url(cut)}/indexes/part/documents/before`);
      expect(read.status).toBe(503);
      expect(await read.json()).toMatchObject({ code: 'consistent_read_timeout', type: 'system' });
      // A search is worked out while the node waits for the leader, and still not answered.
      const search = await fetch(`${c.url(cut)}/indexes/part/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"q":"before"}' });
      expect(search.status).toBe(503);
      expect(await search.json()).toMatchObject({ code: 'consistent_read_timeout', type: 'system' });
      // A client that accepts old data says so for its request.
      const local = await fetch(`${c.url(cut)}/indexes/part/documents/before`, { headers: { 'Trine-Read-Consistency': 'stale' } });
      expect(local.status).toBe(200);
      const bad = await fetch(`${c.url(cut)}/indexes/part/documents/before`, { headers: { 'Trine-Read-Consistency': 'sometimes' } });
      expect(bad.status).toBe(400);
      expect(await bad.json()).toMatchObject({ code: 'invalid_header_value' });
      const health = await fetch(`${c.url(cut)}/cluster/health`);
      expect(health.status).toBe(503);
      expect(((await health.json()) as { message: string; code: string })).toMatchObject({ code: 'node_not_ready', message: expect.stringMatching(/cannot reach a quorum/) });
      const view = await c.view(lead);
      expect(view.members.find((m) => m.id === c.ids[cut])).toMatchObject({ reachable: false, role: null });

      c.heal();
      await load.waitForAcks(10);
    } finally {
      c.heal();
      await load.stop();
    }
    load.acks.push({ taskUid, docId: 'before', via: c.url(lead) });
    load.attempted.add('before');
    const state = await converge(load, 'part');
    expect(state.documents['part']!.some((d) => d['id'] === 'from-the-cut-node')).toBe(false);
  });

  it('a leader cut off from the majority is replaced; what it could not commit is dropped, not acknowledged', async () => {
    const old = await c.waitForLeader();
    const majority = [0, 1, 2].filter((i) => i !== old);
    c.isolate(old);
    // Sent to the isolated leader before it notices: appended there, never committed.
    const stale = write(old, 'lead', { id: 'stale' });
    const load = new WriteLoad(() => majority.map((i) => c.url(i)), 'lead');
    try {
      const lead = await c.waitForLeader(majority);
      expect(majority).toContain(lead);
      await load.waitForAcks(20);
      const r = await stale;
      expect(r.status).toBe(503);
      expect(await r.json()).toMatchObject({ code: 'no_leader' });
      c.heal();
      await c.waitForLeader([0, 1, 2]);
      await load.waitForAcks(10);
    } finally {
      c.heal();
      await load.stop();
    }
    const state = await converge(load, 'lead');
    expect(state.documents['lead']!.some((d) => d['id'] === 'stale')).toBe(false);
    const views = await Promise.all([0, 1, 2].map((i) => c.view(i)));
    expect(new Set(views.map((v) => v.leader)).size).toBe(1);
  });

  it('a one-way cut (the leader cannot reach one follower) heals without losing writes', async () => {
    const lead = await c.waitForLeader();
    const far = [0, 1, 2].find((i) => i !== lead)!;
    c.proxies.get(`${lead}->${far}`)!.blackhole();
    // The far node hears no leader: writes go to the other two until the link heals.
    let targets = [0, 1, 2].filter((i) => i !== far);
    const load = new WriteLoad(() => targets.map((i) => c.url(i)), 'oneway');
    try {
      await load.waitForAcks(30);
      c.heal();
      targets = [0, 1, 2];
      await load.waitForAcks(10);
    } finally {
      c.heal();
      await load.stop();
    }
    await converge(load, 'oneway');
  });
});
