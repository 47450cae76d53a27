// Writes sent to another instance on behalf of a task this cluster's leader carries on outside
// the log (documents moved by a network topology change, an export): each request is tried
// again while the remote is unreachable or failing, and given up as soon as this node stops
// leading (the next leader does the work again).

import type { ErrorBody } from '../errors/api-error.js';

const REQUEST_TIMEOUT_MS = 30_000;
/** Attempts at a remote that does not answer, or answers with a server error. */
const ATTEMPTS = 5;

/** This node stopped leading (or is closing): the task is the next leader's to carry on. */
export class Abandoned extends Error {}

/** The remote could not be reached, or answered with an error: its status and error body when it answered. */
export class RemoteFailure extends Error {
  constructor(
    readonly remote: string,
    readonly status: number | null,
    /** The remote's own error object, when its answer was one. */
    readonly error: ErrorBody | null,
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

export interface RemoteTarget {
  /** How messages name it. */
  name: string;
  url: string;
  apiKey: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The error object of a remote's answer, when it is one. */
export function errorOf(text: string): ErrorBody | null {
  try {
    const e = JSON.parse(text) as Partial<ErrorBody>;
    return typeof e.message === 'string' && typeof e.code === 'string' && typeof e.type === 'string' ? (e as ErrorBody) : null;
  } catch {
    return null;
  }
}

export interface WriterBounds {
  /** How long a remote may keep answering 412 (it has not applied the network a write was sent for), from its first 412. */
  versionWaitMs: number;
  /** How long a remote task may stay unfinished while waited for. */
  taskWaitMs: number;
}

export class RemoteWriter {
  constructor(
    private readonly stillLeading: () => boolean,
    private readonly bounds: WriterBounds,
  ) {}

  url(target: RemoteTarget, path: string): string {
    return `${target.url.replace(/\/+$/, '')}${path}`;
  }

  private authorized(target: RemoteTarget, headers: Record<string, string>): Record<string, string> {
    return target.apiKey === null ? headers : { ...headers, authorization: `Bearer ${target.apiKey}` };
  }

  /** One request, tried again while the remote is unreachable or failing. */
  async fetch(target: RemoteTarget, path: string, init: { method: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<{ status: number; text: string }> {
    for (let i = 0; ; i++) {
      if (!this.stillLeading()) throw new Abandoned();
      try {
        const r = await fetch(this.url(target, path), { method: init.method, headers: this.authorized(target, init.headers ?? {}), body: init.body, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        const text = await r.text();
        if (r.status < 500 || i + 1 >= ATTEMPTS) return { status: r.status, text };
      } catch (e) {
        if (i + 1 >= ATTEMPTS) {
          const err = e as Error;
          if (err.name === 'TimeoutError') throw new RemoteFailure(target.name, null, null, `remote \`${target.name}\` did not answer before the deadline`, true);
          const cause = err.cause instanceof Error ? err.cause.message : err.message;
          throw new RemoteFailure(target.name, null, null, `could not reach remote \`${target.name}\`: ${cause}`);
        }
      }
      await sleep(100 * 2 ** i);
    }
  }

  /**
   * Sends a write and answers the task it made on the remote. `waitWhile412` keeps trying while
   * the remote answers 412 (it has not applied the network the write was sent for), within bounds.
   */
  async write(target: RemoteTarget, method: string, path: string, body: string | Buffer, headers: Record<string, string>, opts: { waitWhile412?: boolean } = {}): Promise<number> {
    let deadline: number | null = null;
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      const r = await this.fetch(target, path, { method, headers, body });
      if (r.status >= 200 && r.status < 300) {
        const uid = (jsonOrNull(r.text) as { taskUid?: unknown } | null)?.taskUid;
        if (typeof uid === 'number') return uid;
        throw new RemoteFailure(target.name, r.status, null, `could not read the answer of remote \`${target.name}\` as a task: ${r.text}`);
      }
      deadline ??= Date.now() + this.bounds.versionWaitMs;
      if (r.status === 412 && opts.waitWhile412 && Date.now() < deadline) {
        await sleep(wait);
        continue;
      }
      throw new RemoteFailure(target.name, r.status, errorOf(r.text), `remote \`${target.name}\` answered ${r.status}: ${r.text}`);
    }
  }

  /**
   * Waits until a task on the remote has ended, as long as the remote keeps answering (a large
   * import queued behind other work may take long); a key that may not read tasks counts it as
   * accepted.
   */
  async waitForTask(target: RemoteTarget, uid: number, what: string): Promise<void> {
    const deadline = Date.now() + this.bounds.taskWaitMs;
    for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
      const r = await this.fetch(target, `/tasks/${uid}`, { method: 'GET' });
      if (r.status === 401 || r.status === 403) return;
      if (r.status !== 200) throw new RemoteFailure(target.name, r.status, errorOf(r.text), `remote \`${target.name}\` answered ${r.status} about task ${uid} (${what}): ${r.text}`);
      const task = JSON.parse(r.text) as { status?: string; error?: ErrorBody | null };
      if (task.status === 'succeeded') return;
      if (task.status === 'failed' || task.status === 'canceled') {
        throw new RemoteFailure(target.name, null, task.error ?? null, `task ${uid} on remote \`${target.name}\` (${what}) ${task.status}${task.error?.message ? `: ${task.error.message}` : ''}`);
      }
      if (Date.now() >= deadline) throw new RemoteFailure(target.name, null, null, `task ${uid} on remote \`${target.name}\` (${what}) had not ended in time`, true);
      await sleep(wait);
    }
  }
}

function jsonOrNull(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
