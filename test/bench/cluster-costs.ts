// What replication costs, measured in ways a 2-core machine can answer (see cluster.ts):
//   overhead   CPU-seconds of a replicated import on the three nodes against three times a
//              single node's (alone, and three single nodes importing side by side, which
//              share the cores the way the three cluster nodes do; BENCH_OVERHEAD_ROUNDS rounds);
//   pinned     docs/s of the leader pinned to one core (taskset) with both followers on the
//              other, against a single node pinned to one core (BENCH_PINNED_ROUNDS rounds);
//   readcpu    CPU time per search on a follower with consistent reads and with stale reads,
//              against a single node, at 1 and BENCH_READ_CPU_CLIENTS concurrent clients; the
//              three are measured in turns, with the cluster and the single node both up, and
//              what the processes use while idle is subtracted;
//   importload leader changes, event-loop stalls and search latency (through HAProxy, one
//              search every 50 ms) while BENCH_IMPORT_BATCHES batches of 20k documents are
//              imported through HAProxy one after another, with consistent and with stale reads
//              (BENCH_IMPORT_READS picks).

import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { request, Agent } from 'node:http';
import { TestCluster } from '../helpers/cluster.js';
import { startHaproxy } from '../helpers/haproxy.js';
import { spawnNode, tempDir, type NodeProcess } from '../helpers/node.js';
import { pick, rng, type SynsetDoc } from './wordnet.js';

const INDEX = 'wordnet';
const CHUNK = 10_000;
const READ_SECONDS = Number(process.env['BENCH_READ_CPU_SECONDS'] ?? 5);
const READ_CLIENTS = Number(process.env['BENCH_READ_CPU_CLIENTS'] ?? 16);
const IMPORT_BATCHES = Number(process.env['BENCH_IMPORT_BATCHES'] ?? 20);
// Rounds of one build move from 66% to 123% (pinned) and from 0.91 to 1.35 (overhead) on this
// machine: the median of five moves less than that of three.
const PINNED_ROUNDS = Number(process.env['BENCH_PINNED_ROUNDS'] ?? 5);
const OVERHEAD_ROUNDS = Number(process.env['BENCH_OVERHEAD_ROUNDS'] ?? 5);
/** Seconds of idling measured, to subtract what the nodes use without searches. */
const IDLE_SECONDS = 3;
/** Turns each read figure is measured in, alternating with the others. */
const READ_ROUNDS = 3;
const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU-seconds (user + system, every thread) a process has used so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of proc(5), counted from the state (field 3).
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

const pidOf = (n: NodeProcess) => n.proc.pid!;

/** Pins every thread of a process to the given cores. */
function pin(pid: number, cores: string): void {
  execFileSync('taskset', ['-a', '-cp', cores, String(pid)], { stdio: 'ignore' });
}

function pct(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

/** `docs` as JSON bodies of `chunk` documents, each serialized when it is asked for. */
function* chunkBodies(docs: object[], chunk = CHUNK): Generator<string> {
  for (let i = 0; i < docs.length; i += chunk) yield JSON.stringify(docs.slice(i, i + chunk));
}

/** Posts JSON bodies of documents one after another; resolves with the last task uid. */
async function importBodies(url: string, bodies: Iterable<string>, index = INDEX): Promise<number> {
  let last = -1;
  for (const body of bodies) {
    const r = await fetch(`${url}/indexes/${index}/documents`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    if (r.status !== 202) throw new Error(`import answered ${r.status}: ${await r.text()}`);
    last = ((await r.json()) as { taskUid: number }).taskUid;
  }
  return last;
}

/** Posts `docs` in chunks; resolves with the last task uid. */
function importDocs(url: string, docs: object[], index = INDEX, chunk = CHUNK): Promise<number> {
  return importBodies(url, chunkBodies(docs, chunk), index);
}

/** Waits until task `uid` succeeded on the node at `url` (polling it every 50 ms). */
async function processed(url: string, uid: number, headers: Record<string, string> = {}): Promise<number> {
  for (;;) {
    const r = await fetch(`${url}/tasks/${uid}`, { headers }).catch(() => null);
    if (r?.ok) {
      const t = (await r.json()) as { status: string; error: unknown };
      if (t.status === 'failed') throw new Error(`task ${uid} failed on ${url}: ${JSON.stringify(t.error)}`);
      if (t.status === 'succeeded') return performance.now();
    } else await r?.arrayBuffer();
    await sleep(50);
  }
}

async function withSingles<T>(count: number, flags: string[], fn: (nodes: NodeProcess[]) => Promise<T>): Promise<T> {
  const dirs = Array.from({ length: count }, () => tempDir('trine-bench-cost-'));
  const nodes: NodeProcess[] = [];
  try {
    for (const d of dirs) nodes.push(await spawnNode(flags, d));
    return await fn(nodes);
  } finally {
    await Promise.all(nodes.map((n) => n.kill('SIGKILL')));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

async function withCluster<T>(flags: string[], fn: (c: TestCluster, lead: number) => Promise<T>): Promise<T> {
  const c = await TestCluster.start({ flags });
  try {
    return await fn(c, await c.waitForLeader());
  } finally {
    await c.stop();
  }
}

/** The round whose `ratio` is the median (the upper of the two middle ones for an even count). */
function medianRound<T>(rounds: readonly T[], ratio: (r: T) => number): T {
  return [...rounds].sort((a, b) => ratio(a) - ratio(b))[Math.floor(rounds.length / 2)]!;
}

export async function benchOverhead(docs: SynsetDoc[]): Promise<void> {
  // Every node is polled for the last task alike, with local reads: a consistent read on a
  // follower would add its read index round trips to what is measured.
  const stale = { 'Trine-Read-Consistency': 'stale' };
  /** CPU-seconds each of `nodes` used while `work` ran. */
  const cpuDuring = async (nodes: NodeProcess[], work: () => Promise<unknown>) => {
    const before = nodes.map((n) => cpuSeconds(pidOf(n)));
    await work();
    return nodes.map((n, i) => cpuSeconds(pidOf(n)) - before[i]!);
  };
  const importCpu = (nodes: NodeProcess[]) =>
    cpuDuring(nodes, async () => {
      const lasts = await Promise.all(nodes.map((n) => importDocs(n.url, docs)));
      await Promise.all(nodes.map((n, i) => processed(n.url, lasts[i]!, stale)));
    });
  const clusterCpu = () =>
    withCluster([], (c, lead) =>
      cpuDuring([0, 1, 2].map((i) => c.nodes[i]!), async () => {
        const last = await importDocs(c.url(lead), docs);
        await Promise.all([0, 1, 2].map((i) => processed(c.url(i), last, stale)));
      }),
    );
  // The same import's CPU moves by a fifth between runs on this machine (batching follows
  // arrival times): the three alternate, each round's ratios are taken back to back, and the
  // median round counts.
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  const rounds: { single: number; side: number[]; cluster: number[] }[] = [];
  for (let r = 0; r < OVERHEAD_ROUNDS; r++) {
    const [single] = await withSingles(1, [], importCpu);
    const side = await withSingles(3, [], importCpu);
    rounds.push({ single: single!, side, cluster: await clusterCpu() });
  }
  console.log(`replication overhead, import of ${docs.length} docs (CPU-seconds of the node processes, every thread; ${OVERHEAD_ROUNDS} rounds):`);
  for (const [i, r] of rounds.entries()) {
    const total = sum(r.cluster);
    console.log(
      `  round ${i + 1}: single node alone ${r.single.toFixed(1)} (3 x = ${(3 * r.single).toFixed(1)}); three side by side ${sum(r.side).toFixed(1)} (${r.side.map((x) => x.toFixed(1)).join(' + ')}); ` +
        `cluster ${total.toFixed(1)} (${r.cluster.map((x) => x.toFixed(1)).join(' + ')}): ${(total / (3 * r.single)).toFixed(2)} x 3 x single alone, ${(total / sum(r.side)).toFixed(2)} x side by side`,
    );
  }
  const ratio = (r: (typeof rounds)[number]) => sum(r.cluster) / (3 * r.single);
  const mid = medianRound(rounds, ratio);
  console.log(`  median round: cluster / (3 x single alone) = ${ratio(mid).toFixed(2)}, cluster / (three side by side) = ${(sum(mid.cluster) / sum(mid.side)).toFixed(2)}   target <= 1.10`);
}

export async function benchPinned(docs: SynsetDoc[]): Promise<void> {
  const tasks = Math.ceil(docs.length / CHUNK);
  // The load generator keeps off the core under test: it runs on core 1 in both runs (beside
  // the followers in the cluster's), with its bodies serialized beforehand. Left to the
  // scheduler, it took the idle core 1 beside a single node but part of the leader's core 0
  // in the cluster, where core 1 is busy.
  const bodies = [...chunkBodies(docs)];
  pin(process.pid, '1');
  const pinnedSingle = () =>
    withSingles(1, [], async ([n]) => {
      pin(pidOf(n!), '0');
      const start = performance.now();
      await importBodies(n!.url, bodies);
      return (docs.length / ((await finishedAt(n!.url, tasks)) - start)) * 1000;
    });
  const pinnedCluster = () =>
    withCluster([], async (c, lead) => {
      for (const i of [0, 1, 2]) pin(pidOf(c.nodes[i]!), i === lead ? '0' : '1');
      const start = performance.now();
      const last = await importBodies(c.url(lead), bodies);
      // Processed by the leader (its own counter), then reported finished (once the followers have it too).
      const onLeader = await finishedAt(c.url(lead), tasks);
      const seen = await processed(c.url(lead), last);
      return [docs.length / ((onLeader - start) / 1000), docs.length / ((seen - start) / 1000)] as const;
    });
  // The same import varies by a quarter between runs on this shared machine: single node and
  // cluster alternate, each round's ratio is taken back to back, and the median round counts.
  const rounds: { single: number; leader: number; reported: number }[] = [];
  try {
    for (let r = 0; r < PINNED_ROUNDS; r++) {
      const single = await pinnedSingle();
      const [leader, reported] = await pinnedCluster();
      rounds.push({ single, leader, reported });
    }
  } finally {
    pin(process.pid, '0,1');
  }
  const pctOf = (x: number, of: number) => `${((100 * x) / of).toFixed(0)}%`;
  console.log(`pinned with taskset (${docs.length} docs; ${PINNED_ROUNDS} rounds, single node then cluster in each):`);
  for (const [i, r] of rounds.entries()) {
    console.log(
      `  round ${i + 1}: single node on core 0 ${r.single.toFixed(0)} docs/s; leader on core 0, followers on core 1: processed by the leader at ${r.leader.toFixed(0)} docs/s (${pctOf(r.leader, r.single)}), reported finished at ${r.reported.toFixed(0)} docs/s (${pctOf(r.reported, r.single)})`,
    );
  }
  const mid = medianRound(rounds, (r) => r.leader / r.single);
  console.log(`  median round: leader at ${pctOf(mid.leader, mid.single)} of single   target >= 80%; reported finished (the followers, sharing a core, have it too) at ${pctOf(mid.reported, mid.single)}`);
}

const agent = new Agent({ keepAlive: true, maxSockets: 64 });

/** A search's status, and its answer when `keepBody` (the load loops skip reading it). */
function searchRequest(url: string, body: Buffer, index: string, headers: Record<string, string>, keepBody: boolean): Promise<{ status: number; answer: Buffer | null }> {
  const u = new URL(url);
  return new Promise((resolve) => {
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        method: 'POST',
        path: `/indexes/${index}/search`,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length, ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        if (keepBody) res.on('data', (c: Buffer) => chunks.push(c));
        else res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, answer: keepBody ? Buffer.concat(chunks) : null }));
        res.on('error', () => resolve({ status: 0, answer: null }));
      },
    );
    req.on('error', () => resolve({ status: 0, answer: null }));
    req.end(body);
  });
}

async function search(url: string, body: Buffer, index = INDEX, headers: Record<string, string> = {}): Promise<number> {
  return (await searchRequest(url, body, index, headers, false)).status;
}

/** A search's status and the `processingTimeMs` its node reported (NaN without one). */
async function timedSearch(url: string, body: Buffer, index: string): Promise<{ status: number; engineMs: number }> {
  const { status, answer } = await searchRequest(url, body, index, {}, true);
  let engineMs = NaN;
  try {
    engineMs = Number((JSON.parse(answer!.toString()) as { processingTimeMs?: number }).processingTimeMs ?? NaN);
  } catch {
    // not a search answer (an error page, or none): no engine time
  }
  return { status, engineMs };
}

/** Searches done by `clients` loops for `seconds`, and the CPU-seconds each of `pids` used meanwhile. */
async function searchLoad(
  url: string,
  bodies: Buffer[],
  clients: number,
  seconds: number,
  pids: number[],
  headers: Record<string, string> = {},
): Promise<{ n: number; cpu: number[] }> {
  const before = pids.map(cpuSeconds);
  const end = performance.now() + seconds * 1000;
  let n = 0;
  let failed = 0;
  await Promise.all(
    Array.from({ length: clients }, async (_, w) => {
      for (let i = w; performance.now() < end; i += clients) {
        if ((await search(url, bodies[i % bodies.length]!, INDEX, headers)) === 200) n++;
        else failed++;
      }
    }),
  );
  if (failed > 0) throw new Error(`${failed} searches failed against ${url}`);
  return { n, cpu: pids.map((p, i) => cpuSeconds(p) - before[i]!) };
}

/** CPU-seconds per second each process uses with no searches (Raft heartbeats, timers). */
async function idleRates(pids: number[]): Promise<number[]> {
  const from = pids.map(cpuSeconds);
  await sleep(IDLE_SECONDS * 1000);
  return pids.map((p, i) => (cpuSeconds(p) - from[i]!) / IDLE_SECONDS);
}

/**
 * A single node and a three-node cluster side by side, loaded in turns (single, follower with
 * consistent reads, follower with stale reads: the Trine-Read-Consistency header picks), so
 * that the machine's other load weighs on each alike. What each process uses idle is subtracted.
 */
export async function benchReadCpu(docs: SynsetDoc[]): Promise<void> {
  const sample = docs.slice(0, Math.min(docs.length, 20_000));
  const words = pick(sample, 2000, rng(11)).map((d) => d.word.split(' ')[0]!);
  const bodies = words.map((w) => Buffer.from(JSON.stringify({ q: w, limit: 10 })));
  const levels = [...new Set([1, READ_CLIENTS])];
  const rows: string[] = [];
  await withSingles(1, [], async ([single]) =>
    withCluster([], async (c, lead) => {
      await processed(single!.url, await importDocs(single!.url, sample, INDEX, sample.length));
      const last = await importDocs(c.url(lead), sample, INDEX, sample.length);
      await Promise.all([0, 1, 2].map((i) => processed(c.url(i), last)));
      const follower = [0, 1, 2].find((i) => i !== lead)!;
      const other = [0, 1, 2].find((i) => i !== lead && i !== follower)!;
      const clusterPids = [follower, lead, other].map((i) => pidOf(c.nodes[i]!));
      const singleIdle = (await idleRates([pidOf(single!)]))[0]!;
      const clusterIdle = await idleRates(clusterPids);
      const runs: { name: string; url: string; pids: number[]; idle: number[]; headers: Record<string, string> }[] = [
        { name: 'single node', url: single!.url, pids: [pidOf(single!)], idle: [singleIdle], headers: {} },
        { name: 'follower, consistent reads', url: c.url(follower), pids: clusterPids, idle: clusterIdle, headers: { 'Trine-Read-Consistency': 'consistent' } },
        { name: 'follower, stale reads', url: c.url(follower), pids: clusterPids, idle: clusterIdle, headers: { 'Trine-Read-Consistency': 'stale' } },
      ];
      for (const clients of levels) {
        const totals = runs.map((r) => ({ n: 0, cpu: r.pids.map(() => 0), seconds: 0 }));
        for (let round = 0; round < READ_ROUNDS; round++) {
          for (const [k, r] of runs.entries()) {
            await searchLoad(r.url, bodies, clients, 0.5, [], r.headers);
            const got = await searchLoad(r.url, bodies, clients, READ_SECONDS / READ_ROUNDS, r.pids, r.headers);
            totals[k]!.n += got.n;
            totals[k]!.seconds += READ_SECONDS / READ_ROUNDS;
            got.cpu.forEach((x, i) => (totals[k]!.cpu[i]! += Math.max(0, x - r.idle[i]! * (READ_SECONDS / READ_ROUNDS))));
          }
        }
        const perSearch = totals.map((t) => t.cpu.map((x) => (x * 1e6) / Math.max(1, t.n)));
        const base = perSearch[0]![0]!;
        for (const [k, r] of runs.entries()) {
          const [mine, leader, third] = perSearch[k]!;
          const rate = totals[k]!.n / totals[k]!.seconds;
          const extra = k === 0 ? '' : `, + ${leader!.toFixed(0)} us on the leader + ${third!.toFixed(0)} us on the other follower`;
          rows.push(`  ${String(clients).padStart(2)} clients, ${r.name.padEnd(27)} ${mine!.toFixed(0).padStart(5)} us per search (${(mine! / base).toFixed(2)}x single)${extra}; ${rate.toFixed(0)}/s`);
        }
      }
    }),
  );
  console.log(`CPU per search (${sample.length} docs, ${READ_SECONDS} s per figure in ${READ_ROUNDS} turns), target: follower with consistent reads <= 1.10x single:`);
  for (const r of rows) console.log(r);
}

/**
 * When a node had processed `tasks` tasks, by its own counter. Both sides of a comparison poll
 * alike, and seldom enough (rendering /metrics costs the node a fraction of a millisecond).
 */
async function finishedAt(url: string, tasks: number): Promise<number> {
  while ((await metricSum(url, 'trine_tasks_finished_total')) < tasks) await sleep(100);
  return performance.now();
}

/** The sum of a metric's samples in a node's /metrics. */
async function metricSum(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  let sum = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))) sum += Number(m[1]);
  return sum;
}

/** A Prometheus sample from a node's /metrics. */
async function metric(url: string, name: string): Promise<number> {
  return (await metrics(url, [name]))[0]!;
}

/**
 * Prometheus samples from one read of a node's /metrics. The event-loop maximum restarts at
 * every read: read apart, it would cover only the moment since the previous read.
 */
async function metrics(url: string, names: string[]): Promise<number[]> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return names.map((name) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
    return m ? Number(m[1]) : NaN;
  });
}

export async function benchImportLoad(): Promise<void> {
  for (const mode of (process.env['BENCH_IMPORT_READS'] ?? 'consistent,stale').split(',')) await importLoad(mode);
}

async function importLoad(mode: string): Promise<void> {
  await withCluster(['--read-consistency', mode], async (c) => {
    const lb = await startHaproxy(c.ports());
    try {
      await importDocs(lb.url, [{ id: 0, text: 'warm up' }], 'load');
      // Reset each node's event-loop maximum (prom-client restarts it at every scrape).
      for (const i of [0, 1, 2]) await metric(c.url(i), 'trine_nodejs_eventloop_lag_max_seconds');
      const changes0 = await Promise.all([0, 1, 2].map((i) => metric(c.url(i), 'trine_raft_leader_changes_total')));
      let importing = true;
      const latencies: number[] = [];
      // What the answering node spent on the search itself (processingTimeMs, which includes a
      // consistent read's wait), apart from the time the request waited to be taken up.
      const engine: number[] = [];
      let failed = 0;
      const silence = [0, 0, 0];
      const searcher = (async () => {
        const body = Buffer.from(JSON.stringify({ q: 'document words', limit: 10 }));
        while (importing) {
          const t0 = performance.now();
          const { status, engineMs } = await timedSearch(lb.url, body, 'load');
          if (status === 200 || status === 404) latencies.push(performance.now() - t0);
          else failed++;
          if (Number.isFinite(engineMs)) engine.push(engineMs);
          await sleep(50);
        }
      })();
      const watchers = [0, 1, 2].map(async (i) => {
        while (importing) {
          const t0 = performance.now();
          await fetch(`${c.url(i)}/cluster`).catch(() => null);
          silence[i] = Math.max(silence[i]!, performance.now() - t0);
          await sleep(100);
        }
      });
      const start = performance.now();
      for (let b = 0; b < IMPORT_BATCHES; b++) {
        const docs = Array.from({ length: 20_000 }, (_, i) => ({ id: b * 20_000 + i, text: `document ${i} of batch ${b} with a handful of ordinary words` }));
        const last = await importDocs(lb.url, docs, 'load', 20_000);
        await processed(lb.url, last);
      }
      const seconds = (performance.now() - start) / 1000;
      importing = false;
      await Promise.all([searcher, ...watchers]);
      const read = await Promise.all([0, 1, 2].map((i) => metrics(c.url(i), ['trine_raft_leader_changes_total', 'trine_nodejs_eventloop_lag_max_seconds'])));
      const changes = read.map(([x]) => x!);
      const stalls = read.map(([, x]) => x!);
      const lc = Math.max(...changes.map((x, i) => x - changes0[i]!));
      console.log(`${mode} reads, during an import of ${IMPORT_BATCHES} x 20k docs through HAProxy (${seconds.toFixed(0)} s, ${((IMPORT_BATCHES * 20_000) / seconds).toFixed(0)} docs/s), one search every 50 ms through HAProxy:`);
      console.log(`  search latency p50 ${pct(latencies, 50).toFixed(0)} ms, p99 ${pct(latencies, 99).toFixed(0)} ms, max ${Math.max(...latencies).toFixed(0)} ms; ${failed} of ${latencies.length + failed} failed`);
      if (engine.length > 0) console.log(`  of which in the answering node's search (processingTimeMs): p50 ${pct(engine, 50).toFixed(0)} ms, p99 ${pct(engine, 99).toFixed(0)} ms, max ${Math.max(...engine).toFixed(0)} ms`);
      console.log(`  leader changes: ${lc}   target 0`);
      console.log(`  longest event-loop stall per node: ${stalls.map((s) => `${(s * 1000).toFixed(0)} ms`).join(', ')}; longest GET /cluster per node: ${silence.map((s) => `${s.toFixed(0)} ms`).join(', ')}`);
    } finally {
      await lb.stop();
    }
  });
}
