// The `vectors` benchmark: 100 000 generated 384-dimension vectors (a seeded mixture of
// 1 000 clusters, each point at cosine ~0.93 from its centre, like sentence embeddings of
// topical documents; `BENCH_NOISE` raises the spread) indexed over HTTP as
// user-provided embeddings into a node running as its own process; then build time (tasks
// done and the graph complete, read from the node's `trine_vector_graph_pending_vectors`),
// query latency over HTTP (semantic search, limit 10) and recall@10 against an exact scan;
// then a `kill -9` and restart, timed until the node answers and until its graph is complete
// again (read back from the copy saved once it was built, or linked anew without one).

import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { spawnNode, tempDir } from '../helpers/node.js';

const N = Number(process.env['BENCH_VECTORS'] ?? 100_000);
const DIMS = 384;
const QUERIES = Number(process.env['BENCH_QUERIES'] ?? 200);
const BATCH = 5_000;
/** Per-dimension noise around a cluster centre (0.06 makes the data nearly isotropic: much harder). */
const NOISE = Number(process.env['BENCH_NOISE'] ?? 0.02);

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gaussian(r: () => number): number {
  return Math.sqrt(-2 * Math.log(1 - r())) * Math.cos(2 * Math.PI * r());
}

function unit(v: Float32Array): Float32Array {
  let n = 0;
  for (const x of v) n += x * x;
  const inv = 1 / Math.sqrt(n);
  return v.map((x) => x * inv);
}

/** Points around 1 000 centres; queries are drawn the same way. */
function generator(seed: number) {
  const r = rng(seed);
  const centres = Array.from({ length: 1000 }, () => unit(Float32Array.from({ length: DIMS }, () => gaussian(r))));
  return () => {
    const c = centres[Math.floor(r() * centres.length)]!;
    // Rounded to 4 decimals: what goes over the wire is what is stored.
    return Float32Array.from(c, (x) => Math.round((x + gaussian(r) * NOISE) * 1e4) / 1e4);
  };
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Vectors the node has not linked into its graph yet, from its metrics. */
async function graphPending(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const m = /^trine_vector_graph_pending_vectors\{index="vectors"\} (\d+)/m.exec(text);
  return m ? Number(m[1]) : Infinity;
}

export async function runVectorBench(): Promise<void> {
  // The server runs as its own process, as in production: the load generator's work does
  // not land on the server's event loop.
  const dir = tempDir('trine-bench-vectors-');
  let node = await spawnNode([], dir);
  const post = async (path: string, body: unknown, method = 'POST') => {
    const r = await fetch(node.url + path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return (await r.json()) as Record<string, any>;
  };
  const wait = async (uid: number) => {
    for (;;) {
      const t = (await (await fetch(`${node.url}/tasks/${uid}`)).json()) as Record<string, any>;
      if (t['status'] === 'succeeded') return;
      if (t['status'] === 'failed') throw new Error(JSON.stringify(t['error']));
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  try {
    await wait((await post('/indexes/vectors/settings', { embedders: { e: { source: 'userProvided', dimensions: DIMS } } }, 'PATCH'))['taskUid']);
    const next = generator(7);
    const vectors: Float32Array[] = [];
    const started = performance.now();
    let last = 0;
    for (let i = 0; i < N; i += BATCH) {
      const docs = [];
      for (let j = i; j < Math.min(N, i + BATCH); j++) {
        const v = next();
        vectors.push(v);
        docs.push({ id: j, _vectors: { e: Array.from(v) } });
      }
      last = (await post('/indexes/vectors/documents', docs))['taskUid'];
    }
    await wait(last);
    const indexed = performance.now();
    for (const deadline = Date.now() + 30 * 60_000; (await graphPending(node.url)) > 0; ) {
      if (Date.now() > deadline) throw new Error('the graph was not complete after 30 minutes');
      await new Promise((r) => setTimeout(r, 200));
    }
    const built = performance.now();
    console.log(`vectors: ${N} x ${DIMS} indexed in ${((indexed - started) / 1000).toFixed(1)} s, graph complete after ${((built - started) / 1000).toFixed(1)} s`);

    // The graph is saved in the background once complete (hashing every vector, writing
    // and syncing the files): queries are timed once that is done.
    const graphs = join(dir, 'vector-graphs');
    for (const deadline = Date.now() + 120_000; Date.now() < deadline; ) {
      if (existsSync(graphs) && readdirSync(graphs).some((f) => f.endsWith('.slots'))) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    if (existsSync(graphs)) console.log(`vectors: graph saved ${((performance.now() - built) / 1000).toFixed(1)} s after it was complete`);

    // Every query is timed first, then checked: the exact scans allocate heavily, and their
    // garbage collected during a later request would be timed as search latency.
    const queries = generator(99);
    const latencies: number[] = [];
    const asked: { v: Float32Array; hits: { id: number }[] }[] = [];
    for (let q = 0; q < QUERIES; q++) {
      const v = queries();
      const t0 = performance.now();
      const r = await post('/indexes/vectors/search', { vector: Array.from(v), hybrid: { embedder: 'e', semanticRatio: 1 }, limit: 10, attributesToRetrieve: ['id'] });
      latencies.push(performance.now() - t0);
      asked.push({ v, hits: r['hits'] as { id: number }[] });
    }
    const units = vectors.map(unit);
    let found = 0;
    for (const { v, hits } of asked) {
      const u = unit(v);
      const exact = units
        .map((x, id) => {
          let d = 0;
          for (let k = 0; k < DIMS; k++) d += x[k]! * u[k]!;
          return [id, d] as const;
        })
        .sort((a, b) => b[1] - a[1])
        .slice(0, 10)
        .map(([id]) => id);
      const got = new Set(hits.map((x) => x.id));
      found += exact.filter((id) => got.has(id)).length;
    }
    console.log(
      `vectors: ${QUERIES} queries over HTTP: p50 ${percentile(latencies, 50).toFixed(2)} ms, p95 ${percentile(latencies, 95).toFixed(2)} ms; recall@10 vs exact ${(found / (QUERIES * 10)).toFixed(3)}`,
    );

    await node.kill('SIGKILL');
    const k0 = performance.now();
    node = await spawnNode([], dir, node.port, 600_000);
    const up = performance.now();
    for (const deadline = Date.now() + 30 * 60_000; (await graphPending(node.url)) > 0; ) {
      if (Date.now() > deadline) throw new Error('the graph was not complete after 30 minutes');
      await new Promise((r) => setTimeout(r, 50));
    }
    const relinked = performance.now();
    console.log(`vectors: kill -9 and restart: answering after ${((up - k0) / 1000).toFixed(1)} s, graph complete after ${((relinked - k0) / 1000).toFixed(1)} s`);
  } finally {
    await node.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
}
