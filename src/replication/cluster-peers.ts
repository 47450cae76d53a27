import * as grpc from '@grpc/grpc-js';
import { ClusterServiceClient, type ProposeResponse } from '../gen/trine/v1/cluster.js';
import type { ConfChange } from '../raft/core/index.js';
import { SECRET_HEADER } from '../raft/transport/grpc-transport.js';
import type { ApplyResult } from '../tasks/state-machine.js';
import { decodeResult } from './raft-replicator.js';

export interface PeerSpec {
  id: string;
  addr: string;
}

/** Raised when a forwarded call may be retried (leader moved, peer unreachable). */
export class RetryableError extends Error {
  readonly retryable = true;
}

/** The members' Raft addresses and gRPC clients for forwarding writes to the leader. */
export class ClusterPeers {
  private readonly addrs = new Map<string, string>();
  private readonly clients = new Map<string, ClusterServiceClient>();
  secret: string | null = null;

  constructor(
    readonly self: string,
    initial: PeerSpec[],
  ) {
    for (const p of initial) if (p.addr) this.addrs.set(p.id, p.addr);
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

  setAddress(id: string, addr: string): void {
    if (this.addrs.get(id) === addr) return;
    this.addrs.set(id, addr);
    this.clients.get(id)?.close();
    this.clients.delete(id);
  }

  applyConfChange(cc: ConfChange): void {
    if (cc.type === 'removeNode') {
      this.addrs.delete(cc.nodeId);
      this.clients.get(cc.nodeId)?.close();
      this.clients.delete(cc.nodeId);
      return;
    }
    if (cc.context && cc.context.byteLength > 0) {
      try {
        const ctx = JSON.parse(Buffer.from(cc.context).toString()) as { raftAddr?: string };
        if (ctx.raftAddr) this.setAddress(cc.nodeId, ctx.raftAddr);
      } catch {
        // a context this version does not understand carries no address
      }
    }
  }

  client(id: string): ClusterServiceClient {
    let c = this.clients.get(id);
    if (!c) {
      const addr = this.addrs.get(id);
      if (!addr) throw new RetryableError(`no address known for node ${id}`);
      c = new ClusterServiceClient(addr, grpc.credentials.createInsecure(), {
        'grpc.max_send_message_length': 512 * 1024 * 1024,
        'grpc.max_receive_message_length': 512 * 1024 * 1024,
      });
      this.clients.set(id, c);
    }
    return c;
  }

  metadata(): grpc.Metadata {
    const md = new grpc.Metadata();
    if (this.secret !== null) md.set(SECRET_HEADER, this.secret);
    return md;
  }

  /** Sends an encoded command to the leader; resolves with its apply result and log index. */
  forward(leader: string, command: Uint8Array, timeoutMs: number): Promise<{ index: number; result: ApplyResult }> {
    const c = this.client(leader);
    return new Promise((resolve, reject) => {
      c.propose(
        { command: Buffer.from(command), timeoutMs },
        this.metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: grpc.ServiceError | null, res: ProposeResponse) => {
          if (err) {
            if (err.code === grpc.status.UNAUTHENTICATED) return reject(new Error(`the leader refused this node's cluster secret`));
            return reject(new RetryableError(err.message));
          }
          try {
            resolve({ index: res.index, result: decodeResult(res.resultJson, res.errorJson) });
          } catch (e) {
            reject(e);
          }
        },
      );
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
