// What the load balancer sees: a node that cannot serve consistent reads leaves HAProxy's
// rotation through GET /cluster/health and comes back once it can; a node paused and resumed
// never answers from the state it had when it stopped.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster } from '../helpers/cluster.js';
import { startHaproxy, type Balancer } from '../helpers/haproxy.js';

let c: TestCluster;
let lb: Balancer;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  c = await TestCluster.start({ proxied: true });
  await c.waitForLeader();
  lb = await startHaproxy(c.ports());
  await until(async () => Object.values(await lb.stats()).every((s) => s.status === 'UP'), 30_000, 'every node in rotation');
}, 120_000);

afterAll(async () => {
  for (const n of c?.nodes ?? []) n?.proc.kill('SIGCONT');
  await lb?.stop();
  await c?.stop();
});

/** Polls `pred` until it holds; returns how long that took. */
async function until(pred: () => Promise<boolean>, timeoutMs: number, what: string): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < timeoutMs) {
    if (await pred().catch(() => false)) return performance.now() - start;
    await sleep(50);
  }
  throw new Error(`${what}: not within ${timeoutMs} ms (HAProxy: ${JSON.stringify(await lb.stats())})\n${c.output()}`);
}

const status = async (name: string) => (await lb.stats())[name]?.status ?? '';

async function add(url: string, index: string, doc: Record<string, unknown>): Promise<number> {
  const r = await fetch(`${url}/indexes/${index}/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify([doc]) });
  expect(r.status).toBe(202);
  return ((await r.json()) as { taskUid: number }).taskUid;
}

async function finished(url: string, uid: number): Promise<void> {
  await until(async () => ((await (await fetch(`${url}/tasks/${uid}`)).json()) as { status: string }).status === 'succeeded', 30_000, `task ${uid}`);
}

describe('health checks for the load balancer', () => {
  // The product promises 3 s each way (a check every 500 ms, out after two failures, and 1.5 s
  // without the leader's heartbeats); the bound here leaves room for a loaded machine, and
  // the measured times are printed.
  for (const who of ['a follower', 'the leader'] as const) {
    it(`takes ${who} cut off from the majority out of rotation, and back once healed`, async () => {
      const lead = await c.waitForLeader();
      const cut = who === 'the leader' ? lead : [0, 1, 2].find((i) => i !== lead)!;
      const name = c.ids[cut]!;
      c.isolate(cut);
      try {
        const out = await until(async () => (await status(name)).startsWith('DOWN'), 15_000, `${name} leaving the rotation`);
        // Meanwhile the balancer keeps answering, from the majority.
        for (let i = 0; i < 6; i++) expect((await fetch(`${lb.url}/indexes/none/documents/1`)).status).toBe(404);
        const health = await fetch(`${c.url(cut)}/cluster/health`);
        expect(health.status).toBe(503);
        expect(await health.json()).toMatchObject({ code: 'node_not_ready', type: 'system', message: expect.stringContaining('cannot reach a quorum') });
        c.heal();
        const back = await until(async () => (await status(name)) === 'UP', 15_000, `${name} back in rotation`);
        console.log(`${who} cut off: out of rotation after ${out.toFixed(0)} ms, back ${back.toFixed(0)} ms after healing`);
      } finally {
        c.heal();
      }
      await c.waitForLeader([0, 1, 2]);
    }, 90_000);
  }

  it('answers GET /cluster/health with the node, its role and its lag while ready', async () => {
    const lead = await c.waitForLeader();
    const r = await fetch(`${c.url(lead)}/cluster/health`);
    expect(r.status).toBe(200);
    expect(await r.json()).toEqual({ status: 'available', nodeId: c.ids[lead], role: 'leader', leader: c.ids[lead], lag: { entries: 0, ms: 0 } });
  });
});

describe('a paused node', () => {
  it('does not serve stale reads after it resumes (SIGSTOP, writes elsewhere, SIGCONT)', async () => {
    const lead = await c.waitForLeader();
    const paused = [0, 1, 2].find((i) => i !== lead)!;
    const first = await add(c.url(lead), 'paused', { id: 'before', text: 'old' });
    await finished(c.url(paused), first);
    c.nodes[paused]!.proc.kill('SIGSTOP');
    let reads: Promise<Response>[] = [];
    try {
      // The others go on without it, and report the tasks finished.
      const uid = await add(c.url(lead), 'paused', { id: 'during', text: 'new words' });
      await finished(c.url(lead), uid);
      const updated = await add(c.url(lead), 'paused', { id: 'before', text: 'changed' });
      await finished(c.url(lead), updated);
      // Reads reach the paused node and wait in its socket; more come right after it resumes.
      reads = [fetch(`${c.url(paused)}/indexes/paused/documents/during`), fetch(`${c.url(paused)}/indexes/paused/documents/before`)];
      await sleep(200);
    } finally {
      c.nodes[paused]!.proc.kill('SIGCONT');
    }
    reads.push(
      fetch(`${c.url(paused)}/indexes/paused/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q: 'new words' }) }),
      fetch(`${c.url(paused)}/tasks/${await add(c.url(lead), 'paused', { id: 'after' })}`),
    );
    const [during, before, search, task] = await Promise.all(reads);
    // Consistent, or refused: never the old state.
    for (const r of [during!, before!, search!, task!]) expect([200, 503]).toContain(r.status);
    if (during!.status === 200) expect(await during!.json()).toMatchObject({ id: 'during' });
    if (before!.status === 200) expect(await before!.json()).toMatchObject({ text: 'changed' });
    if (search!.status === 200) expect(((await search!.json()) as { hits: { id: string }[] }).hits.map((h) => h.id)).toContain('during');
    expect([during, before, search].filter((r) => r!.status === 200).length).toBeGreaterThan(0);
  }, 90_000);
});
