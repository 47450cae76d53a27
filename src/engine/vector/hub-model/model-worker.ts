// The serving thread's handle on a model's worker thread: one worker per model directory
// and pooling, shared by every embedder that uses them, started on first use and stopped
// after a while without work (its memory is the model's size, twice over while it loads).

import { Worker } from 'node:worker_threads';
import { EmbedError } from '../embed-error.js';
import { compiledScript } from '../../../util/compiled-script.js';
import type { FromWorker, ToWorker, WorkerInit } from './worker-protocol.js';

const IDLE_MS = 10 * 60_000;

/** The compiled worker script. */
function workerScript(): string {
  try {
    return compiledScript(import.meta.url, 'runtime-worker.js', 'dist/src/engine/vector/hub-model');
  } catch (e) {
    throw new Error(`the model runtime is not built: ${(e as Error).message}`);
  }
}

interface Pending {
  resolve(v: Float32Array[]): void;
  reject(e: Error): void;
}

export class ModelWorker {
  /** The model's output width, once loaded. */
  dims: number | undefined;
  private readonly worker: Worker;
  private readonly ready: Promise<number>;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private callers = 0;
  private idle: NodeJS.Timeout | null = null;
  private stopped: EmbedError | null = null;

  constructor(
    init: WorkerInit,
    private readonly onStop: () => void,
  ) {
    // The process's flags, less those that only make sense for its own entry (`--input-type`).
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
    this.worker = new Worker(workerScript(), { workerData: init, execArgv });
    this.ready = new Promise<number>((resolve, reject) => {
      this.worker.on('message', (m: FromWorker) => {
        if (m.type === 'ready') resolve((this.dims = m.dims));
        else if (m.type === 'failed') this.stop(new EmbedError(m.fault, m.detail), reject);
        else this.answer(m);
      });
      this.worker.on('error', (e) => this.stop(new EmbedError('runtime', `the runtime of model \`${init.model}\` failed: ${e.message}`), reject));
      this.worker.on('exit', (code) => this.stop(new EmbedError('runtime', `the runtime of model \`${init.model}\` stopped (exit code ${code})`), reject));
    });
    // Failures reach callers through embed(); this keeps an unobserved one quiet.
    this.ready.catch(() => {});
  }

  /** Embeddings of `texts`, in order. `urgent` (a search query) goes before indexing work. */
  async embed(texts: readonly string[], urgent: boolean): Promise<Float32Array[]> {
    if (this.stopped) throw this.stopped;
    // Someone waits on the worker: it keeps the process alive until it answers, and no
    // longer (an idle model must not hold a process that is done).
    this.callers++;
    this.worker.ref();
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    try {
      await this.ready;
      const id = this.nextId++;
      return await new Promise<Float32Array[]>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        this.worker.postMessage({ id, texts: [...texts], urgent } satisfies ToWorker);
      });
    } finally {
      if (--this.callers === 0 && !this.stopped) {
        this.worker.unref();
        this.idle = setTimeout(() => void this.close(), IDLE_MS).unref();
      }
    }
  }

  async close(): Promise<void> {
    this.stop(new EmbedError('runtime', 'the model runtime was stopped'), () => {});
    await this.worker.terminate();
  }

  private answer(m: Extract<FromWorker, { id: number }>): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    if (m.type === 'error') return p.reject(new EmbedError(m.fault, m.detail));
    const dims = this.dims!;
    const out: Float32Array[] = [];
    for (let i = 0; i < m.vectors.length; i += dims) out.push(m.vectors.subarray(i, i + dims));
    p.resolve(out);
  }

  private stop(why: EmbedError, rejectReady: (e: Error) => void): void {
    if (this.stopped) return;
    this.stopped = why;
    if (this.idle) clearTimeout(this.idle);
    rejectReady(why);
    for (const p of this.pending.values()) p.reject(why);
    this.pending.clear();
    this.onStop();
  }
}

const workers = new Map<string, ModelWorker>();

/** The worker of the model in `dir` with that pooling setting, started if needed. */
export function modelWorker(init: WorkerInit): ModelWorker {
  const key = JSON.stringify([init.dir, init.pooling ?? null]);
  let w = workers.get(key);
  if (!w) {
    const created = new ModelWorker(init, () => {
      if (workers.get(key) === created) workers.delete(key);
    });
    workers.set(key, (w = created));
  }
  return w;
}

/** Stops every model worker (tests, shutdown). */
export async function closeModelWorkers(): Promise<void> {
  await Promise.all([...workers.values()].map((w) => w.close()));
}
