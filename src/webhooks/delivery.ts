import { promisify } from 'node:util';
import { gzip as gzipCb } from 'node:zlib';
import type { Webhook } from './webhook-store.js';

const gzip = promisify(gzipCb);

export interface DeliveryOptions {
  /** The webhooks to notify, read when a batch is handed over. */
  webhooks: () => [string, Webhook][];
  /** Per attempt. */
  timeoutMs: number;
  /** Waits before the second, third… attempt; their count bounds the retries. */
  retryDelaysMs: readonly number[];
  log: { warn(obj: unknown, msg?: string): void; debug(obj: unknown, msg?: string): void };
  /** Notifications waiting per webhook before the oldest are dropped (a receiver that is down). */
  maxPending?: number;
}

interface Pending {
  body: Buffer;
  batchUid: number;
}

/**
 * Sends finished batches to the webhooks: their tasks as NDJSON, gzip-compressed, one POST
 * per batch and webhook, in batch order. Runs beside task processing and never holds it up:
 * each webhook has its own queue, every attempt a timeout, and a receiver that stays down
 * makes the queue drop its oldest notifications rather than grow without bound.
 */
export class WebhookDelivery {
  private readonly queues = new Map<string, { url: string; headers: Record<string, string>; items: Pending[]; running: boolean }>();
  private readonly abort = new AbortController();
  private closed = false;

  constructor(private readonly opts: DeliveryOptions) {}

  /** Hands over the tasks of a finished batch (task views, in uid order). */
  async batchFinished(batchUid: number, tasks: readonly Record<string, unknown>[]): Promise<void> {
    const hooks = this.opts.webhooks();
    if (hooks.length === 0 || this.closed) return;
    const body = await gzip(Buffer.from(tasks.map((t) => JSON.stringify(t) + '\n').join('')));
    const max = this.opts.maxPending ?? 1000;
    for (const [uuid, w] of hooks) {
      // Keyed by where it goes too: an edited webhook starts a fresh queue.
      const key = `${uuid} ${w.url} ${JSON.stringify(w.headers)}`;
      let q = this.queues.get(key);
      if (!q) this.queues.set(key, (q = { url: w.url, headers: w.headers, items: [], running: false }));
      q.items.push({ body, batchUid });
      if (q.items.length > max) {
        const dropped = q.items.splice(0, q.items.length - max);
        this.opts.log.warn({ webhook: uuid, batchUids: dropped.map((d) => d.batchUid) }, 'webhook receiver too slow: oldest notifications dropped');
      }
      if (!q.running) void this.drain(key, uuid);
    }
  }

  private async drain(key: string, uuid: string): Promise<void> {
    const q = this.queues.get(key)!;
    q.running = true;
    try {
      while (q.items.length > 0 && !this.closed) {
        const item = q.items.shift()!;
        await this.send(uuid, q.url, q.headers, item);
      }
    } finally {
      q.running = false;
      if (q.items.length === 0) this.queues.delete(key);
    }
  }

  private async send(uuid: string, url: string, headers: Record<string, string>, item: Pending): Promise<void> {
    const attempts = this.opts.retryDelaysMs.length + 1;
    for (let attempt = 1; attempt <= attempts && !this.closed; attempt++) {
      let why: string;
      const attemptSignal = this.attemptSignal();
      try {
        const r = await fetch(url, {
          method: 'POST',
          headers: { ...headers, 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' },
          body: item.body,
          signal: attemptSignal.signal,
        });
        await r.arrayBuffer().catch(() => undefined);
        if (r.ok) {
          this.opts.log.debug({ webhook: uuid, batchUid: item.batchUid, attempt }, 'webhook notified');
          return;
        }
        why = `the receiver answered ${r.status}`;
        // A receiver refusing the request will refuse it again; only overload and its own failures are retried.
        if (r.status < 500 && r.status !== 429 && r.status !== 408) {
          this.opts.log.warn({ webhook: uuid, batchUid: item.batchUid, status: r.status }, 'webhook notification refused');
          return;
        }
      } catch (e) {
        if (this.closed) return;
        why = e instanceof Error && e.name === 'TimeoutError' ? `no answer within ${this.opts.timeoutMs} ms` : (e as Error).message;
      } finally {
        attemptSignal.done();
      }
      if (attempt === attempts) {
        this.opts.log.warn({ webhook: uuid, batchUid: item.batchUid, attempts, reason: why }, 'webhook notification failed');
        return;
      }
      // The wait ends at its delay or at close(), and leaves no listener behind on the signal
      // every wait and attempt shares (a receiver that stays down waits thousands of times).
      await new Promise<void>((resolve) => {
        const onClose = () => (clearTimeout(t), resolve());
        const t = setTimeout(() => (this.abort.signal.removeEventListener('abort', onClose), resolve()), this.opts.retryDelaysMs[attempt - 1]);
        this.abort.signal.addEventListener('abort', onClose, { once: true });
      });
    }
  }

  /**
   * One attempt's signal: aborted by close() or after the timeout. Not
   * `AbortSignal.any([..., AbortSignal.timeout()])`: on Node 20 a garbage collection can
   * drop the combined signal's timeout, and an attempt at a receiver that never answers then
   * waits forever, holding up that webhook's queue for good.
   */
  private attemptSignal(): { signal: AbortSignal; done: () => void } {
    const ac = new AbortController();
    const onClose = () => ac.abort(this.abort.signal.reason);
    this.abort.signal.addEventListener('abort', onClose, { once: true });
    const timer = setTimeout(() => ac.abort(new DOMException(`no answer within ${this.opts.timeoutMs} ms`, 'TimeoutError')), this.opts.timeoutMs);
    return {
      signal: ac.signal,
      done: () => {
        clearTimeout(timer);
        this.abort.signal.removeEventListener('abort', onClose);
      },
    };
  }

  /** Stops delivering: attempts in flight are aborted, waiting notifications dropped. */
  close(): void {
    this.closed = true;
    this.abort.abort();
    this.queues.clear();
  }
}
