import type { Command } from '../tasks/command.js';
import type { ApplyResult } from '../tasks/state-machine.js';

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

/**
 * The task log as the rest of the node sees it: one implementation for a single node, one on
 * Raft for a cluster. A proposal resolves once its command is committed and applied on this node.
 */
export interface Replicator {
  propose(cmd: Command): Promise<ApplyResult>;
  /** Whether this node decides batches (the Raft leader; always true on a single node). */
  isLeader(): boolean;
  start(): Promise<void>;
  stop(): Promise<void>;
  status(): { self: NodeStatus; nodes: NodeStatus[] };
}
