import { timingSafeEqual, createHash } from 'node:crypto';
import type { Http2Session } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import {
  RaftServiceClient,
  RaftServiceService,
  type InstallSnapshotRequest,
  type InstallSnapshotResponse,
  type RaftServiceServer,
  type SendRequest,
  type SendResponse,
} from '../../gen/trine/v1/raft.js';
import type { Message, NodeId, SnapshotMeta } from '../core/index.js';
import type { RaftTransport } from '../driver.js';
import { fromPb, fromPbMeta, toPb, toPbMeta } from './convert.js';
import { encodeSendRequest, type SendBuffer } from './send-encoding.js';

export const SECRET_HEADER = 'x-trine-cluster-secret';
const MAX_MESSAGE = 512 * 1024 * 1024;
/** Size of the pieces a snapshot is streamed in. */
export const SNAPSHOT_CHUNK = 1024 * 1024;

/**
 * HTTP/2 receive window of the server (per stream; twice that per connection). At HTTP/2's
 * default 64 KiB, a 3 MB append (a batch of documents) needs dozens of window updates, each
 * waiting for a turn of this node's event loop, which indexing keeps busy: appends then took
 * seconds to arrive and writes waited for them. grpc-js has no server option for it, hence
 * the two internals below (checked before use).
 */
const RECEIVE_WINDOW = 16 * 1024 * 1024;

interface ServerInternals {
  commonServerOptions?: { settings?: Record<string, unknown> };
  http2Servers?: Map<{ on(event: 'session', fn: (s: Http2Session) => void): void }, unknown>;
}

export interface TlsOptions {
  cert: Buffer;
  key: Buffer;
  ca: Buffer;
}

/** Produces the applied state to send to a follower, in chunks, with its true metadata. */
export interface SnapshotSource {
  open(): Promise<{ meta: SnapshotMeta; chunks: AsyncIterable<Buffer> }>;
}

/** Receives a streamed snapshot; returns the opaque reference to hand to the core. */
export interface SnapshotSink {
  begin(meta: SnapshotMeta): Promise<{ write(chunk: Buffer): Promise<void>; finish(): Promise<Uint8Array>; abort(): Promise<void> }>;
}

export interface TransportLogger {
  warn(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

export interface TransportOptions {
  self: NodeId;
  /** Raft addresses of the other members, by id. */
  peers: Map<NodeId, string>;
  secret: string | null;
  tls: TlsOptions | null;
  onMessage(m: Message): void;
  onUnreachable(id: NodeId): void;
  onSnapshotSent(id: NodeId, ok: boolean): void;
  snapshotSource: SnapshotSource;
  snapshotSink: SnapshotSink;
  log: TransportLogger;
  /** Called with every RPC's outcome, for metrics. */
  onCall?(method: string, code: string, seconds: number): void;
  /** Called with the outcome of every RPC this node served, for metrics. */
  onServed?(method: string, code: string, seconds: number): void;
}

type Callback = (err: grpc.ServiceError | null, value?: unknown) => void;

/**
 * The same handlers, each reporting how its call ended. Every method of both services is
 * unary or client-streaming, so each handler answers through its callback.
 */
export function countedHandlers<T extends object>(handlers: T, onServed: TransportOptions['onServed']): T {
  if (!onServed) return handlers;
  const out: Record<string, unknown> = {};
  for (const [name, handler] of Object.entries(handlers)) {
    const method = name.charAt(0).toUpperCase() + name.slice(1);
    out[name] = (call: unknown, cb: Callback) => {
      const started = process.hrtime.bigint();
      (handler as (call: unknown, cb: Callback) => void)(call, (err, value) => {
        const code = err ? (grpc.status[err.code ?? grpc.status.UNKNOWN] ?? String(err.code)) : 'OK';
        onServed(method, code, Number(process.hrtime.bigint() - started) / 1e9);
        cb(err, value);
      });
    };
  }
  return out as T;
}

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/** Checks the shared secret in constant time. */
export function secretMatches(expected: string | null, given: grpc.MetadataValue[] | undefined): boolean {
  if (expected === null) return true;
  const v = given?.[0];
  if (typeof v !== 'string') return false;
  return timingSafeEqual(digest(expected), digest(v));
}

/** Appends that carry entries go with Send (one call per batch, timed); the rest goes on a stream. */
function bulky(m: Message): boolean {
  return m.type === 'app' && m.entries.length > 0;
}

/** A peer's stream of small messages, and whether it takes more before draining. */
interface PeerStream {
  call: grpc.ClientWritableStream<SendRequest>;
  waiting: boolean;
}

const CHANNEL_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE,
  'grpc.max_send_message_length': MAX_MESSAGE,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
  // A stream to a peer that went silent (a cut link that drops packets) fails within seconds.
  'grpc.keepalive_time_ms': 2000,
  'grpc.keepalive_timeout_ms': 2000,
  'grpc.keepalive_permit_without_calls': 1,
};

/**
 * Raft messages between nodes over gRPC, batched per peer: appends carrying entries with one
 * Send call per batch, everything else on one stream per peer; snapshots streamed in chunks.
 */
export class GrpcTransport implements RaftTransport {
  private readonly clients = new Map<NodeId, RaftServiceClient>();
  private readonly queues = new Map<NodeId, Message[]>();
  private readonly inFlight = new Set<NodeId>();
  /** Per peer, the buffer its last successful Send was written into, lent to the next one. */
  private readonly sendBuffers = new Map<NodeId, Buffer>();
  private readonly small = new Map<NodeId, Message[]>();
  private readonly streams = new Map<NodeId, PeerStream>();
  /** Peers that do not serve Stream (an older version): everything goes with Send. */
  private readonly sendOnly = new Set<NodeId>();
  private readonly sendingSnapshot = new Set<NodeId>();
  readonly server: grpc.Server;

  constructor(private readonly opts: TransportOptions) {
    this.server = new grpc.Server({ 'grpc.max_receive_message_length': MAX_MESSAGE, 'grpc.max_send_message_length': MAX_MESSAGE });
    this.server.addService(RaftServiceService, countedHandlers(this.handlers(), opts.onServed));
  }

  credentials(): grpc.ChannelCredentials {
    const t = this.opts.tls;
    return t ? grpc.credentials.createSsl(t.ca, t.key, t.cert) : grpc.credentials.createInsecure();
  }

  serverCredentials(): grpc.ServerCredentials {
    const t = this.opts.tls;
    return t
      ? grpc.ServerCredentials.createSsl(t.ca, [{ cert_chain: t.cert, private_key: t.key }], true)
      : grpc.ServerCredentials.createInsecure();
  }

  /** Reports served calls, for the other services sharing this transport's server. */
  get onServed(): TransportOptions['onServed'] {
    return this.opts.onServed;
  }

  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.opts.secret !== null) md.set(SECRET_HEADER, this.opts.secret);
    return md;
  }

  /** Refuses (and logs) a call without the right cluster secret. */
  authorize(call: { metadata: grpc.Metadata; getPeer(): string }, method: string): grpc.ServiceError | null {
    if (secretMatches(this.opts.secret, call.metadata.get(SECRET_HEADER))) return null;
    this.opts.log.warn({ peer: call.getPeer(), method }, 'refused a cluster call with a missing or wrong cluster secret');
    const err = new Error('wrong cluster secret') as grpc.ServiceError;
    err.code = grpc.status.UNAUTHENTICATED;
    err.details = 'wrong cluster secret';
    err.metadata = new grpc.Metadata();
    return err;
  }

  async listen(addr: string): Promise<number> {
    const internals = this.server as unknown as ServerInternals;
    if (internals.commonServerOptions) {
      internals.commonServerOptions.settings = { ...internals.commonServerOptions.settings, initialWindowSize: RECEIVE_WINDOW };
    }
    return new Promise((resolve, reject) => {
      this.server.bindAsync(addr, this.serverCredentials(), (err, port) => {
        if (err) return reject(err);
        for (const h of internals.http2Servers?.keys() ?? []) {
          h.on('session', (session: Http2Session) => {
            try {
              session.setLocalWindowSize(RECEIVE_WINDOW * 2);
            } catch {
              // the session closed before its settings were exchanged
            }
          });
        }
        resolve(port);
      });
    });
  }

  setPeer(id: NodeId, addr: string | null): void {
    this.dropStream(id);
    this.sendOnly.delete(id);
    const old = this.clients.get(id);
    if (old) old.close();
    this.clients.delete(id);
    this.sendBuffers.delete(id);
    if (addr === null) this.opts.peers.delete(id);
    else this.opts.peers.set(id, addr);
  }

  private client(id: NodeId): RaftServiceClient | null {
    let c = this.clients.get(id);
    if (c) return c;
    const addr = this.opts.peers.get(id);
    if (!addr) return null;
    c = new RaftServiceClient(addr, this.credentials(), CHANNEL_OPTIONS);
    this.clients.set(id, c);
    return c;
  }

  send(messages: Message[]): void {
    for (const m of messages) {
      if (m.type === 'snapshot') {
        void this.sendSnapshot(m);
        continue;
      }
      const lanes = bulky(m) || this.sendOnly.has(m.to) ? this.queues : this.small;
      const q = lanes.get(m.to) ?? [];
      q.push(m);
      lanes.set(m.to, q);
    }
    for (const id of this.queues.keys()) this.flush(id);
    for (const id of this.small.keys()) this.flushSmall(id);
  }

  /** Writes the small messages waiting for `id` on its stream, opening it when needed. */
  private flushSmall(id: NodeId): void {
    const q = this.small.get(id);
    if (!q || q.length === 0) return;
    if (this.sendOnly.has(id)) {
      this.small.delete(id);
      this.queues.set(id, [...(this.queues.get(id) ?? []), ...q]);
      this.flush(id);
      return;
    }
    let s = this.streams.get(id);
    if (s?.waiting) return;
    if (!s) {
      const c = this.client(id);
      if (!c) {
        this.small.set(id, []);
        return;
      }
      s = this.openStream(id, c);
    }
    this.small.set(id, []);
    if (!s.call.write({ messages: q.map(toPb) })) {
      s.waiting = true;
      s.call.once('drain', () => {
        s!.waiting = false;
        this.flushSmall(id);
      });
    }
  }

  private openStream(id: NodeId, c: RaftServiceClient): PeerStream {
    const started = process.hrtime.bigint();
    const call = c.stream(this.metadata(), (err) => {
      // The stream ended: it is opened again with the next message.
      if (this.streams.get(id)?.call === call) this.streams.delete(id);
      this.opts.onCall?.('Stream', err ? grpc.status[err.code] : 'OK', Number(process.hrtime.bigint() - started) / 1e9);
      // Cancelled here: the peer's address changed, or this node is stopping.
      if (!err || err.code === grpc.status.CANCELLED) return;
      if (err.code === grpc.status.UNIMPLEMENTED) {
        this.sendOnly.add(id);
        return;
      }
      this.opts.log.debug({ peer: id, err: err.message }, 'raft stream failed');
      this.opts.onUnreachable(id);
    });
    const s: PeerStream = { call, waiting: false };
    this.streams.set(id, s);
    return s;
  }

  private dropStream(id: NodeId): void {
    const s = this.streams.get(id);
    this.streams.delete(id);
    s?.call.cancel();
  }

  private flush(id: NodeId): void {
    if (this.inFlight.has(id)) return;
    const q = this.queues.get(id);
    if (!q || q.length === 0) return;
    const c = this.client(id);
    if (!c) {
      this.queues.set(id, []);
      return;
    }
    this.queues.set(id, []);
    this.inFlight.add(id);
    const started = process.hrtime.bigint();
    const req: SendRequest = { messages: q.map(toPb) };
    const method = RaftServiceService.send;
    // grpc-js copies the request into its frame after this returns: the buffer the request was
    // written into goes back to the peer's only once the call succeeded (after a failure the
    // frame may not have been made; a fresh buffer is lent next time).
    const lend: SendBuffer = { buf: this.sendBuffers.get(id) };
    this.sendBuffers.delete(id);
    const serialize = (r: SendRequest) => encodeSendRequest(r, lend);
    c.makeUnaryRequest(method.path, serialize, method.responseDeserialize, req, this.metadata(), { deadline: Date.now() + 5000 }, (err) => {
      this.inFlight.delete(id);
      if (!err && lend.buf && this.opts.peers.has(id)) this.sendBuffers.set(id, lend.buf);
      this.opts.onCall?.('Send', err ? grpc.status[err.code] : 'OK', Number(process.hrtime.bigint() - started) / 1e9);
      if (err) {
        this.opts.log.debug({ peer: id, err: err.message }, 'raft send failed');
        this.opts.onUnreachable(id);
      }
      this.flush(id);
    });
  }

  private async sendSnapshot(m: Extract<Message, { type: 'snapshot' }>): Promise<void> {
    const id = m.to;
    if (this.sendingSnapshot.has(id)) return;
    const c = this.client(id);
    if (!c) return this.opts.onSnapshotSent(id, false);
    this.sendingSnapshot.add(id);
    const started = process.hrtime.bigint();
    try {
      const { meta, chunks } = await this.opts.snapshotSource.open();
      const ok = await new Promise<boolean>((resolve) => {
        const call = c.installSnapshot(this.metadata(), (err: grpc.ServiceError | null, res: InstallSnapshotResponse) => {
          this.opts.onCall?.('InstallSnapshot', err ? grpc.status[err.code] : 'OK', Number(process.hrtime.bigint() - started) / 1e9);
          resolve(!err && res.accepted);
        });
        void (async () => {
          let offset = 0;
          let first = true;
          const frame = (data: Buffer, done: boolean): InstallSnapshotRequest => {
            const req: InstallSnapshotRequest = {
              from: first ? m.from : '',
              to: first ? m.to : '',
              term: m.term,
              meta: first ? toPbMeta(meta) : undefined,
              offset,
              data,
              done,
            };
            first = false;
            offset += data.length;
            return req;
          };
          try {
            // The source yields chunks of about SNAPSHOT_CHUNK bytes; back-pressure keeps memory flat.
            for await (const chunk of chunks) {
              if (!call.write(frame(chunk, false))) await new Promise((r) => call.once('drain', r));
            }
            call.write(frame(Buffer.alloc(0), true));
            call.end();
          } catch (e) {
            call.cancel();
            this.opts.log.warn({ peer: id, err: (e as Error).message }, 'could not stream a snapshot');
          }
        })();
      });
      this.opts.onSnapshotSent(id, ok);
    } catch (e) {
      this.opts.log.warn({ peer: id, err: (e as Error).message }, 'could not open a snapshot');
      this.opts.onSnapshotSent(id, false);
    } finally {
      this.sendingSnapshot.delete(id);
    }
  }

  private handlers(): RaftServiceServer {
    return {
      stream: (call: grpc.ServerReadableStream<SendRequest, SendResponse>, cb: grpc.sendUnaryData<SendResponse>) => {
        const denied = this.authorize(call, 'Stream');
        if (denied) return cb(denied);
        call.on('data', (req: SendRequest) => {
          for (const pm of req.messages) {
            const m = fromPb(pm);
            if (m && m.to === this.opts.self) this.opts.onMessage(m);
          }
        });
        call.on('end', () => cb(null, {}));
        call.on('error', () => {
          // the peer went away; its next message opens a new stream
        });
      },
      send: (call: grpc.ServerUnaryCall<SendRequest, SendResponse>, cb: grpc.sendUnaryData<SendResponse>) => {
        const denied = this.authorize(call, 'Send');
        if (denied) return cb(denied);
        for (const pm of call.request.messages) {
          const m = fromPb(pm);
          if (m && m.to === this.opts.self) this.opts.onMessage(m);
        }
        cb(null, {});
      },
      installSnapshot: (call: grpc.ServerReadableStream<InstallSnapshotRequest, InstallSnapshotResponse>, cb: grpc.sendUnaryData<InstallSnapshotResponse>) => {
        const denied = this.authorize(call, 'InstallSnapshot');
        if (denied) return cb(denied);
        let sink: Awaited<ReturnType<SnapshotSink['begin']>> | null = null;
        let header: { from: string; to: string; term: number; meta: SnapshotMeta } | null = null;
        let chain: Promise<void> = Promise.resolve();
        let failed = false;
        call.on('data', (req: InstallSnapshotRequest) => {
          chain = chain.then(async () => {
            if (failed) return;
            if (!header) {
              header = { from: req.from, to: req.to, term: req.term, meta: fromPbMeta(req.meta) };
              sink = await this.opts.snapshotSink.begin(header.meta);
            }
            if (req.data.length > 0) await sink!.write(req.data);
            if (req.done) {
              const ref = await sink!.finish();
              this.opts.onMessage({
                type: 'snapshot',
                from: header.from,
                to: header.to,
                term: header.term,
                snapshot: { meta: header.meta, data: ref },
              });
            }
          }).catch(async (e) => {
            failed = true;
            this.opts.log.warn({ err: (e as Error).message }, 'could not receive a snapshot');
            await sink?.abort();
          });
        });
        call.on('end', () => {
          void chain.then(() => cb(null, { term: header?.term ?? 0, accepted: !failed && header !== null }));
        });
        call.on('error', () => {
          failed = true;
          void sink?.abort();
        });
      },
    };
  }

  async close(): Promise<void> {
    for (const id of [...this.streams.keys()]) this.dropStream(id);
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
    // Peers keep their channels open; give calls in flight a moment, then cut what is left.
    await new Promise<void>((r) => {
      const force = setTimeout(() => {
        this.server.forceShutdown();
        r();
      }, 300);
      this.server.tryShutdown(() => {
        clearTimeout(force);
        r();
      });
    });
  }
}
