// The `embed` benchmark: local models (`hubModel`) on this machine's CPU. Generated models
// of the shapes of bge-small-en-v1.5 and bge-base-en-v1.5 (random weights), documents of 60
// tokens. Prints, per shape, documents embedded per second through the embedder (in chunks
// of 64, as indexing sends them) and the longest event-loop stall meanwhile; then the wall
// time to index documents with the small shape through the HTTP API of a node running as
// its own process (the model fetched from a local hub server), with search latencies on
// that node while it embeds.

import { rmSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { EMBED_CHUNK } from '../../src/engine/vector/embedding-source.js';
import { hubModelEmbedder } from '../../src/engine/vector/hub-model/hub-embedder.js';
import { closeModelWorkers } from '../../src/engine/vector/hub-model/model-worker.js';
import { BGE_BASE, BGE_SMALL, modelFiles, textOfTokens, writeModel, type ModelShape } from '../helpers/hub-model.js';
import { startHubServer } from '../helpers/hub-server.js';
import { spawnNode, tempDir } from '../helpers/node.js';

const SMALL_DOCS = Number(process.env['BENCH_EMBED_DOCS'] ?? 512);
const BASE_DOCS = Number(process.env['BENCH_EMBED_BASE_DOCS'] ?? 128);
const API_DOCS = Number(process.env['BENCH_EMBED_API_DOCS'] ?? 10_000);
const TOKENS = 60;

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

const ms = (ns: number) => (ns / 1e6).toFixed(1);

/**
 * The event loop's delays while this process does nothing: on a machine shared with other
 * work, the scheduler alone makes stalls; the figures while embedding compare with these.
 */
async function idleStalls(durationMs: number): Promise<string> {
  const h = monitorEventLoopDelay({ resolution: 5 });
  h.enable();
  await new Promise((r) => setTimeout(r, durationMs));
  h.disable();
  return `idle for ${durationMs / 1000} s just before: longest ${ms(h.max)} ms, p99 ${ms(h.percentile(99))} ms`;
}

async function throughput(name: string, shape: ModelShape, docs: number): Promise<void> {
  const dir = tempDir(`trine-bench-embed-${name}-`);
  try {
    writeModel(dir, shape);
    const e = hubModelEmbedder({ source: 'hubModel', model: dir }, { dir, endpoint: 'http://127.0.0.1:9' });
    let t0 = performance.now();
    await e.embed([textOfTokens(shape, TOKENS, 0)]);
    const load = performance.now() - t0;
    const texts = Array.from({ length: docs }, (_, i) => textOfTokens(shape, TOKENS, i + 1));
    const idle = await idleStalls(10_000);
    const stall = monitorEventLoopDelay({ resolution: 5 });
    stall.enable();
    t0 = performance.now();
    for (let i = 0; i < texts.length; i += EMBED_CHUNK) await e.embed(texts.slice(i, i + EMBED_CHUNK));
    const secs = (performance.now() - t0) / 1000;
    stall.disable();
    console.log(
      `embed: ${name} (${shape.layers} layers, hidden ${shape.hidden}): ${docs} docs of ${TOKENS} tokens in ${secs.toFixed(1)} s = ${(docs / secs).toFixed(1)} docs/s; ` +
        `longest event-loop stall ${ms(stall.max)} ms (p99 ${ms(stall.percentile(99))} ms; ${idle}); model loaded in ${(load / 1000).toFixed(1)} s`,
    );
  } finally {
    await closeModelWorkers();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function throughApi(shape: ModelShape, docs: number): Promise<void> {
  const hub = await startHubServer();
  hub.models.set('bench/bge-small-shape', modelFiles(shape));
  const dir = tempDir('trine-bench-embed-api-');
  const node = await spawnNode(['--hub-endpoint', hub.url], dir);
  const call = async (path: string, body?: unknown, method = 'POST') => {
    const r = await fetch(node.url + path, { method, ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }) });
    return (await r.json()) as Record<string, any>;
  };
  const task = async (uid: number) => {
    for (;;) {
      const t = await call(`/tasks/${uid}`, undefined, 'GET');
      if (t['status'] === 'succeeded') return;
      if (t['status'] === 'failed') throw new Error(JSON.stringify(t['error']));
      await new Promise((r) => setTimeout(r, 200));
    }
  };
  try {
    await task((await call('/indexes/docs/settings', { embedders: { m: { source: 'huggingFace', model: 'bench/bge-small-shape', documentTemplate: '{{doc.text}}' } } }, 'PATCH'))['taskUid']);
    const t0 = performance.now();
    let last = 0;
    for (let i = 0; i < docs; i += 1000) {
      const batch = Array.from({ length: Math.min(1000, docs - i) }, (_, j) => ({ id: i + j, text: textOfTokens(shape, TOKENS, i + j) }));
      last = (await call('/indexes/docs/documents', batch))['taskUid'];
    }
    // Meanwhile, searches and task polls on the same node, each timed.
    const latencies: number[] = [];
    let finished = false;
    const done = task(last).finally(() => (finished = true));
    while (!finished) {
      const s0 = performance.now();
      await call('/indexes/docs/search', { q: 'w42', limit: 3 });
      await call(`/tasks/${last}`, undefined, 'GET');
      latencies.push((performance.now() - s0) / 2);
      await new Promise((r) => setTimeout(r, 50));
    }
    await done;
    const secs = (performance.now() - t0) / 1000;
    console.log(
      `embed: ${docs} docs through the API with the bge-small shape (model fetched from a local hub on first use) in ${secs.toFixed(1)} s = ${(docs / secs).toFixed(1)} docs/s; ` +
        `search and task poll meanwhile: p50 ${percentile(latencies, 50).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${Math.max(...latencies).toFixed(1)} ms over ${latencies.length}`,
    );
  } finally {
    await node.kill();
    await hub.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function runEmbedBench(): Promise<void> {
  await throughput('bge-small shape', BGE_SMALL, SMALL_DOCS);
  await throughput('bge-base shape', BGE_BASE, BASE_DOCS);
  if (API_DOCS > 0) await throughApi(BGE_SMALL, API_DOCS);
}

