// Linearizable reads without log entries (Raft thesis §6.4; etcd's ReadOnlySafe):
// a read asks the leader for its commit index, and the leader answers only once
// a quorum has acknowledged a heartbeat sent after the request arrived, which
// proves that no newer leader had committed anything by then. The reader then
// waits until it has applied up to that index. No clock is involved, so a leader
// whose thread stalled cannot answer from a lease it no longer holds.
//
// Requests are grouped in rounds: one heartbeat broadcast confirms every request
// that joined its round before the heartbeats left (see `seal`). A voter's own
// request counts as its confirmation: in a cluster of three, a follower's request
// is answered without a round (see leaderReadIndex).

import type { Raft } from './raft.js';
import type { NodeId } from './types.js';

/** The answer to a read request: once applied up to `index`, serve the read tagged `ctx`. */
export interface ReadState {
  index: number;
  ctx: number;
}

interface Request {
  from: NodeId;
  ctx: number;
}

interface Round {
  id: number;
  /** The leader's commit index once the last request joined. */
  index: number;
  requests: Request[];
}

export class ReadOnly {
  private rounds: Round[] = [];
  /** A round whose heartbeats have not been handed out yet: later requests may still join it. */
  private open: Round | null = null;
  /** Highest round each peer acknowledged in this term. */
  private readonly acked = new Map<NodeId, number>();
  /** Requests that arrived before this leader committed an entry of its own term. */
  private waiting: Request[] = [];
  private lastId = 0;

  /** Leadership changed: every request in flight is dropped (its sender retries). */
  reset(): void {
    this.rounds = [];
    this.open = null;
    this.acked.clear();
    this.waiting = [];
  }

  /** The newest round not yet confirmed (0 if none): heartbeats carry it, so a lost one is made up for. */
  pendingId(): number {
    return this.rounds.length > 0 ? this.rounds[this.rounds.length - 1]!.id : 0;
  }

  /** The heartbeats of the open round are on their way: requests arriving now need a new round. */
  seal(): void {
    this.open = null;
  }

  /**
   * Adds a request; returns the id of a new round whose heartbeats must be sent,
   * or 0 when it joined a round whose heartbeats have not left yet.
   */
  add(from: NodeId, ctx: number, commit: number): number {
    if (this.open) {
      // Heartbeats not sent yet: the round's confirmation comes after this request arrived.
      this.open.index = commit;
      this.open.requests.push({ from, ctx });
      return 0;
    }
    const round: Round = { id: ++this.lastId, index: commit, requests: [{ from, ctx }] };
    this.rounds.push(round);
    this.open = round;
    return round.id;
  }

  wait(from: NodeId, ctx: number): void {
    this.waiting.push({ from, ctx });
  }

  takeWaiting(): Request[] {
    const w = this.waiting;
    this.waiting = [];
    return w;
  }

  /**
   * Records that `from` acknowledged round `id` (and so every earlier one); returns the
   * rounds now confirmed by a quorum of `voters` (the leader counts itself), oldest first.
   */
  ack(self: NodeId, from: NodeId, id: number, voters: ReadonlySet<NodeId>): Round[] {
    if (id > (this.acked.get(from) ?? 0)) this.acked.set(from, id);
    const quorum = Math.floor(voters.size / 2) + 1;
    let confirmed = 0;
    for (const round of this.rounds) {
      let n = 0;
      for (const v of voters) if (v === self || (this.acked.get(v) ?? 0) >= round.id) n++;
      if (n < quorum) break;
      confirmed++;
    }
    if (confirmed === 0) return [];
    const done = this.rounds.slice(0, confirmed);
    this.rounds = this.rounds.slice(confirmed);
    if (this.open && done.includes(this.open)) this.open = null;
    return done;
  }
}

/** Hands the read index to whoever asked: this node's own Ready, or a follower. */
export function answerRead(r: Raft, req: Request, index: number): void {
  if (req.from === r.id) r.readStates.push({ index, ctx: req.ctx });
  else r.send({ type: 'readIndexResp', from: r.id, to: req.from, term: r.term, ctx: req.ctx, index });
}
