import { KeySpace, decodeUint, encodeUint } from '../store/keys.js';
import type { KvStore, WriteBatch } from '../store/kv.js';
import { MemoryStorage, type ConfState, type Entry, type HardState, type SnapshotMeta } from './core/index.js';
import { claimHeadroom } from '../util/headroom.js';

/** Raft's own keys: never part of a state-machine snapshot. */
export const RAFT_LOG = new KeySpace('rl');
export const RAFT_STATE = new KeySpace('rs');
const HARD = RAFT_STATE.key('hard');
const SNAP = RAFT_STATE.key('snap');

/** Key prefixes that hold Raft's log and votes rather than applied state. */
export const RAFT_PREFIXES = [RAFT_LOG.prefix, RAFT_STATE.prefix].sort(Buffer.compare);

/** Bytes in front of an entry's data in its stored value: the term, then the type. */
const ENTRY_HEAD = 9;

function encodeEntry(e: Entry): Buffer {
  // The header goes in front of the data where its buffer left room for it (a command this
  // node proposed), instead of a copy of the whole data.
  const claimed = claimHeadroom(e.data, ENTRY_HEAD);
  const out = claimed ?? Buffer.allocUnsafe(ENTRY_HEAD + e.data.byteLength);
  out.writeBigUInt64BE(BigInt(e.term), 0);
  out[8] = e.type === 'confChange' ? 1 : 0;
  if (claimed === null) out.set(e.data, ENTRY_HEAD);
  return out;
}

function decodeEntry(index: number, b: Buffer): Entry {
  return {
    index,
    term: Number(b.readBigUInt64BE(0)),
    type: b[8] === 1 ? 'confChange' : 'normal',
    data: b.subarray(ENTRY_HEAD),
  };
}

/**
 * The durable Raft log, hard state and snapshot metadata, in the node's RocksDB, mirrored in
 * a MemoryStorage the core reads synchronously.
 */
export class RaftLogStore {
  readonly memory: MemoryStorage;
  /** Bytes of entries held since the first index, to bound the log by size as well as count. */
  heldBytes = 0;

  private constructor(
    private readonly store: KvStore,
    memory: MemoryStorage,
  ) {
    this.memory = memory;
  }

  static async open(store: KvStore): Promise<RaftLogStore> {
    const snapBuf = await store.get(SNAP);
    const meta: SnapshotMeta = snapBuf
      ? (JSON.parse(snapBuf.toString()) as SnapshotMeta)
      : { index: 0, term: 0, confState: { voters: [], learners: [] } };
    const memory = new MemoryStorage({ confState: meta.confState });
    if (meta.index > 0) memory.applySnapshot({ meta, data: new Uint8Array(0) });
    const hardBuf = await store.get(HARD);
    if (hardBuf) memory.setHardState(JSON.parse(hardBuf.toString()) as HardState);
    const ls = new RaftLogStore(store, memory);
    const entries: Entry[] = [];
    for await (const { key, value } of store.scan({ prefix: RAFT_LOG.prefix, gt: RAFT_LOG.key(meta.index) })) {
      const e = decodeEntry(decodeUint(RAFT_LOG.strip(key)), value);
      entries.push(e);
      ls.heldBytes += value.length;
    }
    memory.append(entries);
    return ls;
  }

  isEmpty(): boolean {
    return this.memory.lastIndex() === 0 && this.memory.hardState().term === 0;
  }

  /** Stages entries (replacing a conflicting tail) and the hard state into `wb`. */
  stage(wb: WriteBatch, entries: Entry[], hard: HardState | undefined): void {
    if (entries.length > 0) {
      const first = entries[0]!.index;
      const last = this.memory.lastIndex();
      // A new leader may overwrite an uncommitted tail: drop what lies beyond the new entries.
      if (first <= last) wb.delRange(RAFT_LOG.key(first), RAFT_LOG.key(last + 1));
      for (const e of entries) {
        const b = encodeEntry(e);
        this.heldBytes += b.length;
        wb.put(RAFT_LOG.key(e.index), b);
      }
    }
    if (hard) wb.put(HARD, JSON.stringify(hard));
  }

  /** After the write is durable: make the core see it. */
  commitStaged(entries: Entry[], hard: HardState | undefined): void {
    if (entries.length > 0) this.memory.append(entries);
    if (hard) this.memory.setHardState(hard);
  }

  /** Records a snapshot of the applied state at `index` and drops log entries up to `compactTo`. */
  async snapshotAndCompact(index: number, confState: ConfState, compactTo: number): Promise<void> {
    if (index > this.memory.snapshotMeta().index) this.memory.createSnapshot(index, confState);
    const meta = this.memory.snapshotMeta();
    const upTo = Math.min(compactTo, meta.index);
    const wb = this.store.batch();
    wb.put(SNAP, JSON.stringify(meta));
    if (upTo >= this.memory.firstIndex()) wb.delRange(RAFT_LOG.key(0), RAFT_LOG.key(upTo + 1));
    // The applied state the snapshot stands for must be on disk before the log behind it goes.
    await this.store.sync();
    await wb.commit({ sync: true });
    if (upTo >= this.memory.firstIndex()) {
      this.memory.compact(upTo);
      this.heldBytes = 0;
      for (let i = this.memory.firstIndex(); i <= this.memory.lastIndex(); i++) {
        this.heldBytes += this.memory.entries(i, i + 1, Infinity)[0]!.data.byteLength + ENTRY_HEAD;
      }
    }
  }

  /** After installing a snapshot from the leader: the log restarts right after it. */
  stageInstalledSnapshot(wb: WriteBatch, meta: SnapshotMeta): void {
    RaftLogStore.stageInstalled(wb, meta, this.memory.hardState());
  }

  /**
   * The same, for a node finishing an installation a crash interrupted (before the log store
   * is opened). The stored commit is raised to the snapshot: the applied state now stands for
   * `meta.index`, and a restart must never find applied beyond commit.
   */
  static stageInstalled(wb: WriteBatch, meta: SnapshotMeta, hard: HardState): void {
    wb.delPrefix(RAFT_LOG.prefix);
    wb.put(SNAP, JSON.stringify(meta));
    wb.put(HARD, JSON.stringify({ ...hard, commit: Math.max(hard.commit, meta.index) }));
  }

  static async readHardState(store: KvStore): Promise<HardState> {
    const b = await store.get(HARD);
    return b ? (JSON.parse(b.toString()) as HardState) : { term: 0, vote: '', commit: 0 };
  }

  /** A node that must not vote again in a term it may have voted in before it lost its data. */
  static stageHardState(wb: WriteBatch, hard: HardState): void {
    wb.put(HARD, JSON.stringify(hard));
  }

  commitInstalledSnapshot(meta: SnapshotMeta): void {
    this.memory.applySnapshot({ meta, data: new Uint8Array(0) });
    const hard = this.memory.hardState();
    this.memory.setHardState({ ...hard, commit: Math.max(hard.commit, meta.index) });
    this.heldBytes = 0;
  }
}

export { encodeUint };
