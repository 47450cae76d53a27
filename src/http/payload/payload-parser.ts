// Large document payloads are parsed and encoded on a worker thread. Parsing 50,000 documents
// (18 MB of JSON) and encoding them again takes most of a second, which the thread serving
// searches, task polls, health checks and Raft heartbeats cannot spend in one go. Small
// payloads stay on the serving thread: handing them over would cost more than parsing them.

import { Worker } from 'node:worker_threads';
import { ApiError } from '../../errors/api-error.js';
import type { ErrorCode } from '../../errors/codes.js';
import { compiledScript } from '../../util/compiled-script.js';
import { ownMemory, preparePayload, type PayloadRequest, type PreparedPayload } from './prepare-payload.js';

/** Bodies from this size on are prepared on the worker thread. */
export const ASIDE_BYTES = 256 * 1024;
const IDLE_MS = 30_000;

export interface ToPayloadThread {
  id: number;
  request: PayloadRequest;
}

export type FromPayloadThread =
  | { id: number; ok: true; documents: number; exactIntegers: boolean; bytes: Uint8Array }
  | { id: number; ok: false; code: ErrorCode | null; message: string };

interface Pending {
  resolve(p: PreparedPayload): void;
  reject(e: Error): void;
}

class PayloadThread {
  private readonly worker: Worker;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private idle: NodeJS.Timeout | null = null;
  private gone = false;

  constructor(private readonly onGone: () => void) {
    const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
    this.worker = new Worker(compiledScript(import.meta.url, 'payload-thread.js', 'dist/src/http/payload'), { execArgv });
    this.worker.unref();
    this.worker.on('message', (m: FromPayloadThread) => this.answer(m));
    this.worker.on('error', (e) => this.fail(new Error(`the payload thread failed: ${e.message}`)));
    this.worker.on('exit', (code) => this.fail(new Error(`the payload thread stopped (exit code ${code})`)));
  }

  run(request: PayloadRequest): Promise<PreparedPayload> {
    if (this.idle) clearTimeout(this.idle);
    this.idle = null;
    if (this.pending.size === 0) this.worker.ref();
    const id = this.nextId++;
    // The body goes over without a copy where it owns its memory; the request no longer needs it.
    const body = ownMemory(request.body);
    return new Promise<PreparedPayload>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, request: { ...request, body } } satisfies ToPayloadThread, [body.buffer as ArrayBuffer]);
    });
  }

  private answer(m: FromPayloadThread): void {
    const p = this.pending.get(m.id);
    if (!p) return;
    this.pending.delete(m.id);
    this.settle();
    if (m.ok) p.resolve({ documents: m.documents, exactIntegers: m.exactIntegers, bytes: Buffer.from(m.bytes.buffer, m.bytes.byteOffset, m.bytes.byteLength) });
    else p.reject(m.code !== null ? new ApiError(m.code, m.message) : new Error(m.message));
  }

  /** Without work, the thread keeps no process alive and ends after a while. */
  private settle(): void {
    if (this.pending.size > 0 || this.gone) return;
    this.worker.unref();
    this.idle = setTimeout(() => void this.worker.terminate(), IDLE_MS).unref();
  }

  private fail(e: Error): void {
    if (this.gone) return;
    this.gone = true;
    if (this.idle) clearTimeout(this.idle);
    this.onGone();
    for (const p of this.pending.values()) p.reject(e);
    this.pending.clear();
  }
}

let thread: PayloadThread | null = null;

/** `preparePayload`, on the worker thread for large bodies. */
export async function preparePayloadAside(request: PayloadRequest): Promise<PreparedPayload> {
  if (request.body.byteLength < ASIDE_BYTES) return preparePayload(request);
  const t = (thread ??= new PayloadThread(() => {
    if (thread === t) thread = null;
  }));
  return t.run(request);
}
