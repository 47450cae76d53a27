import type { Contact } from '../raft/driver.js';
import type { ConfState, Role } from '../raft/core/index.js';

/** How far this node is behind what the leader has done. */
export interface Lag {
  /** Log entries between the leader's commit index and what this node reflects. */
  entries: number;
  /** How long the oldest of those has been waiting here, in milliseconds. */
  ms: number;
}

/** What the balancer's health check answers: ready, or why not. */
export type Readiness = { ready: true; lag: Lag } | { ready: false; lag: Lag; reason: string };

/** The node's state the check reads, at the moment it asks. */
export interface HealthSources {
  readonly nodeId: string;
  raft(): { role: Role; lead: string; commit: number; confState: ConfState };
  readonly contact: Contact;
  appliedIndex(): number;
  /** The log index up to which this node reflects everything clients may have been told. */
  reflectedIndex(): number;
  /** When the leader finished (epoch ms) each batch that this node has not processed yet. */
  dueBatches(): Iterable<number>;
  removed(): boolean;
}

export interface HealthBounds {
  maxLagEntries: number;
  maxLagMs: number;
  /** Silence from the leader (or, on the leader, from a quorum) after which the node has no quorum. */
  contactMs: number;
}

/**
 * Lag and readiness for the load balancer (`GET /cluster/health`). The lag in time is the
 * longer of: how long ago this node learnt of a commit index it has not applied yet (its own
 * monotonic clock; `sample()` records those moments, on a timer and before every answer), and
 * how long ago the leader finished a batch this node has not processed yet (the leader's
 * finish time, from the log: wall clocks, assumed in step across the machines).
 */
export class ReplicaHealth {
  /** Leader commit indexes as they became known, oldest first. */
  private commits: { index: number; at: number }[] = [];

  constructor(
    private readonly s: HealthSources,
    private readonly bounds: HealthBounds,
  ) {}

  /** The leader's commit index as far as this node knows. */
  knownCommit(): number {
    return Math.max(this.s.raft().commit, this.s.contact.leaderCommit);
  }

  sample(now = performance.now()): void {
    const commit = this.knownCommit();
    const last = this.commits[this.commits.length - 1];
    if (!last || commit > last.index) this.commits.push({ index: commit, at: now });
    const applied = this.s.appliedIndex();
    // Keep the newest applied observation: it dates the entries right after it.
    while (this.commits.length > 1 && this.commits[1]!.index <= applied) this.commits.shift();
  }

  lag(now = performance.now(), wallNow = Date.now()): Lag {
    this.sample(now);
    const applied = this.s.appliedIndex();
    const commit = this.knownCommit();
    let ms = 0;
    if (commit > applied) {
      const first = this.commits.find((c) => c.index > applied);
      if (first) ms = now - first.at;
    }
    for (const finishedAt of this.s.dueBatches()) ms = Math.max(ms, wallNow - finishedAt);
    return { entries: Math.max(0, commit - this.s.reflectedIndex()), ms: Math.round(ms) };
  }

  readiness(now = performance.now(), wallNow = Date.now()): Readiness {
    const lag = this.lag(now, wallNow);
    const reason = this.noQuorum(now) ?? this.lagging(lag);
    return reason === null ? { ready: true, lag } : { ready: false, lag, reason };
  }

  private noQuorum(now: number): string | null {
    const s = this.s;
    const st = s.raft();
    const id = s.nodeId;
    const silentFor = (at: number | undefined) => (at === undefined ? Infinity : now - at);
    const secs = (ms: number) => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : 'ever');
    if (s.removed()) return `node \`${id}\` is not a member of the cluster any more`;
    const voters = st.confState.voters;
    if (st.role === 'leader') {
      if (voters.length === 1 && voters[0] === id) return null;
      const heard = voters.filter((v) => v === id || silentFor(s.contact.lastHeard.get(v)) <= this.bounds.contactMs).length;
      if (heard > voters.length / 2) return null;
      return `node \`${id}\` leads but has heard from only ${heard} of the ${voters.length} voters within ${this.bounds.contactMs} ms: it cannot reach a quorum`;
    }
    const leader = s.contact.leader;
    if (!st.lead || !leader || leader.id !== st.lead) {
      return `node \`${id}\` knows no leader (role: ${st.role}): it cannot reach a quorum`;
    }
    const silent = silentFor(leader.at);
    if (silent > this.bounds.contactMs) {
      return `node \`${id}\` has not heard from leader \`${st.lead}\` for ${secs(silent)}: it cannot reach a quorum`;
    }
    return null;
  }

  private lagging(lag: Lag): string | null {
    const id = this.s.nodeId;
    if (lag.entries > this.bounds.maxLagEntries) {
      return `node \`${id}\` is ${lag.entries} log entries behind the leader (bound: ${this.bounds.maxLagEntries}, --health-max-lag-entries)`;
    }
    if (lag.ms > this.bounds.maxLagMs) {
      return `node \`${id}\` is ${lag.ms} ms behind the leader (bound: ${this.bounds.maxLagMs} ms, --health-max-lag)`;
    }
    return null;
  }
}
