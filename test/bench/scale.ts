// The `scale` benchmark: BENCH_DOCS documents (a million by default, see scale-corpus.ts)
// imported over HTTP in 50 000-document NDJSON batches into one node running as its own
// process, while a client on a thread of its own searches every 50 ms and polls a task and
// /health; then memory
// settled, query latencies per kind over HTTP, and a restart after kill -9 timed to the
// first answered search.

import { rmSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import { spawnNode, tempDir } from '../helpers/node.js';
import { diskSize, misspell, pct, post, procStatus, waitTask } from './bench-util.js';
import { ScaleCorpus } from './scale-corpus.js';
import { pick, rng } from './wordnet.js';

const DOCS = Number(process.env['BENCH_DOCS'] ?? 1_000_000);
const BATCH = Number(process.env['BENCH_BATCH'] ?? 50_000);
const QUERIES = Number(process.env['BENCH_QUERIES'] ?? 300);
const INDEX = 'scale';

const mib = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;

/** Sends a search every 50 ms (and a task poll and /health) from a thread of its own until stopped; their latencies. */
function background(url: string, words: string[]): { stop(): Promise<{ search: number[]; tasks: number[]; health: number[] }> } {
  const worker = new Worker(new URL('./search-loop-thread.js', import.meta.url), { workerData: { url, index: INDEX, words } });
  return {
    async stop() {
      const done = new Promise<{ search: number[]; tasks: number[]; health: number[] }>((resolve, reject) => {
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      worker.postMessage('stop');
      const out = await done;
      await worker.terminate();
      return out;
    },
  };
}

export async function runScaleBench(): Promise<void> {
  const corpus = new ScaleCorpus();
  const r = rng(20261125);
  const sampleDocs = Array.from({ length: QUERIES }, () => Math.floor(r() * DOCS));
  const exact = sampleDocs.map((i) => corpus.definitionWords(i, 1));
  const longWords = sampleDocs.map((i) => corpus.definitionWords(i, 8).split(' ').find((w) => w.length >= 6) ?? corpus.definitionWords(i, 1));
  const kinds: { name: string; target: number; bodies: Record<string, unknown>[] }[] = [
    { name: 'exact word', target: 15, bodies: exact.map((q) => ({ q })) },
    { name: 'misspelling', target: 15, bodies: longWords.map((w) => ({ q: misspell(w.toLowerCase(), r) })) },
    { name: 'three words', target: 15, bodies: sampleDocs.map((i) => ({ q: corpus.definitionWords(i + 1, 3) })) },
    { name: '1-2-letter prefix', target: 20, bodies: pick([...'abcdefghijklmnopqrstuvwxyz', ...exact.map((w) => w.slice(0, 2))], QUERIES, r).map((q) => ({ q })) },
    {
      name: 'filter + sort',
      target: 20,
      bodies: sampleDocs.map((i) => {
        const lo = Math.floor(r() * 900);
        return { q: corpus.definitionWords(i, 1), filter: `price >= ${lo} AND price < ${lo + 100}`, sort: ['price:asc'] };
      }),
    },
  ];

  const dir = tempDir('trine-bench-scale-');
  let node = await spawnNode(['--log-level', 'error'], dir);
  const url = node.url;
  try {
    const settings = await fetch(`${url}/indexes/${INDEX}/settings`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filterableAttributes: ['category', 'price'], sortableAttributes: ['price'] }),
    });
    await waitTask(url, ((await settings.json()) as { taskUid: number }).taskUid);
    const bg = background(url, exact);
    const t0 = performance.now();
    let last = -1;
    for (let from = 0; from < DOCS; from += BATCH) {
      const lines: string[] = [];
      for (const d of corpus.docs(from, Math.min(DOCS, from + BATCH))) lines.push(JSON.stringify(d));
      const res = await post(url, `/indexes/${INDEX}/documents?primaryKey=id`, lines.join('\n'), 'application/x-ndjson');
      last = ((await res.json()) as { taskUid: number }).taskUid;
    }
    await waitTask(url, last, 50);
    const importS = (performance.now() - t0) / 1000;
    const during = await bg.stop();
    const peak = procStatus(node.proc.pid!, 'VmHWM');
    // Garbage of the last batches is still being collected 10 s after the import (V8 reports
    // hundreds of MiB more heap and array buffers then than a minute later).
    await new Promise((res) => setTimeout(res, 60_000));
    const settled = procStatus(node.proc.pid!, 'VmRSS');
    console.log(`corpus: ${DOCS} documents of 30-60 words (scale-corpus.ts), ${BATCH}-document NDJSON batches`);
    console.log(`import: ${(DOCS / importS).toFixed(0)} docs/s (${importS.toFixed(1)} s)  target ≥ 25000 docs/s`);
    console.log(`peak RSS during import: ${gib(peak)}  target ≤ 2 GiB; settled RSS: ${gib(settled)}  target ≤ 1.2 GiB; on disk ${mib(diskSize(dir))}`);
    console.log(
      `while importing (${during.search.length} rounds): search p50 ${pct(during.search, 50).toFixed(1)} p99 ${pct(during.search, 99).toFixed(1)} ` +
        `max ${Math.max(...during.search).toFixed(0)} ms (target p99 ≤ 50 ms); task poll max ${Math.max(...during.tasks).toFixed(0)} ms; ` +
        `/health max ${Math.max(...during.health).toFixed(0)} ms`,
    );

    for (const q of ['warm', 'up', 'a', 'the quick brown']) await (await post(url, `/indexes/${INDEX}/search`, { q })).arrayBuffer();
    console.log(`${'kind'.padEnd(20)} ${'p50'.padStart(8)} ${'p95'.padStart(8)} ${'p99'.padStart(8)}  target p95`);
    for (const k of kinds) {
      const times: number[] = [];
      for (const body of k.bodies) {
        const s = performance.now();
        const res = await post(url, `/indexes/${INDEX}/search`, { ...body, limit: 10 });
        await res.arrayBuffer();
        times.push(performance.now() - s);
        if (res.status !== 200) throw new Error(`${k.name} ${JSON.stringify(body)}: ${res.status}`);
      }
      const p95 = pct(times, 95);
      console.log(
        `${k.name.padEnd(20)} ${pct(times, 50).toFixed(2).padStart(8)} ${p95.toFixed(2).padStart(8)} ${pct(times, 99).toFixed(2).padStart(8)}  ≤ ${k.target} ms ${p95 <= k.target ? 'ok' : 'MISSED'}`,
      );
    }

    await node.kill('SIGKILL');
    const k0 = performance.now();
    node = await spawnNode(['--log-level', 'error'], dir, node.port, 600_000);
    for (;;) {
      const res = await post(url, `/indexes/${INDEX}/search`, { q: exact[0], limit: 10 });
      await res.arrayBuffer();
      if (res.status === 200) break;
      await new Promise((res2) => setTimeout(res2, 20));
    }
    const restart = (performance.now() - k0) / 1000;
    console.log(`kill -9, restart, first answered search: ${restart.toFixed(2)} s  target ≤ 3 s; RSS after restart ${gib(procStatus(node.proc.pid!, 'VmRSS'))}`);
  } finally {
    await node.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  }
}
