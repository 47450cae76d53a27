// The `cluster` benchmark, on real processes on this machine (3 nodes share its cores):
//   1. import of the WordNet corpus (one document per synset) into a single node and into a
//      three-node cluster (through the leader): documents per second until processed on the
//      node written to, and until processed on every node;
//   2. 20 leader kills (kill -9) under no load: time to a new leader, and to the first write
//      accepted through a survivor; p50 and p99;
//   3. latency of small writes (one document) through a follower, sequential: p50 and p99;
//   4. read throughput of three nodes behind HAProxy against one node, with concurrent
//      clients: searches when the server has the search route, document reads otherwise.
// BENCH_DOCS limits the corpus, BENCH_KILLS the kills, BENCH_READ_SECONDS the read phases
// (BENCH_READ_CLIENTS concurrent clients, 48 by default: enough to keep three nodes busy);
// BENCH_PHASES picks phases among import,writes,failover,reads and those of cluster-costs.ts:
// overhead,pinned,readcpu,importload (all by default).

import { Agent, request } from 'node:http';
import { rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { TestCluster } from '../helpers/cluster.js';
import { startHaproxy, type Balancer } from '../helpers/haproxy.js';
import { benchImportLoad, benchOverhead, benchPinned, benchReadCpu } from './cluster-costs.js';
import { freePort, spawnNode, tempDir, type NodeProcess } from '../helpers/node.js';
import { loadSynsets, pick, rng, type SynsetDoc } from './wordnet.js';

const DOCS = Number(process.env['BENCH_DOCS'] ?? Infinity);
const KILLS = Number(process.env['BENCH_KILLS'] ?? 20);
const READ_SECONDS = Number(process.env['BENCH_READ_SECONDS'] ?? 10);
const READ_CLIENTS = Number(process.env['BENCH_READ_CLIENTS'] ?? 48);
const CHUNK = 10_000;
const INDEX = 'wordnet';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

const ms = (v: number) => `${v.toFixed(v < 10 ? 1 : 0)} ms`;

async function post(url: string, path: string, body: unknown): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

/** Waits until task `uid` has finished on the node at `url`; returns when it saw it so. */
async function waitTask(url: string, uid: number): Promise<number> {
  for (;;) {
    const r = await fetch(`${url}/tasks/${uid}`);
    if (r.ok) {
      const t = (await r.json()) as { status: string; error: unknown };
      if (t.status === 'failed') throw new Error(`task ${uid} failed on ${url}: ${JSON.stringify(t.error)}`);
      if (t.status === 'succeeded' || t.status === 'canceled') return performance.now();
    }
    await sleep(50);
  }
}

/** Posts the corpus in chunks to `url`; resolves with the start time and the last task uid. */
async function importDocs(url: string, docs: SynsetDoc[], chunk = CHUNK): Promise<{ start: number; last: number }> {
  const start = performance.now();
  let last = -1;
  for (let i = 0; i < docs.length; i += chunk) {
    const r = await post(url, `/indexes/${INDEX}/documents`, docs.slice(i, i + chunk));
    if (r.status !== 202) throw new Error(`import answered ${r.status}: ${await r.text()}`);
    last = ((await r.json()) as { taskUid: number }).taskUid;
  }
  return { start, last };
}

async function benchImport(docs: SynsetDoc[]): Promise<void> {
  const dir = tempDir('trine-bench-single-');
  let single: NodeProcess | null = null;
  try {
    single = await spawnNode([], dir);
    const { start, last } = await importDocs(single.url, docs);
    const done = await waitTask(single.url, last);
    const rate = docs.length / ((done - start) / 1000);
    console.log(`import, single node:        ${docs.length} docs in ${((done - start) / 1000).toFixed(1)} s = ${rate.toFixed(0)} docs/s`);

    const c = await TestCluster.start();
    try {
      const lead = await c.waitForLeader();
      const t = await importDocs(c.url(lead), docs);
      const onLeader = await waitTask(c.url(lead), t.last);
      const onAll = Math.max(onLeader, ...(await Promise.all([0, 1, 2].filter((i) => i !== lead).map((i) => waitTask(c.url(i), t.last)))));
      const rLead = docs.length / ((onLeader - t.start) / 1000);
      const rAll = docs.length / ((onAll - t.start) / 1000);
      console.log(`import, 3 nodes, on leader: ${rLead.toFixed(0)} docs/s (${((100 * rLead) / rate).toFixed(0)}% of single)`);
      console.log(`import, 3 nodes, on all:    ${rAll.toFixed(0)} docs/s (${((100 * rAll) / rate).toFixed(0)}% of single)`);
    } finally {
      await c.stop();
    }
  } finally {
    await single?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

async function leaderSeenBy(c: TestCluster, i: number, old: string): Promise<boolean> {
  try {
    const v = await c.view(i);
    return v.leader !== null && v.leader !== old && v.members.find((m) => m.id === v.leader)?.role === 'leader';
  } catch {
    return false;
  }
}

async function benchFailover(): Promise<void> {
  const c = await TestCluster.start();
  const toLeader: number[] = [];
  const toWrite: number[] = [];
  try {
    for (let k = 0; k < KILLS; k++) {
      const old = await c.waitForLeader();
      const survivors = [0, 1, 2].filter((i) => i !== old);
      await c.kill(old, 'SIGKILL');
      const killed = performance.now();
      const write = (async () => {
        // Each attempt waits inside the node until a leader takes it (or --write-timeout).
        for (;;) {
          const r = await post(c.url(survivors[k % 2]!), `/indexes/failover/documents`, [{ id: k }]).catch(() => null);
          if (r?.status === 202) return performance.now() - killed;
          await r?.arrayBuffer();
        }
      })();
      for (;;) {
        const seen = await Promise.all(survivors.map((i) => leaderSeenBy(c, i, c.ids[old]!)));
        if (seen.some(Boolean)) break;
        await sleep(10);
      }
      toLeader.push(performance.now() - killed);
      toWrite.push(await write);
      await c.restart(old);
    }
  } finally {
    await c.stop();
  }
  console.log(`leader kills: ${KILLS}`);
  console.log(`  time to a new leader:        p50 ${ms(pct(toLeader, 50))}, p99 ${ms(pct(toLeader, 99))}, max ${ms(Math.max(...toLeader))}`);
  console.log(`  time to first accepted write: p50 ${ms(pct(toWrite, 50))}, p99 ${ms(pct(toWrite, 99))}, max ${ms(Math.max(...toWrite))}`);
}

let smallSeq = 0;

/**
 * Latencies of one-document writes to `url` (after 20 to warm up): `count` back to back (each
 * write then competes with the indexing of the previous ones on every node), or one every
 * `gapMs` (the latency of a write reaching an idle cluster).
 */
async function smallWrites(url: string, count: number, gapMs = 0): Promise<number[]> {
  const lat: number[] = [];
  for (let k = 0; k < count + 20; k++) {
    const id = smallSeq++;
    const t0 = performance.now();
    const r = await post(url, '/indexes/small/documents', [{ id, text: `small write ${id}` }]);
    if (r.status !== 202) throw new Error(`write answered ${r.status}`);
    await r.arrayBuffer();
    if (k >= 20) lat.push(performance.now() - t0);
    if (gapMs > 0) await sleep(gapMs);
  }
  return lat;
}

function latLine(what: string, lat: number[]): string {
  return `${what.padEnd(44)} p50 ${ms(pct(lat, 50))}, p99 ${ms(pct(lat, 99))}`;
}

async function benchFollowerWrites(): Promise<void> {
  // The same writes to a single node first: the baseline on this machine, under its current load.
  const dir = tempDir('trine-bench-writes-');
  const single = await spawnNode([], dir);
  try {
    console.log(latLine('small writes, single node, back to back:', await smallWrites(single.url, 200)));
    console.log(latLine('small writes, single node, one per 100 ms:', await smallWrites(single.url, 100, 100)));
  } finally {
    await single.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
  const c = await TestCluster.start();
  try {
    const lead = await c.waitForLeader();
    const follower = [0, 1, 2].find((i) => i !== lead)!;
    console.log(latLine('small writes to the leader, back to back:', await smallWrites(c.url(lead), 200)));
    console.log(latLine('small writes via a follower, back to back:', await smallWrites(c.url(follower), 200)));
    console.log(latLine('small writes via a follower, one per 100 ms:', await smallWrites(c.url(follower), 100, 100)));
  } finally {
    await c.stop();
  }
}

// The load generator shares the machine's two cores with the servers it measures: it uses
// node:http on kept-alive sockets with bodies encoded once and answers left unparsed, which
// costs a fraction of what fetch costs per request and leaves the servers that CPU.
const agent = new Agent({ keepAlive: true, maxSockets: 64 });
// What fetch, hence the official client, asks for: the servers compress as they would for it.
const ACCEPT = { 'accept-encoding': 'gzip, deflate' };

function httpRead(url: string, method: string, path: string, body: Buffer | null): Promise<boolean> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request(
      { host: u.hostname, port: u.port, method, path, agent, headers: { ...ACCEPT, ...(body ? { 'content-type': 'application/json', 'content-length': body.length } : {}) } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
        res.on('error', () => resolve(false));
      },
    );
    req.on('error', () => resolve(false));
    req.end(body ?? undefined);
  });
}

/** Resolves with whether the read succeeded (200). */
type Reader = (url: string, i: number) => Promise<boolean>;

/** Cores the load generator itself used during the last measured phase. */
let generatorCpu = 0;

/**
 * Successful requests per second of `clients` concurrent loops over `seconds`, after as long a
 * pause (background work after an import settles) and 2 s of warm-up; throws on failures.
 */
async function throughput(url: string, read: Reader, clients: number, seconds: number): Promise<number> {
  await sleep(seconds * 1000);
  const warm = performance.now() + 2000;
  await Promise.all(
    Array.from({ length: clients }, async (_, w) => {
      for (let i = w; performance.now() < warm; i += clients) await read(url, i);
    }),
  );
  const end = performance.now() + seconds * 1000;
  const cpu0 = process.cpuUsage();
  let n = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, w) => {
      for (let i = w; performance.now() < end; i += clients) {
        if (await read(url, i)) n++;
        else failed++;
      }
    }),
  );
  if (failed > 0) throw new Error(`${failed} of ${n + failed} reads failed against ${url}`);
  const cpu = process.cpuUsage(cpu0);
  generatorCpu = (cpu.user + cpu.system) / 1e6 / seconds;
  return n / seconds;
}

async function benchReads(docs: SynsetDoc[]): Promise<void> {
  const sample = docs.slice(0, Math.min(docs.length, 20_000));
  const random = rng(7);
  const ids = pick(sample, 2000, random).map((d) => d.id);
  const words = pick(sample, 2000, random).map((d) => d.word.split(' ')[0]!);
  const dir = tempDir('trine-bench-read-');
  let single: NodeProcess | null = null;
  let c: TestCluster | null = null;
  let lb: Balancer | null = null;
  try {
    single = await spawnNode([], dir);
    // One request, hence one batch on every node: the same index structure everywhere.
    const t = await importDocs(single.url, sample, sample.length);
    await waitTask(single.url, t.last);
    // Unknown routes answer an empty 404; a search route answers something else.
    const probe = await post(single.url, `/indexes/${INDEX}/search`, { q: words[0] });
    const search = !(probe.status === 404 && (await probe.text()) === '');
    const bodies = words.map((w) => Buffer.from(JSON.stringify({ q: w, limit: 10 })));
    const read: Reader = search
      ? (url, i) => httpRead(url, 'POST', `/indexes/${INDEX}/search`, bodies[i % bodies.length]!)
      : (url, i) => httpRead(url, 'GET', `/indexes/${INDEX}/documents/${ids[i % ids.length]}`, null);
    const what = search ? 'searches' : 'document reads (GET /indexes/{uid}/documents/{id}; no search route yet)';
    const one = await throughput(single.url, read, READ_CLIENTS, READ_SECONDS);
    const oneCpu = generatorCpu;
    // The load balancer's own cost, with the single node as its only server.
    const lb1 = await startHaproxy([Number(new URL(single.url).port)]);
    const oneLb = await throughput(lb1.url, read, READ_CLIENTS, READ_SECONDS).finally(() => lb1.stop());
    await single.kill('SIGKILL');
    single = null;

    c = await TestCluster.start();
    const lead = await c.waitForLeader();
    const ct = await importDocs(c.url(lead), sample, sample.length);
    for (const i of [0, 1, 2]) await waitTask(c.url(i), ct.last);
    lb = await startHaproxy([0, 1, 2].map((i) => Number(new URL(c!.url(i)).port)));
    const three = await throughput(lb.url, read, READ_CLIENTS, READ_SECONDS);
    const threeCpu = generatorCpu;
    console.log(`${what}, ${READ_CLIENTS} clients, ${sample.length} docs:`);
    console.log(`  one node:              ${one.toFixed(0)}/s (the load generator used ${oneCpu.toFixed(2)} cores)`);
    console.log(`  one node + HAProxy:    ${oneLb.toFixed(0)}/s`);
    console.log(`  three nodes + HAProxy: ${three.toFixed(0)}/s (${(three / one).toFixed(2)}x; the load generator used ${threeCpu.toFixed(2)} cores)`);
  } finally {
    await lb?.stop();
    await c?.stop();
    await single?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runClusterBench(): Promise<void> {
  console.log(`machine: ${cpus().length} cores, load average ${loadavg()[0]!.toFixed(1)} at start`);
  const all = loadSynsets();
  const docs = Number.isFinite(DOCS) ? all.slice(0, DOCS) : all;
  const phases = new Set((process.env['BENCH_PHASES'] ?? 'import,writes,failover,reads,overhead,pinned,readcpu,importload').split(','));
  if (phases.has('import')) await benchImport(docs);
  if (phases.has('overhead')) await benchOverhead(docs);
  if (phases.has('pinned')) await benchPinned(docs);
  if (phases.has('readcpu')) await benchReadCpu(docs);
  if (phases.has('importload')) await benchImportLoad();
  if (phases.has('writes')) await benchFollowerWrites();
  if (phases.has('failover')) await benchFailover();
  if (phases.has('reads')) await benchReads(docs);
}
