import { join, dirname, basename } from 'node:path';
import { ApiError, type ErrorBody } from '../errors/api-error.js';
import type { Options } from '../config/options.js';
import type { KvStore } from '../store/kv.js';
import { encodeCommand, decodeCommand, type Command } from '../tasks/command.js';
import type { ApplyResult, TaskStateMachine } from '../tasks/state-machine.js';
import {
  ProposalError,
  RawNode,
  applyConfChange,
  decodeConfChange,
  encodeConfChange,
  type ConfChange,
  type ConfState,
  type Entry,
  type Snapshot,
  type SnapshotMeta,
} from '../raft/core/index.js';
import { RaftDriver, type RaftTransport } from '../raft/driver.js';
import { RaftLogStore } from '../raft/log-store.js';
import { GrpcTransport } from '../raft/transport/grpc-transport.js';
import { ClusterPeers } from './cluster-peers.js';
import { registerClusterService } from './cluster-service.js';
import type { NodeStatus, Replicator } from './replicator.js';
import {
  APPLIED_META,
  fileSnapshotSink,
  installStateFile,
  pendingInstall,
  readAppliedMeta,
  stateSnapshotSource,
} from './state-snapshot.js';

export interface ReplicatorLogger {
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

export interface RaftReplicatorDeps {
  options: Options;
  store: KvStore;
  sm: TaskStateMachine;
  onApplied(r: ApplyResult): void;
  /** Halts processing before a snapshot replaces the applied state, and reloads everything after. */
  beforeInstall(): Promise<void>;
  afterInstall(): Promise<void>;
  log: ReplicatorLogger;
  tickMs?: number;
  writeTimeoutMs?: number;
  snapshotThreshold?: number;
  maxLogBytes?: number;
  onCall?(method: string, code: string, seconds: number): void;
}

interface PendingProposal {
  term: number;
  resolve(r: { index: number; result: ApplyResult }): void;
  reject(e: unknown): void;
}

/** A retry is safe: the entry was not committed at the index it was proposed at. */
class Superseded extends Error {}

export function noLeader(ms: number): ApiError {
  return new ApiError(
    'no_leader',
    `No leader could accept the write within ${Math.round(ms / 1000)} s: the cluster has no quorum right now. Retry later; searches are still served.`,
  );
}

/**
 * The task log on Raft. A single node is a Raft group of one with no transport: the same
 * code path. Followers forward proposals to the leader over gRPC and answer once they have
 * applied the entry themselves, so a client reads its own write on the node it wrote to.
 */
export class RaftReplicator implements Replicator {
  driver!: RaftDriver;
  logStore!: RaftLogStore;
  transport: GrpcTransport | null = null;
  peers!: ClusterPeers;
  private readonly pending = new Map<number, PendingProposal>();
  private readonly appliedWaiters = new Set<() => void>();
  private confState: ConfState = { voters: [], learners: [] };
  private appliedTerm = 0;
  readonly writeTimeoutMs: number;

  constructor(private readonly d: RaftReplicatorDeps) {
    this.writeTimeoutMs = d.writeTimeoutMs ?? 10_000;
  }

  get nodeId(): string {
    return this.d.options.nodeId;
  }

  get appliedIndex(): number {
    return this.d.sm.queue.appliedIndex;
  }

  async start(): Promise<void> {
    const { options, store } = this.d;
    const interrupted = await pendingInstall(store);
    if (interrupted) {
      this.d.log.warn({ file: interrupted }, 'finishing a snapshot installation interrupted by a crash');
      await installStateFile(store, interrupted);
      await this.d.afterInstall();
    }
    this.logStore = await RaftLogStore.open(store);
    const meta = await readAppliedMeta(store);
    this.confState = meta.index > 0 ? meta.confState : this.logStore.memory.snapshotMeta().confState;
    this.appliedTerm = meta.term;
    const initial = options.peers.length > 0 ? options.peers : [{ id: options.nodeId, addr: options.raftAddr ? `${options.raftAddr.host}:${options.raftAddr.port}` : '' }];
    this.peers = new ClusterPeers(options.nodeId, initial);
    const node = new RawNode({
      id: options.nodeId,
      storage: this.logStore.memory,
      applied: Math.max(meta.index, this.logStore.memory.snapshotMeta().index),
      electionTick: 10,
      heartbeatTick: 1,
      snapshotThreshold: this.d.snapshotThreshold ?? 10_000,
    });
    if (this.logStore.isEmpty()) node.bootstrap(initial.map((p) => p.id));

    let transport: RaftTransport = { send() {} };
    if (options.peers.length > 0) {
      const incoming = join(dirname(options.dbPath), `${basename(options.dbPath)}.incoming-snapshot`);
      this.transport = new GrpcTransport({
        self: options.nodeId,
        peers: this.peers.raftAddresses(),
        secret: options.clusterSecret,
        tls: null,
        onMessage: (m) => this.driver.step(m),
        onUnreachable: (id) => this.driver.reportUnreachable(id),
        onSnapshotSent: (id, ok) => this.driver.reportSnapshot(id, ok),
        snapshotSource: stateSnapshotSource(store),
        snapshotSink: fileSnapshotSink(incoming),
        log: this.d.log,
        ...(this.d.onCall ? { onCall: this.d.onCall } : {}),
      });
      transport = this.transport;
      this.peers.secret = options.clusterSecret;
      registerClusterService(this, `${options.httpAddr.host}:${options.httpAddr.port}`);
      const self = this.peers.raftAddress(options.nodeId)!;
      const listen = options.raftAddr ? `${options.raftAddr.host}:${options.raftAddr.port}` : self;
      await this.transport.listen(listen);
    }
    this.driver = new RaftDriver(
      node,
      store,
      this.logStore,
      transport,
      { apply: (ents) => this.apply(ents), installSnapshot: (s) => this.install(s) },
      { tickMs: this.d.tickMs ?? 100, maxLogBytes: this.d.maxLogBytes ?? 512 * 1024 * 1024 },
    );
    this.driver.on('error', (e) => this.d.log.error({ err: e }, 'raft driver error'));
    this.driver.on('softState', (s) => this.d.log.info({ role: s.role, leader: s.lead || null }, 'raft role changed'));
    this.driver.start();
    // A group of one need not wait for an election timeout to elect itself.
    if (options.peers.length === 0) this.driver.campaign();
  }

  async stop(): Promise<void> {
    await this.driver?.stop();
    await this.transport?.close();
    this.peers?.close();
    for (const p of this.pending.values()) p.reject(noLeader(0));
    this.pending.clear();
  }

  isLeader(): boolean {
    return this.driver?.isLeader() ?? false;
  }

  leaderId(): string | null {
    return this.driver?.soft.lead || null;
  }

  private async apply(entries: Entry[]): Promise<void> {
    for (const e of entries) {
      let cmd: Command = { kind: 'noop' };
      if (e.type === 'confChange') {
        const cc = decodeConfChange(e.data);
        this.confState = applyConfChange(this.confState, cc);
        this.peers.applyConfChange(cc);
        if (this.transport) {
          const addr = this.peers.raftAddress(cc.nodeId);
          this.transport.setPeer(cc.nodeId, cc.type === 'removeNode' ? null : (addr ?? null));
        }
      } else if (e.data.byteLength > 0) {
        cmd = decodeCommand(e.data);
      }
      const meta: SnapshotMeta = { index: e.index, term: e.term, confState: this.confState };
      const result = await this.d.sm.apply(e.index, cmd, {
        sync: false,
        extra: (wb) => wb.put(APPLIED_META, JSON.stringify(meta)),
      });
      this.appliedTerm = e.term;
      const p = this.pending.get(e.index);
      if (p) {
        this.pending.delete(e.index);
        if (p.term === e.term) p.resolve({ index: e.index, result });
        else p.reject(new Superseded());
      }
      if (cmd.kind !== 'noop') this.d.onApplied(result);
    }
    for (const w of [...this.appliedWaiters]) w();
  }

  private async install(s: Snapshot): Promise<void> {
    const path = Buffer.from(s.data).toString();
    this.d.log.info({ index: s.meta.index, term: s.meta.term }, 'installing a snapshot from the leader');
    await this.d.beforeInstall();
    await installStateFile(this.d.store, path);
    const wb = this.d.store.batch();
    this.logStore.stageInstalledSnapshot(wb, s.meta);
    await wb.commit({ sync: true });
    this.logStore.commitInstalledSnapshot(s.meta);
    this.confState = s.meta.confState;
    this.appliedTerm = s.meta.term;
    for (const [index, p] of this.pending) {
      if (index <= s.meta.index) {
        this.pending.delete(index);
        p.reject(new Superseded());
      }
    }
    await this.d.afterInstall();
    for (const w of [...this.appliedWaiters]) w();
  }

  /** Resolves once this node has applied `index`, or false after `timeoutMs`. */
  waitApplied(index: number, timeoutMs: number): Promise<boolean> {
    if (this.appliedIndex >= index) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (this.appliedIndex >= index) {
          clearTimeout(timer);
          this.appliedWaiters.delete(check);
          resolve(true);
        }
      };
      const timer = setTimeout(() => {
        this.appliedWaiters.delete(check);
        resolve(false);
      }, timeoutMs);
      this.appliedWaiters.add(check);
    });
  }

  /** Proposes on this node, which must lead. Resolves once applied here. */
  proposeLocal(data: Uint8Array): Promise<{ index: number; result: ApplyResult }> {
    const { index, term } = this.driver.propose(data);
    return new Promise((resolve, reject) => this.pending.set(index, { term, resolve, reject }));
  }

  proposeConfChange(cc: ConfChange): Promise<{ index: number; result: ApplyResult }> {
    const { index, term } = this.driver.proposeConfChange(cc);
    return new Promise((resolve, reject) => this.pending.set(index, { term, resolve, reject }));
  }

  async propose(cmd: Command): Promise<ApplyResult> {
    const data = encodeCommand(cmd);
    const deadline = Date.now() + this.writeTimeoutMs;
    for (;;) {
      try {
        if (this.isLeader()) return (await this.proposeLocal(data)).result;
        const leader = this.leaderId();
        if (leader && leader !== this.nodeId && this.peers.has(leader)) {
          const { index, result } = await this.peers.forward(leader, data, Math.max(100, deadline - Date.now()));
          // Answer only once this node has the entry too, so the client can read it here.
          await this.waitApplied(index, Math.max(100, deadline - Date.now()));
          return result;
        }
      } catch (e) {
        if (e instanceof ApiError && e.code !== 'no_leader') throw e;
        if (!(e instanceof Superseded || e instanceof ProposalError || e instanceof ApiError || isRetryable(e))) throw e;
        this.d.log.debug({ err: (e as Error).message }, 'retrying a proposal');
      }
      if (Date.now() >= deadline) throw noLeader(this.writeTimeoutMs);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  status(): { self: NodeStatus; nodes: NodeStatus[] } {
    const st = this.driver.status();
    const leader = st.lead || null;
    const self: NodeStatus = {
      id: st.id,
      role: this.d.options.peers.length === 0 ? 'single' : st.role === 'follower' && st.confState.learners.includes(st.id) ? 'learner' : st.role,
      term: st.term,
      leader,
      commitIndex: st.commit,
      appliedIndex: this.appliedIndex,
      lag: null,
    };
    const nodes: NodeStatus[] = [];
    for (const id of [...st.confState.voters, ...st.confState.learners]) {
      const pr = st.progress[id];
      const n: NodeStatus =
        id === st.id
          ? { ...self }
          : { id, role: st.confState.learners.includes(id) ? 'learner' : 'follower', term: st.term, leader, commitIndex: 0, appliedIndex: 0, lag: null };
      if (pr) {
        n.lag = Math.max(0, st.lastIndex - pr.match);
        n.reachable = pr.recentActive;
        if (id !== st.id) n.appliedIndex = pr.match;
      }
      const addr = this.peers.raftAddress(id);
      if (addr) n.address = addr;
      nodes.push(n);
    }
    if (st.role === 'leader') self.lag = 0;
    return { self, nodes };
  }

  /** Adds a node as a learner; it is promoted to voter once caught up. */
  async addNode(id: string, raftAddr: string): Promise<void> {
    const context = Buffer.from(JSON.stringify({ raftAddr }));
    this.peers.setAddress(id, raftAddr);
    await this.proposeConfChange({ type: 'addLearner', nodeId: id, context });
  }

  async promote(id: string): Promise<void> {
    await this.proposeConfChange({ type: 'addVoter', nodeId: id });
  }

  async removeNode(id: string): Promise<void> {
    await this.proposeConfChange({ type: 'removeNode', nodeId: id });
  }

  transferLeadership(to: string): void {
    this.driver.transferLeadership(to);
  }
}

function isRetryable(e: unknown): boolean {
  return typeof e === 'object' && e !== null && 'retryable' in e && (e as { retryable: boolean }).retryable;
}

export function encodeResult(r: ApplyResult): { resultJson: string; errorJson: string } {
  if (r.kind === 'config' && r.result instanceof ApiError) {
    return { resultJson: '', errorJson: JSON.stringify(r.result.toJSON()) };
  }
  return { resultJson: JSON.stringify(r), errorJson: '' };
}

export function decodeResult(resultJson: string, errorJson: string): ApplyResult {
  if (errorJson) {
    const e = JSON.parse(errorJson) as ErrorBody;
    return { kind: 'config', result: new ApiError(e.code as never, e.message) };
  }
  return JSON.parse(resultJson) as ApplyResult;
}

export { encodeConfChange };
