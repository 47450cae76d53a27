// The worker thread that runs one local model: it reads the model, builds its ONNX graph,
// opens an onnxruntime session (whose kernels use their own threads), then embeds the texts
// it is sent. Everything heavy happens here, never on the thread that serves requests.
//
// Texts are tokenized, sorted by length and run in batches of similar lengths (less
// padding); between two batches the worker reads its messages, so a search query waiting
// behind a long indexing job goes next.

import { availableParallelism, setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { createRequire } from 'node:module';
import type * as Ort from 'onnxruntime-node';
import { EmbedError } from '../embed-error.js';
import { encoderGraph } from './encoder-graph.js';
import { readModel } from './model-files.js';
import { writeOnnx } from './onnx-writer.js';
import { pool } from './pooling.js';
import type { FromWorker, ToWorker, WorkerInit } from './worker-protocol.js';

// onnxruntime-node is a CommonJS package that loads its native binding.
const ort = createRequire(import.meta.url)('onnxruntime-node') as typeof Ort;

/**
 * At most this many texts in one run, and this many tokens once padded. Measured on the
 * bge-small shape with 60-token texts (docs/vector-search.md): 4 to 16 texts a run embed
 * about 10% faster than one at a time, 32 or more are slower again.
 */
export const BATCH_TEXTS = 16;
export const BATCH_TOKENS = 1024;

interface Job {
  id: number;
  urgent: boolean;
  /** Token ids per text. */
  ids: number[][];
  /** Texts by increasing length, not yet run. */
  order: number[];
  out: Float32Array;
}

const init = workerData as WorkerInit;
const port = parentPort!;
const post = (m: FromWorker, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const jobs: Job[] = [];
let running = false;

function failure(e: unknown): { fault: EmbedError['fault']; detail: string } {
  if (e instanceof EmbedError) return { fault: e.fault, detail: e.detail };
  return { fault: 'runtime', detail: `could not run model \`${init.model}\`: ${e instanceof Error ? e.message : String(e)}` };
}

/** Niceness of this thread and of the kernel threads it starts: serving goes first. */
const BACKGROUND = 10;

async function open() {
  // On Linux the nice value is per thread and inherited by the threads a thread creates:
  // set here, it lowers this worker and onnxruntime's pool, not the serving thread.
  // (Elsewhere it would lower the whole process.)
  if (process.platform === 'linux') {
    try {
      setPriority(BACKGROUND);
    } catch {
      // Not permitted here: run at normal priority.
    }
  }
  const parts = readModel(init.dir, init.model, init.pooling);
  const bytes = writeOnnx(encoderGraph(parts.config, parts.tensors));
  parts.tensors.clear();
  const session = await ort.InferenceSession.create(bytes, {
    intraOpNumThreads: availableParallelism(),
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    // Idle kernel threads sleep instead of spinning: the serving thread needs the cores too.
    extra: { session: { intra_op: { allow_spinning: '0' } } },
  });
  return { session, parts, dims: parts.config.hidden_size };
}

type Opened = Awaited<ReturnType<typeof open>>;

/** Runs the next batch of `job`. */
async function step(m: Opened, job: Job): Promise<void> {
  const take: number[] = [];
  let width = 0;
  while (job.order.length > 0) {
    const next = job.order[job.order.length - 1]!;
    const w = Math.max(width, job.ids[next]!.length);
    if (take.length > 0 && (take.length >= BATCH_TEXTS || w * (take.length + 1) > BATCH_TOKENS)) break;
    take.push(job.order.pop()!);
    width = w;
  }
  const n = take.length;
  const inputIds = new BigInt64Array(n * width);
  const mask = new BigInt64Array(n * width);
  take.forEach((t, r) => {
    job.ids[t]!.forEach((id, c) => {
      inputIds[r * width + c] = BigInt(id);
      mask[r * width + c] = 1n;
    });
  });
  const result = await m.session.run({
    input_ids: new ort.Tensor('int64', inputIds, [n, width]),
    attention_mask: new ort.Tensor('int64', mask, [n, width]),
  });
  const hidden = result['last_hidden_state']!.data as Float32Array;
  take.forEach((t, r) => job.out.set(pool(hidden, r * width, job.ids[t]!.length, m.dims, m.parts.pooling), t * m.dims));
  if (job.order.length === 0) {
    jobs.splice(jobs.indexOf(job), 1);
    post({ type: 'done', id: job.id, vectors: job.out }, [job.out.buffer as ArrayBuffer]);
  }
}

async function drain(m: Opened): Promise<void> {
  if (running) return;
  running = true;
  try {
    while (jobs.length > 0) {
      const job = jobs.find((j) => j.urgent) ?? jobs[0]!;
      try {
        await step(m, job);
      } catch (e) {
        jobs.splice(jobs.indexOf(job), 1);
        post({ type: 'error', id: job.id, ...failure(e) });
      }
      // Let messages in: an urgent job that arrived meanwhile runs next.
      await new Promise((r) => setImmediate(r));
    }
  } finally {
    running = false;
  }
}

async function main(): Promise<void> {
  let m: Opened;
  try {
    m = await open();
  } catch (e) {
    post({ type: 'failed', ...failure(e) });
    return;
  }
  post({ type: 'ready', dims: m.dims });
  port.on('message', (msg: ToWorker) => {
    try {
      const ids = msg.texts.map((t) => m.parts.tokenizer.encode(t, m.parts.maxTokens));
      // Longest first in `order`, popped from the end: batches go from short to long.
      const order = ids.map((_, i) => i).sort((a, b) => ids[b]!.length - ids[a]!.length);
      if (ids.length === 0) {
        post({ type: 'done', id: msg.id, vectors: new Float32Array(0) });
        return;
      }
      jobs.push({ id: msg.id, urgent: msg.urgent, ids, order, out: new Float32Array(ids.length * m.dims) });
      void drain(m);
    } catch (e) {
      post({ type: 'error', id: msg.id, ...failure(e) });
    }
  });
}

void main();
