// A search every 50 ms (and a task poll and /health), on a thread of its own: the bench's
// main thread builds megabytes of payload at a time, and latencies measured there would
// count its own pauses.

import { parentPort, workerData } from 'node:worker_threads';

const { url, index, words } = workerData as { url: string; index: string; words: string[] };
const search: number[] = [];
const tasks: number[] = [];
const health: number[] = [];
let running = true;
parentPort!.on('message', () => (running = false));

let seed = 99;
const next = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);

while (running) {
  const due = performance.now() + 50;
  const s = performance.now();
  const q = words[Math.floor(next() * words.length)]!;
  const res = await fetch(`${url}/indexes/${index}/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ q, limit: 10 }) });
  await res.arrayBuffer();
  search.push(performance.now() - s);
  const t = performance.now();
  await (await fetch(`${url}/tasks?limit=1`)).arrayBuffer();
  tasks.push(performance.now() - t);
  const h = performance.now();
  await (await fetch(`${url}/health`)).arrayBuffer();
  health.push(performance.now() - h);
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
parentPort!.postMessage({ search, tasks, health });
