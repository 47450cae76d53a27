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

/** `n` bytes: a random run of up to 64, repeated. */
function bytes(n: number, r: () => number): Buffer {
  const run = Buffer.from(Array.from({ length: Math.min(n, 64) }, () => Math.floor(r() * 256)));
  const out = Buffer.alloc(n);
  for (let at = 0; at < n; at += run.length) run.copy(out, at);
  return out;
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
      data: bytes([0, 1, 127, 128, 20000][Math.floor(r() * 5)]!, r),
    }));
    return { from: id(), to: id(), body: { $case: 'appendEntries', value: { term: big(), prevLogIndex: big(), prevLogTerm: big(), entries, commit: big() } } };
  }
  if (kind < 0.8) return { from: id(), to: id(), body: { $case: 'heartbeat', value: { term: big(), commit: big(), context: Buffer.alloc(r() < 0.5 ? 0 : 8, 3), lease: r() < 0.5 ? 0 : big(), leaseMs: r() < 0.5 ? 0 : big() } } };
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
      // And they decode to a request the generated encoder writes as the same bytes again.
      const decoded = SendRequest.decode(fast);
      expect(decoded.messages.map((m) => [m.from, m.to, m.body?.$case])).toEqual(req.messages.map((m) => [m.from, m.to, m.body?.$case]));
      expect(Buffer.compare(Buffer.from(SendRequest.encode(decoded).finish()), fast)).toBe(0);
    }
  });

  it('writes a large request into a lent buffer, grown when too small, and a small one elsewhere', () => {
    const r = rng(11);
    const append = (size: number): SendRequest => ({
      messages: [{ from: 'n1', to: 'n2', body: { $case: 'appendEntries', value: { term: 3, prevLogIndex: 9, prevLogTerm: 3, commit: 9, entries: [{ index: 10, term: 3, type: EntryType.ENTRY_TYPE_NORMAL, data: bytes(size, r) }] } } }],
    });
    const lend: { buf?: Buffer } = {};
    const first = append(200_000);
    const a = encodeSendRequest(first, lend);
    expect(Buffer.compare(a, Buffer.from(SendRequest.encode(first).finish()))).toBe(0);
    const lent = lend.buf!;
    expect(a.buffer).toBe(lent.buffer);
    // A smaller one reuses it; the bytes are its own, not the first one's.
    const second = append(150_000);
    const b = encodeSendRequest(second, lend);
    expect(lend.buf).toBe(lent);
    expect(b.buffer).toBe(lent.buffer);
    expect(Buffer.compare(b, Buffer.from(SendRequest.encode(second).finish()))).toBe(0);
    // A larger one gets a larger buffer, kept for the next.
    const third = append(400_000);
    const c = encodeSendRequest(third, lend);
    expect(lend.buf!.length).toBeGreaterThanOrEqual(c.length);
    expect(c.buffer).toBe(lend.buf!.buffer);
    expect(Buffer.compare(c, Buffer.from(SendRequest.encode(third).finish()))).toBe(0);
    // A small request never touches it (it comes from Node's shared pool).
    const small = append(100);
    const d = encodeSendRequest(small, lend);
    expect(d.buffer).not.toBe(lend.buf!.buffer);
    expect(Buffer.compare(d, Buffer.from(SendRequest.encode(small).finish()))).toBe(0);
  });
});
