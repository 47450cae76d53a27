// Options of one Raft node, with defaults chosen for a LAN cluster ticking
// every ~100 ms: elections after 1-2 s of silence, heartbeats every tick.

import { hashSeed, mulberry32, type Rand } from './rand.js';
import type { Storage } from './storage.js';
import type { NodeId } from './types.js';

export interface RaftConfig {
  id: NodeId;
  storage: Storage;
  /**
   * Ticks without hearing from a leader before a follower campaigns; the
   * actual timeout is drawn in [electionTick, 2 * electionTick).
   * Must exceed heartbeatTick. Default 10.
   */
  electionTick?: number;
  /** Ticks between leader heartbeats. Default 1. */
  heartbeatTick?: number;
  /**
   * Last index the application applied before a restart (its durable state
   * already includes entries up to here). Must not exceed the stored commit.
   * Default: the storage's snapshot index.
   */
  applied?: number;
  /** Byte bound of one AppendEntries message (at least one entry is sent). Default 1 MiB. */
  maxSizePerMsg?: number;
  /** Append messages in flight to one follower in replicate state. Default 256. */
  maxInflightMsgs?: number;
  /** Byte bound on committed entries in one Ready. Default 16 MiB. */
  maxCommittedSizePerReady?: number;
  /**
   * Leader refuses proposals while more than this many bytes of payload are
   * uncommitted (0 = no limit). Default 64 MiB.
   */
  maxUncommittedEntriesSize?: number;
  /** Poll before campaigning so a rejoining node does not bump terms. Default true. */
  preVote?: boolean;
  /**
   * Leader steps down without a quorum of recent contact; followers that heard
   * from a leader within an election timeout ignore vote requests. Default true.
   */
  checkQuorum?: boolean;
  /** Randomness for election timeouts. Default: mulberry32 seeded from the id. */
  rand?: Rand;
  /** Suggest a snapshot when this many entries were applied since the last one. Default 10,000. */
  snapshotThreshold?: number;
  /**
   * Entries kept behind a snapshot when compacting, so that a follower a
   * little behind catches up from the log instead of a full snapshot. Default 1,000.
   */
  compactionMargin?: number;
  /**
   * A learner may be promoted only when its match is within this many entries
   * of the leader's commit index. Default 1,000.
   */
  learnerCatchUpSlack?: number;
  /**
   * Milliseconds of a follower read lease (0 = none; see lease.ts): while it holds one, a
   * follower may serve reads from its own log without asking the leader. Every node of a
   * cluster must use the same value. Default 0.
   */
  followerLeaseMs?: number;
  /** A monotonic clock in milliseconds, for leases only. Default `performance.now`. */
  clock?: () => number;
}

export type ResolvedConfig = Required<Omit<RaftConfig, 'applied'>> & { applied: number | undefined };

export function resolveConfig(c: RaftConfig): ResolvedConfig {
  const r: ResolvedConfig = {
    id: c.id,
    storage: c.storage,
    electionTick: c.electionTick ?? 10,
    heartbeatTick: c.heartbeatTick ?? 1,
    applied: c.applied,
    maxSizePerMsg: c.maxSizePerMsg ?? 1024 * 1024,
    maxInflightMsgs: c.maxInflightMsgs ?? 256,
    maxCommittedSizePerReady: c.maxCommittedSizePerReady ?? 16 * 1024 * 1024,
    maxUncommittedEntriesSize: c.maxUncommittedEntriesSize ?? 64 * 1024 * 1024,
    preVote: c.preVote ?? true,
    checkQuorum: c.checkQuorum ?? true,
    rand: c.rand ?? mulberry32(hashSeed(c.id)),
    snapshotThreshold: c.snapshotThreshold ?? 10_000,
    compactionMargin: c.compactionMargin ?? 1_000,
    learnerCatchUpSlack: c.learnerCatchUpSlack ?? 1_000,
    followerLeaseMs: c.followerLeaseMs ?? 0,
    clock: c.clock ?? (() => performance.now()),
  };
  const problem = validate(r);
  if (problem) throw new Error(`invalid raft config: ${problem}`);
  return r;
}

function validate(c: ResolvedConfig): string | undefined {
  if (c.id === '') return 'id must not be empty';
  if (!Number.isInteger(c.heartbeatTick) || c.heartbeatTick <= 0) return 'heartbeatTick must be a positive integer';
  if (!Number.isInteger(c.electionTick) || c.electionTick <= c.heartbeatTick) {
    return 'electionTick must be an integer greater than heartbeatTick';
  }
  if (c.maxSizePerMsg <= 0) return 'maxSizePerMsg must be positive';
  if (!Number.isInteger(c.maxInflightMsgs) || c.maxInflightMsgs <= 0) return 'maxInflightMsgs must be a positive integer';
  if (c.maxCommittedSizePerReady <= 0) return 'maxCommittedSizePerReady must be positive';
  if (c.maxUncommittedEntriesSize < 0) return 'maxUncommittedEntriesSize must not be negative';
  if (c.snapshotThreshold <= 0) return 'snapshotThreshold must be positive';
  if (c.compactionMargin < 0) return 'compactionMargin must not be negative';
  if (c.learnerCatchUpSlack < 0) return 'learnerCatchUpSlack must not be negative';
  if (!(c.followerLeaseMs >= 0)) return 'followerLeaseMs must not be negative';
  if (c.applied !== undefined && (!Number.isInteger(c.applied) || c.applied < 0)) {
    return 'applied must be a non-negative integer';
  }
  return undefined;
}
