import type { Command } from '../tasks/command.js';
import type { ApplyResult } from '../tasks/state-machine.js';
import type { Lag, Readiness } from './replica-health.js';

export interface NodeStatus {
  id: string;
  role: 'leader' | 'follower' | 'candidate' | 'preCandidate' | 'learner' | 'single';
  term: number;
  leader: string | null;
  commitIndex: number;
  appliedIndex: number;
  /** Log entries this node is behind the leader, as seen by the leader (null when unknown). */
  lag: number | null;
  address?: string;
  reachable?: boolean;
}

/** One member as `GET /cluster` shows it; null where the member did not answer. */
export interface ClusterMember {
  id: string;
  voter: boolean;
  raftAddr: string | null;
  httpAddr: string | null;
  role: string | null;
  term: number | null;
  commitIndex: number | null;
  appliedIndex: number | null;
  /** Entries between the leader's commit index and this member's applied index. */
  lag: number | null;
  /** Whether it answered the node serving the request. */
  reachable: boolean;
}

export interface ClusterView {
  /** The node that answered. */
  nodeId: string;
  leader: string | null;
  term: number;
  members: ClusterMember[];
}

/**
 * The task log as the rest of the node sees it (one implementation, on Raft; a single node is
 * a group of one). A proposal resolves once its command is committed and applied on this node.
 */
export interface Replicator {
  propose(cmd: Command): Promise<ApplyResult>;
  /** Whether this node decides batches (the Raft leader; always true on a single node). */
  isLeader(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): { self: NodeStatus; nodes: NodeStatus[] };
  /**
   * Resolves true once `pred()` holds (checked after each applied entry and whenever
   * `batchProcessed` is called), false after `timeoutMs`.
   */
  waitUntil(pred: () => boolean, timeoutMs: number): Promise<boolean>;
  /** This node processed a batch: waits may be over, and the leader wants to know. */
  batchProcessed(): void;
  /**
   * On the leader: 0 when batch `uid`, finished here at `finishedAt` (epoch ms), may be
   * reported finished (its finish goes into the log), else how many ms it may still wait for
   * the members in touch to process it too.
   */
  settleDelay(uid: number, finishedAt: number): number;
  /**
   * The leader's commit index, confirmed by a quorum after the call (see raft/core/read-only.ts);
   * null when no leader answered within `timeoutMs`. Calls made together share one request.
   */
  readIndex(timeoutMs: number): Promise<number | null>;
  /**
   * With a follower read lease (raft/core/lease.ts): the index to apply up to before serving
   * a read that begins now, and the term the lease is of; null without one (use readIndex).
   */
  leaseRead(): { index: number; term: number } | null;
  /** The Raft term this node is in. */
  term(): number;
  /** Whether this node is the only voter: it holds every committed entry, and its reads need no read index. */
  alone(): boolean;
  /** How far this node is behind the leader. */
  lag(): Lag;
  /** Whether the load balancer should send this node requests (a quorum in reach, lag within bounds). */
  readiness(): Readiness;
  /**
   * Resolves true once this node has applied everything the leader had committed when asked
   * (a read index), false when no leader answered or applying took longer than `timeoutMs`.
   */
  catchUp(timeoutMs: number): Promise<boolean>;
  clusterView(timeoutMs?: number): Promise<ClusterView>;
  /** Adds a node as a learner; it becomes a voter once it has caught up. */
  addNode(id: string, raftAddr: string): Promise<void>;
  removeNode(id: string): Promise<void>;
  /** Moves leadership to `to` (or the most caught-up voter); resolves with the new leader's id. */
  transferLeadership(to: string | null): Promise<string>;
  /** Before a planned stop: a leader hands leadership over. */
  prepareShutdown(timeoutMs?: number): Promise<void>;
}
