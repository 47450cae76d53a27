import type { ReadState } from '../raft/core/index.js';

/** What the read index needs from the Raft driver. */
export interface ReadIndexSource {
  readIndex(ctx: number): void;
  on(event: 'readState', fn: (s: ReadState) => void): unknown;
}

interface Waiter {
  resolve(index: number | null): void;
  timer: NodeJS.Timeout;
}

/**
 * Read indexes for this node's reads, one request to the leader at a time: every read that
 * arrives while a request is out waits for the next one, so a busy node asks once per round
 * trip, not once per read. A request the core dropped (no leader, a leader change, a lost
 * message) is asked again after `retryMs` under a new context.
 */
export class ReadIndexer {
  private nextCtx = 1;
  private inFlight: { ctx: number; waiters: Waiter[]; retry: NodeJS.Timeout } | null = null;
  private queued: Waiter[] = [];

  constructor(
    private readonly source: ReadIndexSource,
    private readonly retryMs = 300,
  ) {
    source.on('readState', (s) => this.answered(s));
  }

  /** Resolves with a read index, or null when none came within `timeoutMs`. */
  readIndex(timeoutMs: number): Promise<number | null> {
    return new Promise((resolve) => {
      const w: Waiter = {
        resolve,
        timer: setTimeout(() => {
          this.queued = this.queued.filter((x) => x !== w);
          if (this.inFlight) this.inFlight.waiters = this.inFlight.waiters.filter((x) => x !== w);
          resolve(null);
        }, timeoutMs),
      };
      this.queued.push(w);
      if (!this.inFlight) this.ask(this.take());
    });
  }

  private take(): Waiter[] {
    const w = this.queued;
    this.queued = [];
    return w;
  }

  private ask(waiters: Waiter[]): void {
    const ctx = this.nextCtx++;
    // Asked again under a new context: an answer to the old one is not proof for readers that came later.
    const retry = setTimeout(() => {
      if (this.inFlight?.ctx !== ctx) return;
      // Reads queued meanwhile arrived before the new request leaves: it answers for them too.
      const ws = [...this.inFlight.waiters, ...this.take()];
      this.inFlight = null;
      if (ws.length > 0) this.ask(ws);
    }, this.retryMs);
    retry.unref();
    this.inFlight = { ctx, waiters, retry };
    this.source.readIndex(ctx);
  }

  private answered(s: ReadState): void {
    const f = this.inFlight;
    if (!f || f.ctx !== s.ctx) return;
    clearTimeout(f.retry);
    this.inFlight = null;
    for (const w of f.waiters) {
      clearTimeout(w.timer);
      w.resolve(s.index);
    }
    if (this.queued.length > 0) this.ask(this.take());
  }

  /** Fails every waiting read (the node is stopping). */
  close(): void {
    const all = [...(this.inFlight?.waiters ?? []), ...this.queued];
    if (this.inFlight) clearTimeout(this.inFlight.retry);
    this.inFlight = null;
    this.queued = [];
    for (const w of all) {
      clearTimeout(w.timer);
      w.resolve(null);
    }
  }
}
