// Public surface of the Raft core. The driver, the transport and the
// replication layer import from here only.

export { RawNode, type Ready, type Status, type PeerProgress, type SnapshotPlan } from './raw-node.js';
export type { RaftConfig } from './config.js';
export { MemoryStorage, limitSize, type Storage, type InitialState, type MemoryStorageOptions } from './storage.js';
export {
  applyConfChange,
  confStateEqual,
  decodeConfChange,
  encodeConfChange,
  validateConfChange,
} from './conf-change.js';
export {
  ProposalError,
  RaftInvariantError,
  StorageError,
  isStorageError,
  type ProposalErrorCode,
  type StorageErrorCode,
} from './errors.js';
export { mulberry32, hashSeed, randInt, type Rand } from './rand.js';
export type { ProgressState } from './progress.js';
export type { ReadState } from './read-only.js';
export {
  NONE,
  entrySize,
  isResponse,
  type AppendMessage,
  type AppendRespMessage,
  type ConfChange,
  type ConfChangeType,
  type ConfState,
  type Entry,
  type EntryType,
  type HardState,
  type HeartbeatMessage,
  type HeartbeatRespMessage,
  type Message,
  type MessageType,
  type NodeId,
  type PreVoteMessage,
  type PreVoteRespMessage,
  type ReadIndexMessage,
  type ReadIndexRespMessage,
  type Role,
  type Snapshot,
  type SnapshotMessage,
  type SnapshotMeta,
  type SoftState,
  type TimeoutNowMessage,
  type VoteMessage,
  type VoteRespMessage,
} from './types.js';
