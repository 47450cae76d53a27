import * as grpc from '@grpc/grpc-js';
import {
  ClusterServiceClient,
  type JoinRequest,
  type JoinResponse,
  type LeaveResponse,
  type ProcessedResponse,
  type ProposeResponse,
  type StatusResponse,
  type TransferLeadershipResponse,
} from '../gen/trine/v1/cluster.js';
import type { ConfChange } from '../raft/core/index.js';
import { RAFT_STATE } from '../raft/log-store.js';
import { SECRET_HEADER } from '../raft/transport/grpc-transport.js';
import type { KvReader, WriteBatch } from '../store/kv.js';
import type { ApplyResult } from '../tasks/state-machine.js';
import { decodeResult } from './proposals.js';

export interface PeerSpec {
  id: string;
  addr: string;
}

/** The leader certainly did not append the command: retrying cannot create a duplicate. */
export class NotAppendedError extends Error {}

/**
 * The call failed after the leader may have appended the command (connection lost mid-call,
 * deadline): it may still commit, so a retry could register the task twice.
 */
export class AmbiguousError extends Error {}

/** This node's own address book; local configuration, never part of the replicated state. */
const ADDRESS_BOOK = RAFT_STATE.key('peers');

/** What a membership change carries besides the node id. */
export interface ConfChangeContext {
  raftAddr?: string;
}

export function encodeContext(ctx: ConfChangeContext): Buffer {
  return Buffer.from(JSON.stringify(ctx));
}

function decodeContext(b: Uint8Array | undefined): ConfChangeContext {
  if (!b || b.byteLength === 0) return {};
  try {
    return JSON.parse(Buffer.from(b).toString()) as ConfChangeContext;
  } catch {
    // a context this version does not understand carries no address
    return {};
  }
}

const CHANNEL_OPTIONS = {
  'grpc.max_send_message_length': 512 * 1024 * 1024,
  'grpc.max_receive_message_length': 512 * 1024 * 1024,
  'grpc.initial_reconnect_backoff_ms': 100,
  'grpc.max_reconnect_backoff_ms': 1000,
};

/**
 * The members' Raft addresses, and gRPC clients of their cluster service: forwarding writes
 * to the leader, status, membership and leadership transfer. Addresses given on the command
 * line are pinned: what the log says about a node's address does not override how this node
 * was told to reach it (through a proxy, a tunnel or a different interface).
 */
export class ClusterPeers {
  private readonly addrs = new Map<string, string>();
  private readonly pinned = new Set<string>();
  private readonly clients = new Map<string, ClusterServiceClient>();
  /** Called with every call's outcome, for metrics. */
  onCall?: (method: string, code: string, seconds: number) => void;

  constructor(
    readonly self: string,
    private readonly secret: string | null,
    private readonly credentials: () => grpc.ChannelCredentials,
  ) {}

  /** Addresses from the command line: they win over anything learnt later. */
  pin(peers: PeerSpec[]): void {
    for (const p of peers) {
      this.setAddress(p.id, p.addr);
      this.pinned.add(p.id);
    }
  }

  async load(reader: KvReader): Promise<void> {
    const b = await reader.get(ADDRESS_BOOK);
    if (!b) return;
    for (const [id, addr] of Object.entries(JSON.parse(b.toString()) as Record<string, string>)) {
      if (!this.pinned.has(id)) this.setAddress(id, addr);
    }
  }

  stage(wb: WriteBatch): void {
    wb.put(ADDRESS_BOOK, JSON.stringify(Object.fromEntries(this.addrs)));
  }

  has(id: string): boolean {
    return this.addrs.has(id);
  }

  raftAddress(id: string): string | undefined {
    return this.addrs.get(id);
  }

  /** Addresses of the other members (the transport's view). */
  raftAddresses(): Map<string, string> {
    const m = new Map(this.addrs);
    m.delete(this.self);
    return m;
  }

  all(): PeerSpec[] {
    return [...this.addrs].map(([id, addr]) => ({ id, addr }));
  }

  /** Returns whether the address changed. */
  setAddress(id: string, addr: string): boolean {
    if (!addr || this.addrs.get(id) === addr || (this.pinned.has(id) && this.addrs.has(id))) return false;
    this.addrs.set(id, addr);
    return true;
  }

  /** Records what a committed membership change says; returns whether the address book changed. */
  applyConfChange(cc: ConfChange): boolean {
    if (cc.type === 'removeNode') {
      if (cc.nodeId === this.self) return false;
      this.pinned.delete(cc.nodeId);
      return this.addrs.delete(cc.nodeId);
    }
    const ctx = decodeContext(cc.context);
    return ctx.raftAddr ? this.setAddress(cc.nodeId, ctx.raftAddr) : false;
  }

  private client(addr: string): ClusterServiceClient {
    let c = this.clients.get(addr);
    if (!c) {
      c = new ClusterServiceClient(addr, this.credentials(), { ...CHANNEL_OPTIONS, interceptors: [this.timing] });
      this.clients.set(addr, c);
    }
    return c;
  }

  /** Reports each call's method, status code and duration, whichever method it is. */
  private readonly timing: grpc.Interceptor = (options, nextCall) => {
    const method = options.method_definition.path.slice(options.method_definition.path.lastIndexOf('/') + 1);
    const started = process.hrtime.bigint();
    return new grpc.InterceptingCall(nextCall(options), {
      start: (metadata, _listener, next) =>
        next(metadata, {
          onReceiveStatus: (status, nextStatus) => {
            this.onCall?.(method, grpc.status[status.code] ?? String(status.code), Number(process.hrtime.bigint() - started) / 1e9);
            nextStatus(status);
          },
        }),
    });
  };

  private addressOf(id: string): string {
    const addr = this.addrs.get(id);
    if (!addr) throw new NotAppendedError(`no address known for node ${id}`);
    return addr;
  }

  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.secret !== null) md.set(SECRET_HEADER, this.secret);
    return md;
  }

  private unary<Res>(
    addr: string,
    timeoutMs: number,
    call: (c: ClusterServiceClient, md: grpc.Metadata, opts: grpc.CallOptions, cb: (err: grpc.ServiceError | null, res: Res) => void) => void,
  ): Promise<Res> {
    const c = this.client(addr);
    return new Promise((resolve, reject) => {
      call(c, this.metadata(), { deadline: Date.now() + timeoutMs }, (err, res) => (err ? reject(err) : resolve(res)));
    });
  }

  /** Sends an encoded command to the leader; resolves with its apply result and log index. */
  async forward(leader: string, command: Uint8Array, timeoutMs: number): Promise<{ index: number; result: ApplyResult }> {
    let res: ProposeResponse;
    try {
      res = await this.unary<ProposeResponse>(this.addressOf(leader), timeoutMs, (c, md, o, cb) =>
        c.propose({ command: Buffer.from(command), timeoutMs }, md, o, cb),
      );
    } catch (e) {
      throw classify(e);
    }
    return { index: res.index, result: decodeResult(res.resultJson, res.errorJson) };
  }

  status(id: string, timeoutMs: number): Promise<StatusResponse> {
    return this.unary<StatusResponse>(this.addressOf(id), timeoutMs, (c, md, o, cb) => c.status({}, md, o, cb));
  }

  /** Status of whoever listens at `addr` (a node not yet known by id). */
  statusAt(addr: string, timeoutMs: number): Promise<StatusResponse> {
    return this.unary<StatusResponse>(addr, timeoutMs, (c, md, o, cb) => c.status({}, md, o, cb));
  }

  /** Tells the leader the first batch this node has not processed yet. */
  async processed(leader: string, nodeId: string, nextBatchUid: number, timeoutMs: number): Promise<void> {
    await this.unary<ProcessedResponse>(this.addressOf(leader), timeoutMs, (c, md, o, cb) => c.processed({ nodeId, nextBatchUid }, md, o, cb));
  }

  joinVia(addr: string, req: JoinRequest, timeoutMs: number): Promise<JoinResponse> {
    return this.unary<JoinResponse>(addr, timeoutMs, (c, md, o, cb) => c.join(req, md, o, cb));
  }

  leave(leader: string, nodeId: string, timeoutMs: number): Promise<LeaveResponse> {
    return this.unary<LeaveResponse>(this.addressOf(leader), timeoutMs, (c, md, o, cb) => c.leave({ nodeId }, md, o, cb));
  }

  transferLeadership(leader: string, to: string, timeoutMs: number): Promise<TransferLeadershipResponse> {
    return this.unary<TransferLeadershipResponse>(this.addressOf(leader), timeoutMs, (c, md, o, cb) =>
      c.transferLeadership({ to, timeoutMs }, md, o, cb),
    );
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}

/** Sorts a failed forward into "safe to retry" and "may have been appended". */
function classify(e: unknown): Error {
  const err = e as grpc.ServiceError;
  if (err.code === grpc.status.UNAUTHENTICATED) return new Error(`the leader refused this node's cluster secret`);
  // The leader answered that it did not append (not the leader, transfer in progress,
  // overwritten by a newer leader), or the call never reached a server.
  if (err.code === grpc.status.FAILED_PRECONDITION || err.code === grpc.status.ABORTED) return new NotAppendedError(err.details);
  if (err.code === grpc.status.UNAVAILABLE && /No connection established|ECONNREFUSED|connection refused/i.test(err.details ?? '')) {
    return new NotAppendedError(err.details);
  }
  if (err instanceof NotAppendedError) return err;
  return new AmbiguousError(err.details ?? String(e));
}
