// Errors the core reports to its caller. Proposal errors are expected in normal
// operation (a follower gets a proposal, a transfer is under way) and carry a
// machine-readable code so the replication layer can forward or retry.

import type { NodeId } from './types.js';

export type ProposalErrorCode =
  /** This node is not the leader; `leaderHint` names the leader if known. */
  | 'notLeader'
  /** Leadership is being handed over; retry on the new leader. */
  | 'transferInProgress'
  /** A membership change is still pending (proposed but not yet applied). */
  | 'confChangePending'
  /** The membership change makes no sense against the current configuration. */
  | 'invalidConfChange'
  /** A learner must catch up with the log before it can become a voter. */
  | 'learnerNotCaughtUp'
  /** The leader holds too many uncommitted bytes; back off and retry. */
  | 'tooManyUncommitted'
  /** Leadership can go only to a voter this leader tracks. */
  | 'invalidTransferee'
  /** This node is no longer a member of the cluster. */
  | 'removed';

export class ProposalError extends Error {
  readonly code: ProposalErrorCode;
  readonly leaderHint: NodeId;

  constructor(code: ProposalErrorCode, message: string, leaderHint: NodeId = '') {
    super(message);
    this.name = 'ProposalError';
    this.code = code;
    this.leaderHint = leaderHint;
  }
}

export type StorageErrorCode =
  /** The requested index was compacted away; the caller needs a snapshot. */
  | 'compacted'
  /** The requested index is beyond the last stored entry. */
  | 'unavailable'
  /** A snapshot older than the one held was offered. */
  | 'snapshotOutOfDate';

export class StorageError extends Error {
  readonly code: StorageErrorCode;

  constructor(code: StorageErrorCode, message: string) {
    super(message);
    this.name = 'StorageError';
    this.code = code;
  }
}

export function isStorageError(e: unknown, code?: StorageErrorCode): e is StorageError {
  return e instanceof StorageError && (code === undefined || e.code === code);
}

/**
 * A broken invariant: the log, the storage or the caller's use of the API is
 * inconsistent. Continuing would risk divergence, so the node must stop.
 */
export class RaftInvariantError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RaftInvariantError';
  }
}
