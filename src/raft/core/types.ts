// Plain data shapes shared by the whole Raft core. Everything here is a plain
// object or a union of them so that a transport can map it to protobuf
// field by field, and so that tests can build and compare values directly.

/** A stable node identity ("n1"); never an address, which may change. */
export type NodeId = string;

/** The empty node id: "no vote", "no known leader". Matches proto3's default string. */
export const NONE: NodeId = '';

export type EntryType = 'normal' | 'confChange';

/**
 * One log entry. A leader's no-op is a `normal` entry with empty data.
 * `confChange` entries carry an encoded {@link ConfChange} (see conf-change.ts).
 */
export interface Entry {
  index: number;
  term: number;
  type: EntryType;
  data: Uint8Array;
}

/** The cluster membership as of some log index. */
export interface ConfState {
  voters: NodeId[];
  learners: NodeId[];
}

/** What must be durable before any message that depends on it is sent. */
export interface HardState {
  term: number;
  /** NONE when this node has not voted in `term`. */
  vote: NodeId;
  commit: number;
}

export type Role = 'follower' | 'preCandidate' | 'candidate' | 'leader';

/** Volatile state, useful to the driver (who leads) but never persisted. */
export interface SoftState {
  /** NONE when no leader is known. */
  lead: NodeId;
  role: Role;
}

export interface SnapshotMeta {
  /** Last log index covered by the snapshot. */
  index: number;
  /** Term of the entry at `index`. */
  term: number;
  /** Membership as of `index`. */
  confState: ConfState;
}

/**
 * A snapshot as the core sees it. The core never looks at `data`: the leader's
 * driver may leave it empty and stream the real state machine image out of band.
 */
export interface Snapshot {
  meta: SnapshotMeta;
  data: Uint8Array;
}

export type ConfChangeType = 'addVoter' | 'addLearner' | 'removeNode';

/**
 * A single-server membership change.
 * - addLearner: add a non-voting member (or demote a voter to learner).
 * - addVoter: add a voter, or promote a learner.
 * - removeNode: remove a voter or learner.
 * `context` is opaque to the core (the driver may carry the new node's address).
 */
export interface ConfChange {
  type: ConfChangeType;
  nodeId: NodeId;
  context?: Uint8Array;
}

interface MessageBase {
  from: NodeId;
  to: NodeId;
  /**
   * Sender's term, except for (pre)vote requests and responses where it is the
   * term of the election in question (a pre-vote asks about term + 1).
   */
  term: number;
}

/** Pre-election poll: "would you vote for me at `term`?" Changes no state on receipt. */
export interface PreVoteMessage extends MessageBase {
  type: 'preVote';
  lastIndex: number;
  lastTerm: number;
}

export interface PreVoteRespMessage extends MessageBase {
  type: 'preVoteResp';
  reject: boolean;
}

export interface VoteMessage extends MessageBase {
  type: 'vote';
  lastIndex: number;
  lastTerm: number;
  /** Campaign started by a leadership transfer: voters skip the leader-lease check. */
  transfer: boolean;
}

export interface VoteRespMessage extends MessageBase {
  type: 'voteResp';
  reject: boolean;
}

/** AppendEntries. An empty `entries` probes the follower or carries `commit`. */
export interface AppendMessage extends MessageBase {
  type: 'app';
  prevIndex: number;
  prevTerm: number;
  entries: Entry[];
  commit: number;
}

export interface AppendRespMessage extends MessageBase {
  type: 'appResp';
  /** On success: the last index known to match the leader. On reject: the rejected prevIndex. */
  index: number;
  reject: boolean;
  /** On reject: the follower's guess of the largest index that may match ... */
  rejectHint: number;
  /** ... and its term there (0 when unknown), so the leader can skip whole terms. */
  hintTerm: number;
}

export interface HeartbeatMessage extends MessageBase {
  type: 'heartbeat';
  /** min(leader commit, follower match): never beyond what the follower holds. */
  commit: number;
  /** The newest read round awaiting confirmation (0: none); echoed by the reply. */
  ctx: number;
  /** A read lease granted from the follower's reply tagged `lease` (0: none; see lease.ts). */
  lease: number;
  /** The leader's lease length (ms; 0: leases off, or not told), which bounds the follower's. */
  leaseMs: number;
}

export interface HeartbeatRespMessage extends MessageBase {
  type: 'heartbeatResp';
  ctx: number;
  /** This reply's tag, which a lease the leader grants on it names (0: the follower takes no leases). */
  seq: number;
}

/** A follower asks the leader for a read index on behalf of its read `ctx` (see read-only.ts). */
export interface ReadIndexMessage extends MessageBase {
  type: 'readIndex';
  ctx: number;
}

/** The leader's commit index, confirmed by a quorum after the request arrived. */
export interface ReadIndexRespMessage extends MessageBase {
  type: 'readIndexResp';
  ctx: number;
  index: number;
}

/**
 * InstallSnapshot. The leader's core emits it with the metadata (and whatever
 * data its storage returned, possibly empty); the transport streams the image in
 * chunks and steps the assembled message into the follower.
 */
export interface SnapshotMessage extends MessageBase {
  type: 'snapshot';
  snapshot: Snapshot;
}

/** Sent by a leader to a caught-up transferee: "start an election now". */
export interface TimeoutNowMessage extends MessageBase {
  type: 'timeoutNow';
}

export type Message =
  | PreVoteMessage
  | PreVoteRespMessage
  | VoteMessage
  | VoteRespMessage
  | AppendMessage
  | AppendRespMessage
  | HeartbeatMessage
  | HeartbeatRespMessage
  | ReadIndexMessage
  | ReadIndexRespMessage
  | SnapshotMessage
  | TimeoutNowMessage;

export type MessageType = Message['type'];

/** Responses are dropped when they come from a peer the leader no longer tracks. */
export function isResponse(m: Message): boolean {
  return (
    m.type === 'appResp' ||
    m.type === 'heartbeatResp' ||
    m.type === 'voteResp' ||
    m.type === 'preVoteResp'
  );
}

/** Rough wire size of an entry, used for the byte bounds on messages and batches. */
export function entrySize(e: Entry): number {
  return e.data.byteLength + 24;
}

export function emptyHardState(): HardState {
  return { term: 0, vote: NONE, commit: 0 };
}

export function hardStateEqual(a: HardState, b: HardState): boolean {
  return a.term === b.term && a.vote === b.vote && a.commit === b.commit;
}

export function isEmptyHardState(h: HardState): boolean {
  return h.term === 0 && h.vote === NONE && h.commit === 0;
}

export function cloneConfState(cs: ConfState): ConfState {
  return { voters: [...cs.voters], learners: [...cs.learners] };
}
