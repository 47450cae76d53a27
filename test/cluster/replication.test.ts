import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster } from '../helpers/cluster.js';
import { digest, lostWrites, waitConverged, WriteLoad, type NodeState } from '../helpers/cluster-state.js';

let c: TestCluster;

beforeAll(async () => {
  c = await TestCluster.start();
});

afterAll(async () => {
  await c?.stop();
});

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function expectIdentical(states: NodeState[]): void {
  expect(states.length).toBeGreaterThan(1);
  for (const s of states.slice(1)) expect(s).toEqual(states[0]);
  expect(new Set(states.map(digest)).size).toBe(1);
}

describe('a three-node cluster', () => {
  it('replicates writes made through a follower, with the same task uids and outcomes everywhere', async () => {
    const lead = await c.waitForLeader();
    const [follower, other] = [0, 1, 2].filter((i) => i !== lead) as [number, number];
    const acked: number[] = [];
    for (let k = 0; k < 5; k++) {
      const r = await post(c.url(follower), '/indexes/movies/documents', [{ id: k, title: `movie ${k}` }]);
      expect(r.status).toBe(202);
      const body = (await r.json()) as { taskUid: number; status: string; type: string };
      expect(body).toMatchObject({ status: 'enqueued', type: 'documentAdditionOrUpdate' });
      acked.push(body.taskUid);
    }
    expect([...acked].sort((a, b) => a - b)).toEqual(acked);
    expect(new Set(acked).size).toBe(acked.length);

    // The follower answered after applying the entry itself: the task is known there at once.
    const own = await fetch(`${c.url(follower)}/tasks/${acked[4]}`);
    expect(own.status).toBe(200);

    const states = await waitConverged([0, 1, 2].map((i) => c.url(i)), acked);
    expectIdentical(states);
    expect(states[0]!.documents['movies']!.map((d) => d['id'])).toEqual([0, 1, 2, 3, 4]);
    for (const uid of acked) {
      expect(states[other]!.tasks.find((t) => t['uid'] === uid)).toMatchObject({ status: 'succeeded', indexUid: 'movies' });
    }
  });

  it('knows a task enqueued through another node as soon as that node answers, as a client polling behind a load balancer expects', async () => {
    const lead = await c.waitForLeader();
    const [a, b] = [0, 1, 2].filter((i) => i !== lead) as [number, number];
    for (let k = 0; k < 20; k++) {
      const [from, to] = k % 2 ? [a, b] : [b, lead];
      const r = await post(c.url(from), '/indexes/polled/documents', [{ id: k }]);
      const { taskUid } = (await r.json()) as { taskUid: number };
      const [task, own] = await Promise.all([fetch(`${c.url(to)}/tasks/${taskUid}`), fetch(`${c.url(from)}/tasks/${taskUid}`)]);
      expect(task.status).toBe(200);
      expect(own.status).toBe(200);
      expect(((await task.json()) as { uid: number }).uid).toBe(taskUid);
    }
    // Listed by uid through a third node, just as fast.
    const r = await post(c.url(a), '/indexes/polled/documents', [{ id: 'listed' }]);
    const { taskUid } = (await r.json()) as { taskUid: number };
    const listed = (await (await fetch(`${c.url(b)}/tasks?uids=${taskUid}`)).json()) as { results: { uid: number }[] };
    expect(listed.results.map((x) => x.uid)).toEqual([taskUid]);
    // A uid that exists nowhere is still not found, once this node has caught up.
    const missing = await fetch(`${c.url(a)}/tasks/4000000000`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ code: 'task_not_found' });
  });

  it('shows every member in GET /cluster on any node', async () => {
    const lead = await c.waitForLeader();
    for (const i of [0, 1, 2]) {
      const v = await c.view(i);
      expect(v.nodeId).toBe(c.ids[i]);
      expect(v.leader).toBe(c.ids[lead]);
      expect(v.members.map((m) => m.id).sort()).toEqual(['n1', 'n2', 'n3']);
      expect(v.members.filter((m) => m.role === 'leader').map((m) => m.id)).toEqual([c.ids[lead]]);
      for (const m of v.members) {
        expect(m).toMatchObject({ voter: true, reachable: true, term: v.term });
        expect(m.httpAddr).toBe(c.url(c.indexOf(m.id)).replace('http://', ''));
        expect(m.appliedIndex).toBeGreaterThan(0);
        expect(m.commitIndex).toBeGreaterThanOrEqual(m.appliedIndex!);
        expect(m.lag).toBeGreaterThanOrEqual(0);
      }
    }
  });

  it('answers a read only once the node has processed the task named in Trine-Wait-For-Task', async () => {
    const lead = await c.waitForLeader();
    const [writeTo, readFrom] = [0, 1, 2].filter((i) => i !== lead) as [number, number];
    const r = await post(c.url(writeTo), '/indexes/ryw/documents', [{ id: 'fresh', v: 1 }]);
    const { taskUid } = (await r.json()) as { taskUid: number };
    const read = await fetch(`${c.url(readFrom)}/indexes/ryw/documents/fresh`, {
      headers: { 'Trine-Wait-For-Task': String(taskUid), 'Trine-Wait-Timeout': '30000' },
    });
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual({ id: 'fresh', v: 1 });
    const task = (await (await fetch(`${c.url(readFrom)}/tasks/${taskUid}`)).json()) as { status: string };
    expect(task.status).toBe('succeeded');

    // A uid no node has registered names no task: not worth a 503 after a wait.
    const future = await fetch(`${c.url(readFrom)}/indexes/ryw/documents/fresh`, {
      headers: { 'Trine-Wait-For-Task': String(taskUid + 1000), 'Trine-Wait-Timeout': '200' },
    });
    expect(future.status).toBe(404);
    expect(await future.json()).toMatchObject({ code: 'task_not_found' });
    // A task registered but not processed within the bound is a 503: the node lags behind it.
    const big = await post(c.url(writeTo), '/indexes/ryw-big/documents', Array.from({ length: 20_000 }, (_, i) => ({ id: i, text: `word${i} more words` })));
    const bigUid = ((await big.json()) as { taskUid: number }).taskUid;
    const lagging = await fetch(`${c.url(writeTo)}/indexes/ryw-big/stats`, { headers: { 'Trine-Wait-For-Task': String(bigUid), 'Trine-Wait-Timeout': '0' } });
    expect(lagging.status).toBe(503);
    expect(await lagging.json()).toMatchObject({ code: 'cluster_unavailable', type: 'system' });
    expect(lagging.headers.get('retry-after')).toBe('10');

    const bad = await fetch(`${c.url(readFrom)}/indexes/ryw/documents/fresh`, { headers: { 'Trine-Wait-For-Task': 'soon' } });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'invalid_header_value' });
  });

  it('refuses intent-less deletions on every node, and no node deletes anything', async () => {
    const lead = await c.waitForLeader();
    const setup = await fetch(`${c.url(lead)}/indexes/kept/settings`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filterableAttributes: ['k'] }),
    });
    const docs = await post(c.url(lead), '/indexes/kept/documents', [{ id: 1, k: 'a' }, { id: 2, k: 'b' }]);
    const acked = [((await setup.json()) as { taskUid: number }).taskUid, ((await docs.json()) as { taskUid: number }).taskUid];
    const before = await waitConverged([0, 1, 2].map((i) => c.url(i)), acked);
    expectIdentical(before);
    for (const i of [0, 1, 2]) {
      for (const filter of [[''], [[]], ['', ' '], '  ']) {
        const r = await post(c.url(i), '/indexes/kept/documents/delete', { filter });
        expect(r.status).toBe(400);
        expect(await r.json()).toMatchObject({ code: 'invalid_document_filter', message: 'Sending an empty filter is forbidden.' });
      }
      const bare = await fetch(`${c.url(i)}/indexes/kept/documents/`, { method: 'DELETE' });
      expect(bare.status).toBe(400);
      const tasks = await fetch(`${c.url(i)}/tasks`, { method: 'DELETE' });
      expect(await tasks.json()).toMatchObject({ code: 'missing_task_filters' });
    }
    // A write after them: once every node has applied it, nothing before it deleted anything.
    const mark = await post(c.url(lead), '/indexes/mark/documents', [{ id: 1 }]);
    const after = await waitConverged([0, 1, 2].map((i) => c.url(i)), [((await mark.json()) as { taskUid: number }).taskUid]);
    expectIdentical(after);
    expect(after[0]!.documents['kept']).toEqual(before[0]!.documents['kept']);
    expect(after[0]!.tasks.length).toBe(before[0]!.tasks.length + 1);
  });

  it('keeps every acknowledged write when the leader is killed -9 under load, and accepts writes again', async () => {
    const load = new WriteLoad(() => c.alive().map((i) => c.url(i)), 'load');
    try {
      await load.waitForAcks(30);
      const old = await c.waitForLeader();
      await c.kill(old, 'SIGKILL');
      const survivors = c.alive();
      const lead = await c.waitForLeader(survivors);
      expect(lead).not.toBe(old);
      // Writes are accepted again, through both survivors.
      await load.waitForAcks(30);
      const after = new Set(load.acks.slice(-30).map((a) => a.via));
      expect(after.size).toBe(2);
      await c.restart(old);
      await load.waitForAcks(15);
    } finally {
      await load.stop();
    }
    const states = await waitConverged([0, 1, 2].map((i) => c.url(i)), load.acked);
    expectIdentical(states);
    expect(lostWrites(states[0]!, 'load', load)).toEqual([]);
  });
});
