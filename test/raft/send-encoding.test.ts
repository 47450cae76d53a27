import { describe, expect, it } from 'vitest';
import { EntryType, SendRequest, type RaftMessage } from '../../src/gen/trine/v1/raft.js';
import { encodeSendRequest } from '../../src/raft/transport/send-encoding.js';

function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function message(r: () => number): RaftMessage {
  const big = () => [0, 1, 127, 128, 300, 2 ** 31, 2 ** 40 + 7, Number.MAX_SAFE_INTEGER][Math.floor(r() * 8)]!;
  const id = () => ['', 'n1', 'node-ü-2', 'x'.repeat(200)][Math.floor(r() * 4)]!;
  const kind = r();
  if (kind < 0.6) {
    const entries = Array.from({ length: Math.floor(r() * 5) }, () => ({
      index: big(),
      term: big(),
      type: r() < 0.5 ? EntryType.ENTRY_TYPE_NORMAL : EntryType.ENTRY_TYPE_CONF_CHANGE,
      data: Buffer.from(Array.from({ length: [0, 1, 127, 128, 20000][Math.floor(r() * 5)]! }, () => Math.floor(r() * 256))),
    }));
    return { from: id(), to: id(), body: { $case: 'appendEntries', value: { term: big(), prevLogIndex: big(), prevLogTerm: big(), entries, commit: big() } } };
  }
  if (kind < 0.8) return { from: id(), to: id(), body: { $case: 'heartbeat', value: { term: big(), commit: big(), context: Buffer.alloc(r() < 0.5 ? 0 : 8, 3) } } };
  if (kind < 0.9) return { from: id(), to: id(), body: undefined };
  return { from: id(), to: id(), body: { $case: 'appendEntriesResponse', value: { term: big(), index: big(), reject: r() < 0.5, rejectHint: big(), rejectHintTerm: big() } } };
}

describe('Send request encoding', () => {
  it('gives the generated encoder’s bytes, which decode back to the same request', () => {
    const r = rng(7);
    for (let i = 0; i < 300; i++) {
      const req: SendRequest = { messages: Array.from({ length: Math.floor(r() * 4) }, () => message(r)) };
      const fast = encodeSendRequest(req);
      expect(Buffer.compare(fast, Buffer.from(SendRequest.encode(req).finish()))).toBe(0);
      expect(SendRequest.decode(fast)).toEqual(SendRequest.decode(SendRequest.encode(req).finish()));
    }
  });
});
