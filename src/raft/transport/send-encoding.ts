import { RaftMessage, type AppendEntries, type Entry, type SendRequest } from '../../gen/trine/v1/raft.js';

// A Send request encoded in one pass into one buffer, with the same bytes as the generated
// encoder. The generated one copies an entry's data once per level of nesting (entry, append,
// message, request) and once more into a Buffer; on the leader that was about a tenth of its
// CPU during an import, paid again for each follower.

function varintSize(n: number): number {
  let size = 1;
  while (n >= 128) {
    n = Math.floor(n / 128);
    size++;
  }
  return size;
}

/** Size of a varint field (tag + value); 0 when the value is proto3's default, left out. */
const uintField = (n: number): number => (n === 0 ? 0 : 1 + varintSize(n));
/** Size of a length-delimited field whose tag fits in one byte. */
const lenField = (len: number): number => 1 + varintSize(len) + len;

function entrySize(e: Entry): number {
  return uintField(e.index) + uintField(e.term) + uintField(e.type) + (e.data.length === 0 ? 0 : lenField(e.data.length));
}

function appendSize(a: AppendEntries, entrySizes: number[]): number {
  let size = uintField(a.term) + uintField(a.prevLogIndex) + uintField(a.prevLogTerm) + uintField(a.commit);
  for (const s of entrySizes) size += lenField(s);
  return size;
}

class Out {
  pos = 0;
  constructor(readonly buf: Buffer) {}
  varint(n: number): void {
    while (n >= 128) {
      this.buf[this.pos++] = (n % 128) | 128;
      n = Math.floor(n / 128);
    }
    this.buf[this.pos++] = n;
  }
  uint(tag: number, n: number): void {
    if (n === 0) return;
    this.buf[this.pos++] = tag;
    this.varint(n);
  }
  bytes(tag: number, b: Uint8Array): void {
    this.buf[this.pos++] = tag;
    this.varint(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }
  string(tag: number, s: string, len: number): void {
    this.buf[this.pos++] = tag;
    this.varint(len);
    this.pos += this.buf.write(s, this.pos, len, 'utf8');
  }
}

interface Planned {
  /** Encoded by the generated encoder (small messages), or planned for one-pass writing. */
  encoded?: Uint8Array;
  msg: RaftMessage;
  append?: AppendEntries;
  entrySizes?: number[];
  appendSize?: number;
  fromLen: number;
  toLen: number;
  size: number;
}

/** Requests smaller than this come from Node's shared pool; larger ones may reuse a buffer. */
const REUSE_MIN = 64 * 1024;
/** A buffer larger than this is not kept for reuse. */
const REUSE_MAX = 64 * 1024 * 1024;

/**
 * A buffer a caller may lend the encoder: a large request is written into it (grown when too
 * small) instead of fresh memory, whose first touch costs more than the copy on this kind of
 * machine. The caller must not lend it again while a request written into it may still be read.
 */
export interface SendBuffer {
  buf?: Buffer;
}

export function encodeSendRequest(req: SendRequest, lend?: SendBuffer): Buffer {
  const plans: Planned[] = [];
  let total = 0;
  for (const msg of req.messages) {
    let p: Planned;
    if (msg.body?.$case === 'appendEntries') {
      const append = msg.body.value;
      const entrySizes = append.entries.map(entrySize);
      const aSize = appendSize(append, entrySizes);
      const fromLen = Buffer.byteLength(msg.from);
      const toLen = Buffer.byteLength(msg.to);
      const size = (fromLen ? lenField(fromLen) : 0) + (toLen ? lenField(toLen) : 0) + lenField(aSize);
      p = { msg, append, entrySizes, appendSize: aSize, fromLen, toLen, size };
    } else {
      const encoded = RaftMessage.encode(msg).finish();
      p = { msg, encoded, fromLen: 0, toLen: 0, size: encoded.length };
    }
    plans.push(p);
    total += lenField(p.size);
  }
  const out = new Out(target(total, lend));
  for (const p of plans) {
    out.buf[out.pos++] = 10; // messages = 1, length-delimited
    out.varint(p.size);
    if (p.encoded) {
      out.buf.set(p.encoded, out.pos);
      out.pos += p.encoded.length;
      continue;
    }
    const a = p.append!;
    if (p.fromLen) out.string(10, p.msg.from, p.fromLen);
    if (p.toLen) out.string(18, p.msg.to, p.toLen);
    out.buf[out.pos++] = 114; // append_entries = 14, length-delimited
    out.varint(p.appendSize!);
    out.uint(8, a.term);
    out.uint(16, a.prevLogIndex);
    out.uint(24, a.prevLogTerm);
    a.entries.forEach((e, i) => {
      out.buf[out.pos++] = 34; // entries = 4
      out.varint(p.entrySizes![i]!);
      out.uint(8, e.index);
      out.uint(16, e.term);
      out.uint(24, e.type);
      if (e.data.length !== 0) out.bytes(34, e.data);
    });
    out.uint(40, a.commit);
  }
  if (out.pos !== total) throw new Error(`Send request encoded in ${out.pos} bytes, planned ${total}`);
  return out.buf.length === total ? out.buf : out.buf.subarray(0, total);
}

function target(total: number, lend: SendBuffer | undefined): Buffer {
  if (lend === undefined || total < REUSE_MIN || total > REUSE_MAX) return Buffer.allocUnsafe(total);
  if (lend.buf === undefined || lend.buf.length < total) lend.buf = Buffer.allocUnsafeSlow(Math.min(REUSE_MAX, Math.max(total, Math.ceil(total * 1.25))));
  return lend.buf;
}
