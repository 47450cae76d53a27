// Embeddings through the replicated log. Every node processes the same batch and computes
// the same texts, but only the leader asks the provider: it proposes the vectors it got
// (in chunks, then `done`, or the embedder's error) as config commands, and each node's
// batch waits for them. Per batch and embedder the first `done` or error in log order
// settles the outcome, so all nodes store the same vectors or fail the same way, and a new
// leader picks up where a previous one stopped. See docs/vector-search.md. The engine sees it
// as its EmbeddingSource; the node gives it to the engine when it opens it.

import { ApiError } from '../errors/api-error.js';
import { KeySpace, decodeUint } from '../store/keys.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ConfigHandler } from '../tasks/state-machine.js';
import { BatchAborted } from '../engine/apply/types.js';
import { decodeFloats, encodeFloats } from '../engine/vector/distance.js';
import { indexingError } from '../engine/vector/embed-error.js';
import { directSource, EMBED_CHUNK, type EmbeddingJob, type EmbeddingSource } from '../engine/vector/embedding-source.js';

const SPACE = new KeySpace('vx');

export interface ExchangeOp {
  batch: number;
  embedder: string;
  /** Digest of a text and its embedding, base64 float32 little-endian. */
  vectors?: [string, string][];
  done?: boolean;
  error?: { code: string; message: string };
}

interface JobState {
  vectors: Map<string, Float32Array>;
  outcome: null | 'done' | ApiError;
}

export interface ExchangeHooks {
  isLeader(): boolean;
  propose(op: ExchangeOp): Promise<unknown>;
  /** The batch the executor is processing, if any. */
  currentBatch(): number | null;
  log?: { warn(obj: unknown, msg?: string): void };
}

const jobKey = (batch: number, embedder: string) => `${batch}\u0000${embedder}`;

export class EmbeddingExchange implements ConfigHandler, EmbeddingSource {
  static readonly COMMAND = 'vectorExchange';
  private readonly jobs = new Map<string, JobState>();
  private readonly wakers = new Set<() => void>();
  private readonly leading = new Set<string>();
  private interrupt: BatchAborted | null = null;
  hooks: ExchangeHooks | null = null;

  apply(raw: unknown, _at: number, wb: WriteBatch): unknown {
    const op = raw as ExchangeOp;
    const key = jobKey(op.batch, op.embedder);
    let job = this.jobs.get(key);
    if (!job) this.jobs.set(key, (job = { vectors: new Map(), outcome: null }));
    // Settled: later proposals (a previous leader's, arriving late) change nothing.
    if (job.outcome !== null) return null;
    for (const [hash, b64] of op.vectors ?? []) {
      if (job.vectors.has(hash)) continue;
      const bytes = Buffer.from(b64, 'base64');
      job.vectors.set(hash, decodeFloats(bytes));
      wb.put(SPACE.key(op.batch, op.embedder, 'v', hash), bytes);
    }
    if (op.error) job.outcome = new ApiError(op.error.code as never, op.error.message);
    else if (op.done) job.outcome = 'done';
    if (job.outcome !== null) wb.put(SPACE.key(op.batch, op.embedder, 'r'), JSON.stringify(op.error ?? { done: true }));
    for (const wake of this.wakers) wake();
    return null;
  }

  async load(reader: KvReader): Promise<void> {
    this.jobs.clear();
    for await (const { key, value } of reader.scan({ prefix: SPACE.prefix })) {
      const rest = SPACE.strip(key);
      const batch = decodeUint(rest);
      const parts = rest.subarray(9).toString('utf8').split('\u0000');
      const [embedder, kind, hash] = parts as [string, string, string?];
      const k = jobKey(batch, embedder);
      let job = this.jobs.get(k);
      if (!job) this.jobs.set(k, (job = { vectors: new Map(), outcome: null }));
      if (kind === 'v' && hash) job.vectors.set(hash, decodeFloats(value));
      if (kind === 'r') {
        const r = JSON.parse(value.toString()) as { done?: boolean; code?: string; message?: string };
        job.outcome = r.done ? 'done' : new ApiError(r.code as never, r.message!);
      }
    }
  }

  /** Drops what batches up to the current one exchanged: in its write, then from memory once published. */
  release(): { write(wb: WriteBatch): void; publish(): void } | null {
    const batch = this.hooks?.currentBatch() ?? null;
    if (batch === null) return null;
    return {
      write: (wb) => wb.delRange(SPACE.prefix, SPACE.key(batch + 1)),
      publish: () => {
        for (const k of this.jobs.keys()) if (Number(k.split('\u0000')[0]) <= batch) this.jobs.delete(k);
      },
    };
  }

  /** Makes the waiting batch give up (before a snapshot replaces the state, or at shutdown). */
  interruptWaits(why: string): void {
    this.interrupt = new BatchAborted(why);
    for (const wake of this.wakers) wake();
  }

  resumeWaits(): void {
    this.interrupt = null;
  }

  async obtain(job: EmbeddingJob): Promise<Map<string, Float32Array>> {
    const batch = this.hooks?.currentBatch() ?? null;
    if (!this.hooks || batch === null) return directSource.obtain(job);
    const key = jobKey(batch, job.embedder);
    for (;;) {
      if (this.interrupt) throw this.interrupt;
      const st = this.jobs.get(key);
      if (st?.outcome) return this.settle(st, job);
      if (this.hooks.isLeader() && !this.leading.has(key)) {
        this.leading.add(key);
        try {
          await this.unlessInterrupted(this.lead(batch, job));
        } catch (e) {
          if (e instanceof BatchAborted) throw e;
          // Leadership moved mid-way: whoever leads now finishes the job; this node waits.
          this.hooks.log?.warn({ err: e, batch, embedder: job.embedder }, 'could not hand embeddings to the log');
          await this.pause(200);
        } finally {
          this.leading.delete(key);
        }
        continue;
      }
      await this.pause(500);
    }
  }

  private async lead(batch: number, job: EmbeddingJob): Promise<void> {
    const have = this.jobs.get(jobKey(batch, job.embedder))?.vectors;
    const missing = [...job.texts].filter(([h]) => !have?.has(h));
    const propose = (op: Omit<ExchangeOp, 'batch' | 'embedder'>) => this.hooks!.propose({ batch, embedder: job.embedder, ...op });
    for (let i = 0; i < missing.length; i += EMBED_CHUNK) {
      const chunk = missing.slice(i, i + EMBED_CHUNK);
      let vectors: Float32Array[];
      try {
        vectors = await job.embed(chunk.map(([, t]) => t));
      } catch (e) {
        if (e instanceof BatchAborted) throw e;
        const err = indexingError(job.embedder, e);
        await propose({ error: { code: err.code, message: err.message } });
        return;
      }
      await propose({ vectors: chunk.map(([h], j) => [h, encodeFloats(vectors[j]!).toString('base64')]) });
    }
    await propose({ done: true });
  }

  private async settle(st: JobState, job: EmbeddingJob): Promise<Map<string, Float32Array>> {
    if (st.outcome instanceof ApiError) throw st.outcome;
    const out = new Map<string, Float32Array>();
    const missing = new Map<string, string>();
    for (const [h, t] of job.texts) {
      const v = st.vectors.get(h);
      if (v) out.set(h, v);
      else missing.set(h, t);
    }
    if (missing.size > 0) {
      // The leader embedded other texts than this node needs: the nodes' documents differ.
      // Keep the documents in step and say so loudly rather than fail one node alone.
      this.hooks?.log?.warn({ embedder: job.embedder, missing: missing.size }, 'embeddings missing from the log; embedding them locally');
      for (const [h, v] of await directSource.obtain({ ...job, texts: missing })) out.set(h, v);
    }
    return out;
  }

  /** `p`, or BatchAborted as soon as waits are interrupted (a provider call may take minutes). */
  private unlessInterrupted<T>(p: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const wake = () => {
        if (!this.interrupt) return;
        this.wakers.delete(wake);
        reject(this.interrupt);
      };
      this.wakers.add(wake);
      p.then(
        (v) => (this.wakers.delete(wake), resolve(v)),
        (e) => (this.wakers.delete(wake), reject(e)),
      );
      wake();
    });
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }
}
