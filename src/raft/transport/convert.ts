import {
  EntryType,
  type Entry as PbEntry,
  type RaftMessage,
  type SnapshotMeta as PbSnapshotMeta,
} from '../../gen/trine/v1/raft.js';
import type { Entry, Message, SnapshotMeta } from '../core/index.js';

function toPbEntry(e: Entry): PbEntry {
  return {
    index: e.index,
    term: e.term,
    type: e.type === 'confChange' ? EntryType.ENTRY_TYPE_CONF_CHANGE : EntryType.ENTRY_TYPE_NORMAL,
    data: Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength),
  };
}

function fromPbEntry(e: PbEntry): Entry {
  return { index: e.index, term: e.term, type: e.type === EntryType.ENTRY_TYPE_CONF_CHANGE ? 'confChange' : 'normal', data: e.data };
}

export function toPbMeta(m: SnapshotMeta): PbSnapshotMeta {
  return { index: m.index, term: m.term, confState: { voters: [...m.confState.voters], learners: [...m.confState.learners] } };
}

export function fromPbMeta(m: PbSnapshotMeta | undefined): SnapshotMeta {
  return {
    index: m?.index ?? 0,
    term: m?.term ?? 0,
    confState: { voters: [...(m?.confState?.voters ?? [])], learners: [...(m?.confState?.learners ?? [])] },
  };
}

/** Read contexts are numbers in the core and 8 bytes on the wire (none: empty). */
function ctxToPb(ctx: number): Buffer {
  if (ctx === 0) return Buffer.alloc(0);
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(ctx));
  return b;
}

function ctxFromPb(b: Uint8Array): number {
  return b.byteLength === 8 ? Number(Buffer.from(b.buffer, b.byteOffset, 8).readBigUInt64BE()) : 0;
}

/** Core message → wire message. Snapshot data never travels here (it is streamed). */
export function toPb(m: Message): RaftMessage {
  const base = { from: m.from, to: m.to };
  switch (m.type) {
    case 'preVote':
      return { ...base, body: { $case: 'preVote', value: { term: m.term, lastLogIndex: m.lastIndex, lastLogTerm: m.lastTerm } } };
    case 'preVoteResp':
      return { ...base, body: { $case: 'preVoteResponse', value: { term: m.term, granted: !m.reject, preVote: true } } };
    case 'vote':
      return {
        ...base,
        body: { $case: 'requestVote', value: { term: m.term, lastLogIndex: m.lastIndex, lastLogTerm: m.lastTerm, transfer: m.transfer } },
      };
    case 'voteResp':
      return { ...base, body: { $case: 'voteResponse', value: { term: m.term, granted: !m.reject, preVote: false } } };
    case 'app':
      return {
        ...base,
        body: {
          $case: 'appendEntries',
          value: { term: m.term, prevLogIndex: m.prevIndex, prevLogTerm: m.prevTerm, entries: m.entries.map(toPbEntry), commit: m.commit },
        },
      };
    case 'appResp':
      return {
        ...base,
        body: {
          $case: 'appendEntriesResponse',
          value: { term: m.term, index: m.index, reject: m.reject, rejectHint: m.rejectHint, rejectHintTerm: m.hintTerm },
        },
      };
    case 'heartbeat':
      return { ...base, body: { $case: 'heartbeat', value: { term: m.term, commit: m.commit, context: ctxToPb(m.ctx), lease: m.lease, leaseMs: m.leaseMs } } };
    case 'heartbeatResp':
      return { ...base, body: { $case: 'heartbeatResponse', value: { term: m.term, context: ctxToPb(m.ctx), seq: m.seq } } };
    case 'readIndex':
      return { ...base, body: { $case: 'readIndex', value: { term: m.term, context: ctxToPb(m.ctx) } } };
    case 'readIndexResp':
      return { ...base, body: { $case: 'readIndexResponse', value: { term: m.term, context: ctxToPb(m.ctx), index: m.index } } };
    case 'timeoutNow':
      return { ...base, body: { $case: 'timeoutNow', value: { term: m.term } } };
    case 'snapshot':
      return { ...base, body: { $case: 'snapshot', value: { term: m.term, meta: toPbMeta(m.snapshot.meta) } } };
  }
}

/** Wire message → core message; null for an empty or unknown body. */
export function fromPb(p: RaftMessage): Message | null {
  const base = { from: p.from, to: p.to };
  const b = p.body;
  if (!b) return null;
  switch (b.$case) {
    case 'preVote':
      return { ...base, type: 'preVote', term: b.value.term, lastIndex: b.value.lastLogIndex, lastTerm: b.value.lastLogTerm };
    case 'preVoteResponse':
      return { ...base, type: 'preVoteResp', term: b.value.term, reject: !b.value.granted };
    case 'requestVote':
      return {
        ...base,
        type: 'vote',
        term: b.value.term,
        lastIndex: b.value.lastLogIndex,
        lastTerm: b.value.lastLogTerm,
        transfer: b.value.transfer,
      };
    case 'voteResponse':
      return { ...base, type: 'voteResp', term: b.value.term, reject: !b.value.granted };
    case 'appendEntries':
      return {
        ...base,
        type: 'app',
        term: b.value.term,
        prevIndex: b.value.prevLogIndex,
        prevTerm: b.value.prevLogTerm,
        entries: b.value.entries.map(fromPbEntry),
        commit: b.value.commit,
      };
    case 'appendEntriesResponse':
      return {
        ...base,
        type: 'appResp',
        term: b.value.term,
        index: b.value.index,
        reject: b.value.reject,
        rejectHint: b.value.rejectHint,
        hintTerm: b.value.rejectHintTerm,
      };
    case 'heartbeat':
      return { ...base, type: 'heartbeat', term: b.value.term, commit: b.value.commit, ctx: ctxFromPb(b.value.context), lease: b.value.lease, leaseMs: b.value.leaseMs };
    case 'heartbeatResponse':
      return { ...base, type: 'heartbeatResp', term: b.value.term, ctx: ctxFromPb(b.value.context), seq: b.value.seq };
    case 'readIndex':
      return { ...base, type: 'readIndex', term: b.value.term, ctx: ctxFromPb(b.value.context) };
    case 'readIndexResponse':
      return { ...base, type: 'readIndexResp', term: b.value.term, ctx: ctxFromPb(b.value.context), index: b.value.index };
    case 'timeoutNow':
      return { ...base, type: 'timeoutNow', term: b.value.term };
    case 'snapshot':
      return { ...base, type: 'snapshot', term: b.value.term, snapshot: { meta: fromPbMeta(b.value.meta), data: new Uint8Array(0) } };
  }
  return null;
}
