import type { ReadState } from '../raft/core/index.js';

/** What the read index needs from the Raft driver. */
export interface ReadIndexSource {
  readIndex(ctx: number): void;
  on(event: 'readState', fn: (s: ReadState) => void): unknown;
}

interface Waiter {
  resolve(index: number | null): void;
  timer: NodeJS.Timeout;
  /** The first request made after this read arrived: its answer, or a later one's, holds for it. */
  since: number;
}

/**
 * Read indexes for this node's reads, one request to the leader at a time: every read that
 * arrives while a request is out waits for the next one, so a busy node asks once per round
 * trip, not once per read. A request the core dropped (no leader, a leader change, a lost
 * message) is asked again after `retryMs`, under a new context; an answer to an earlier
 * context still serves the reads that were waiting when it was asked.
 */
export class ReadIndexer {
  private nextCtx = 1;
  /** Contexts asked and not yet answered, and the reads waiting on them. */
  private inFlight: { asked: number; waiters: Waiter[]; retry: NodeJS.Timeout } | null = null;
  private queued: Waiter[] = [];
  /** A request planned for the end of this turn of the event loop. */
  private planned = false;

  constructor(
    private readonly source: ReadIndexSource,
    private readonly retryMs = 500,
  ) {
    source.on('readState', (s) => this.answered(s));
  }

  /** Resolves with a read index, or null when none came within `timeoutMs`. */
  readIndex(timeoutMs: number): Promise<number | null> {
    return new Promise((resolve) => {
      const w: Waiter = {
        resolve,
        since: Infinity,
        timer: setTimeout(() => {
          this.queued = this.queued.filter((x) => x !== w);
          if (this.inFlight) this.inFlight.waiters = this.inFlight.waiters.filter((x) => x !== w);
          resolve(null);
        }, timeoutMs),
      };
      this.queued.push(w);
      if (this.inFlight || this.planned) return;
      // Reads arriving in the same turn of the event loop share the request.
      this.planned = true;
      setImmediate(() => {
        this.planned = false;
        if (!this.inFlight) this.ask([]);
      });
    });
  }

  /** Asks under a new context for `waiting` and every queued read. */
  private ask(waiting: Waiter[]): void {
    const ctx = this.nextCtx++;
    for (const w of this.queued) w.since = ctx;
    const waiters = [...waiting, ...this.queued];
    this.queued = [];
    if (waiters.length === 0) {
      this.inFlight = null;
      return;
    }
    if (this.inFlight) clearTimeout(this.inFlight.retry);
    const retry = setTimeout(() => {
      if (this.inFlight?.asked === ctx) this.ask(this.inFlight.waiters);
    }, this.retryMs);
    retry.unref();
    this.inFlight = { asked: ctx, waiters, retry };
    this.source.readIndex(ctx);
  }

  private answered(s: ReadState): void {
    const f = this.inFlight;
    if (!f) return;
    const served = f.waiters.filter((w) => w.since <= s.ctx);
    if (served.length === 0) return;
    f.waiters = f.waiters.filter((w) => w.since > s.ctx);
    for (const w of served) {
      clearTimeout(w.timer);
      w.resolve(s.index);
    }
    // The reads still waiting (asked for later) keep the current request; otherwise start the next one.
    if (f.waiters.length === 0) {
      clearTimeout(f.retry);
      this.inFlight = null;
      if (this.queued.length > 0) this.ask([]);
    }
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
