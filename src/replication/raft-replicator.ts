import { readFileSync } from 'node:fs';
import { join, dirname, basename } from 'node:path';
import type { Options } from '../config/options.js';
import type { KvStore } from '../store/kv.js';
import { encodeCommand, decodeCommand, type Command } from '../tasks/command.js';
import type { ApplyResult, TaskStateMachine } from '../tasks/state-machine.js';
import {
  ProposalError,
  RawNode,
  applyConfChange,
  decodeConfChange,
  type ConfChange,
  type ConfState,
  type Entry,
  type Snapshot,
  type SnapshotMeta,
} from '../raft/core/index.js';
import { RaftDriver, type RaftTransport } from '../raft/driver.js';
import { RaftLogStore } from '../raft/log-store.js';
import { GrpcTransport, type TlsOptions } from '../raft/transport/grpc-transport.js';
import { AmbiguousError, ClusterPeers, NotAppendedError } from './cluster-peers.js';
import { registerClusterService } from './cluster-service.js';
import { noLeader, PendingProposals, ProposalTimeout, removedError, Superseded, unconfirmed, type Applied } from './proposals.js';
import { Membership } from './membership.js';
import { ReadIndexer } from './read-index.js';
import { ProcessingReports } from './processing-reports.js';
import { ReplicaHealth, type Lag, type Readiness } from './replica-health.js';
import type { NodeStatus, Replicator } from './replicator.js';
import {
  APPLIED_META,
  fileSnapshotSink,
  finishInstall,
  installStateFile,
  pendingInstall,
  readAppliedMeta,
  removeStaleSnapshotFiles,
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
  /** This node became leader (it must now decide batches) or stopped being it. */
  onRoleChange?(leader: boolean): void;
  /** A member reported how far it processed (the leader may now settle batches). */
  onProcessingReport?(): void;
  /** Halts processing before a snapshot replaces the applied state, and reloads everything after. */
  beforeInstall(): Promise<void>;
  afterInstall(): Promise<void>;
  log: ReplicatorLogger;
  tickMs?: number;
  maxLogBytes?: number;
  onCall?(method: string, code: string, seconds: number): void;
  /** Outcome of every gRPC call this node served, for metrics. */
  onServed?(method: string, code: string, seconds: number): void;
}

/**
 * The task log on Raft. A single node is a Raft group of one: the same code path, with no
 * transport unless it has a Raft address (then other nodes can join it). Followers forward
 * proposals to the leader over gRPC and answer once they have applied the entry themselves,
 * so a client reads its own write on the node it wrote to.
 */
export class RaftReplicator implements Replicator {
  driver!: RaftDriver;
  logStore!: RaftLogStore;
  transport: GrpcTransport | null = null;
  peers!: ClusterPeers;
  membership!: Membership;
  removed = false;
  private rejoining = false;
  /** The last command's encoding: each waits for the one before, so commands are proposed in the order they came. */
  private encoding: Promise<unknown> = Promise.resolve();
  private readonly pending = new PendingProposals();
  private readonly appliedWaiters = new Set<() => void>();
  private reads: ReadIndexer | null = null;
  private healthCheck: ReplicaHealth | null = null;
  processing: ProcessingReports | null = null;
  private sampler: NodeJS.Timeout | null = null;
  private confState: ConfState = { voters: [], learners: [] };
  readonly writeTimeoutMs: number;

  constructor(readonly d: RaftReplicatorDeps) {
    this.writeTimeoutMs = d.options.writeTimeoutMs;
  }

  get nodeId(): string {
    return this.d.options.nodeId;
  }

  get appliedIndex(): number {
    return this.d.sm.queue.appliedIndex;
  }

  get options(): Options {
    return this.d.options;
  }

  /** Whether this node talks to others (or may, once they join it). */
  get clustered(): boolean {
    const o = this.d.options;
    return o.peers.length > 0 || o.raftAddr !== null || o.join !== null;
  }

  get raftAddr(): string {
    const o = this.d.options;
    if (o.raftAddr) return `${o.raftAddr.host}:${o.raftAddr.port}`;
    return o.peers.find((p) => p.id === o.nodeId)?.addr ?? '';
  }

  get httpAddr(): string {
    const a = this.d.options.httpAddr;
    return `${a.host}:${a.port}`;
  }

  private tls(): TlsOptions | null {
    const t = this.d.options.raftTls;
    return t ? { cert: readFileSync(t.cert), key: readFileSync(t.key), ca: readFileSync(t.ca) } : null;
  }

  async start(): Promise<void> {
    const { options, store } = this.d;
    const incoming = join(dirname(options.dbPath), `${basename(options.dbPath)}.incoming-snapshot`);
    const interrupted = await pendingInstall(store);
    if (interrupted) {
      this.d.log.warn({ file: interrupted }, 'finishing a snapshot installation interrupted by a crash');
      const meta = await installStateFile(store, interrupted);
      const wb = store.batch();
      RaftLogStore.stageInstalled(wb, meta, await RaftLogStore.readHardState(store));
      await finishInstall(wb, interrupted);
      await this.d.afterInstall();
    }
    removeStaleSnapshotFiles(incoming, null);
    this.logStore = await RaftLogStore.open(store);
    const meta = await readAppliedMeta(store);
    this.confState = meta.index > 0 ? meta.confState : this.logStore.memory.snapshotMeta().confState;

    const tls = this.tls();
    let transport: GrpcTransport | null = null;
    this.peers = new ClusterPeers(options.nodeId, options.clusterSecret, () => transport!.credentials());
    if (this.d.onCall) this.peers.onCall = this.d.onCall;
    this.peers.pin(options.peers);
    await this.peers.load(store);
    if (this.raftAddr) this.peers.setAddress(options.nodeId, this.raftAddr);
    this.membership = new Membership(this);

    let bootstrap: string[] | null = null;
    let rejoinVia: string | null = null;
    if (this.logStore.isEmpty()) {
      if (options.peers.length > 0) {
        // Construct the transport early: probing the others needs its credentials.
        transport = this.makeTransport(tls, incoming);
        const seen = await this.membership.probeExisting(options.peers.filter((p) => p.id !== options.nodeId));
        if (seen) {
          // The cluster exists and this node lost its data (or starts late): it must not found
          // a second history, nor vote again in a term it may have voted in before.
          this.d.log.warn({ term: seen.term }, 'the cluster already exists: joining it with an empty log');
          const wb = store.batch();
          const hard = { term: seen.term, vote: options.nodeId, commit: 0 };
          RaftLogStore.stageHardState(wb, hard);
          await wb.commit({ sync: true });
          this.logStore.memory.setHardState(hard);
          // A running cluster's leader may believe this node still holds its old log.
          rejoinVia = seen.via;
        } else bootstrap = options.peers.map((p) => p.id);
      } else if (options.join === null) bootstrap = [options.nodeId];
    }
    const node = new RawNode({
      id: options.nodeId,
      storage: this.logStore.memory,
      applied: Math.max(meta.index, this.logStore.memory.snapshotMeta().index),
      electionTick: 10,
      heartbeatTick: 1,
      followerLeaseMs: options.readLeaseMs,
      snapshotThreshold: options.raftSnapshotThreshold,
      // Keep a margin of entries behind each snapshot for slightly late followers, but never
      // more than half the threshold, so that a small threshold really compacts.
      compactionMargin: Math.min(1_000, Math.floor(options.raftSnapshotThreshold / 2)),
    });
    if (bootstrap) node.bootstrap(bootstrap);

    if (this.clustered) {
      transport ??= this.makeTransport(tls, incoming);
      this.transport = transport;
      registerClusterService(this, this.httpAddr);
      await transport.listen(this.raftAddr);
    }
    this.driver = new RaftDriver(
      node,
      store,
      this.logStore,
      this.transport ?? ({ send() {} } satisfies RaftTransport),
      { apply: (ents) => this.apply(ents), installSnapshot: (s) => this.install(s) },
      { tickMs: this.d.tickMs ?? 100, maxLogBytes: this.d.maxLogBytes ?? 512 * 1024 * 1024 },
    );
    this.driver.on('error', (e) => this.d.log.error({ err: e }, 'raft driver error'));
    this.reads = new ReadIndexer(this.driver);
    // A follower hears from the leader every tick: missing an election timeout and a half of them means it is cut off.
    const contactMs = 15 * (this.d.tickMs ?? 100);
    const queue = this.d.sm.queue;
    const driver = this.driver;
    this.healthCheck = new ReplicaHealth(
      {
        nodeId: options.nodeId,
        raft: () => ({ role: driver.soft.role, lead: driver.soft.lead, commit: driver.node.committed(), confState: this.confState }),
        contact: driver.contact,
        appliedIndex: () => queue.appliedIndex,
        reflectedIndex: () => queue.reflectedIndex(),
        dueBatches: () => queue.decidedFinish.values(),
        removed: () => this.removed,
      },
      { maxLagEntries: options.healthMaxLagEntries, maxLagMs: options.healthMaxLagMs, contactMs },
    );
    this.sampler = setInterval(() => this.healthCheck?.sample(), this.d.tickMs ?? 100);
    this.sampler.unref();
    this.processing = new ProcessingReports(
      {
        nodeId: options.nodeId,
        isLeader: () => this.isLeader(),
        leaderId: () => this.leaderId(),
        others: () => [...this.confState.voters, ...this.confState.learners].filter((id) => id !== options.nodeId),
        lastHeard: (id) => this.driver.contact.lastHeard.get(id),
        nextUnprocessed: () => this.d.sm.queue.pending[0]?.uid ?? this.d.sm.queue.nextBatchUid,
        send: (leader, next) => this.peers.processed(leader, options.nodeId, next, 2_000),
        onReport: () => this.d.onProcessingReport?.(),
      },
      { contactMs, maxWaitMs: options.healthMaxLagMs },
    );
    this.driver.on('softState', (s) => {
      this.d.log.info({ role: s.role, leader: s.lead || null }, 'raft role changed');
      this.processing?.reset();
      this.processing?.report();
      this.d.onRoleChange?.(s.role === 'leader');
    });
    this.driver.start();
    // A group of one need not wait for an election timeout to elect itself.
    const voters = node.confState().voters;
    if (voters.length === 1 && voters[0] === options.nodeId) this.driver.campaign();
    if (rejoinVia !== null) {
      this.rejoining = true;
      try {
        await this.membership.join(rejoinVia, true);
      } finally {
        this.rejoining = false;
      }
    } else if (options.join !== null && this.logStore.isEmpty()) await this.membership.join(options.join);
    this.membership.start();
  }

  private makeTransport(tls: TlsOptions | null, incoming: string): GrpcTransport {
    const { options, store } = this.d;
    return new GrpcTransport({
      self: options.nodeId,
      peers: this.peers.raftAddresses(),
      secret: options.clusterSecret,
      tls,
      // While rejoining, the leader's messages assume the log this node lost: ignore them until
      // the leader has reset this node's membership.
      onMessage: (m) => {
        if (!this.rejoining) this.driver?.step(m);
      },
      onUnreachable: (id) => this.driver?.reportUnreachable(id),
      onSnapshotSent: (id, ok) => this.driver?.reportSnapshot(id, ok),
      snapshotSource: stateSnapshotSource(store),
      snapshotSink: fileSnapshotSink(incoming),
      log: this.d.log,
      ...(this.d.onCall ? { onCall: this.d.onCall } : {}),
      ...(this.d.onServed ? { onServed: this.d.onServed } : {}),
    });
  }

  async stop(): Promise<void> {
    this.membership?.stop();
    this.reads?.close();
    if (this.sampler) clearInterval(this.sampler);
    await this.driver?.stop();
    await this.transport?.close();
    this.peers?.close();
    this.pending.rejectAll(new NotAppendedError('the node is stopping'));
  }

  /** Hands leadership over before a planned stop, so that writes pause for a moment only. */
  async prepareShutdown(timeoutMs = 3000): Promise<void> {
    await this.membership?.handOver(timeoutMs);
  }

  isLeader(): boolean {
    return this.driver?.isLeader() ?? false;
  }

  leaderId(): string | null {
    return this.driver?.soft.lead || null;
  }

  currentConfState(): ConfState {
    return this.confState;
  }

  private async apply(entries: Entry[]): Promise<void> {
    for (const e of entries) {
      let cmd: Command = { kind: 'noop' };
      let addressesChanged = false;
      if (e.type === 'confChange') {
        const cc = decodeConfChange(e.data);
        this.confState = applyConfChange(this.confState, cc);
        addressesChanged = this.peers.applyConfChange(cc);
        if (cc.nodeId === this.nodeId) {
          // Added back after a removal (a rejoin after data loss): a member again.
          this.removed = cc.type === 'removeNode';
          if (this.removed) this.d.log.warn({ index: e.index }, 'this node was removed from the cluster');
        }
        // Only a removal or a new address touches the transport: the bootstrap entries carry
        // no address, and a node that joined knows the members' addresses from its join.
        if (this.transport && cc.nodeId !== this.nodeId && (cc.type === 'removeNode' || addressesChanged)) {
          this.transport.setPeer(cc.nodeId, cc.type === 'removeNode' ? null : (this.peers.raftAddress(cc.nodeId) ?? null));
        }
      } else if (e.data.byteLength > 0) {
        cmd = decodeCommand(e.data);
      }
      const meta: SnapshotMeta = { index: e.index, term: e.term, confState: this.confState };
      const result = await this.d.sm.apply(e.index, cmd, {
        sync: false,
        extra: (wb) => {
          wb.put(APPLIED_META, JSON.stringify(meta));
          if (addressesChanged) this.peers.stage(wb);
        },
      });
      this.pending.settle(e.index, e.term, result);
      if (cmd.kind !== 'noop') this.d.onApplied(result);
    }
    this.wantLeases();
    this.recheckWaits();
  }

  /**
   * A node with batches to process writes and indexes at once: were it leased, every commit
   * would wait for its disk. It declines read leases meanwhile (its reads take the read index).
   */
  private wantLeases(): void {
    this.driver.node.wantLeases(this.d.sm.queue.pending.length === 0);
  }

  batchProcessed(): void {
    this.wantLeases();
    this.recheckWaits();
    this.processing?.report();
  }

  settleDelay(uid: number, finishedAt: number): number {
    return this.processing?.waitFor(uid, finishedAt) ?? 0;
  }

  private recheckWaits(): void {
    for (const w of [...this.appliedWaiters]) w();
  }

  private async install(s: Snapshot): Promise<void> {
    const path = Buffer.from(s.data).toString();
    this.d.log.info({ index: s.meta.index, term: s.meta.term }, 'installing a snapshot from the leader');
    await this.d.beforeInstall();
    await installStateFile(this.d.store, path);
    const wb = this.d.store.batch();
    this.logStore.stageInstalledSnapshot(wb, s.meta);
    await finishInstall(wb, path);
    this.logStore.commitInstalledSnapshot(s.meta);
    this.confState = s.meta.confState;
    this.removed = ![...s.meta.confState.voters, ...s.meta.confState.learners].includes(this.nodeId);
    this.pending.skippedUpTo(s.meta.index);
    await this.d.afterInstall();
    this.recheckWaits();
  }

  /** Resolves true once `pred()` holds (checked after every applied entry), false after `timeoutMs`. */
  waitUntil(pred: () => boolean, timeoutMs: number): Promise<boolean> {
    if (pred()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = () => {
        if (!pred()) return;
        clearTimeout(timer);
        this.appliedWaiters.delete(check);
        resolve(true);
      };
      const timer = setTimeout(() => {
        this.appliedWaiters.delete(check);
        resolve(false);
      }, timeoutMs);
      this.appliedWaiters.add(check);
    });
  }

  waitApplied(index: number, timeoutMs: number): Promise<boolean> {
    return this.waitUntil(() => this.appliedIndex >= index, timeoutMs);
  }

  readIndex(timeoutMs: number): Promise<number | null> {
    return this.reads ? this.reads.readIndex(timeoutMs) : Promise.resolve(null);
  }

  leaseRead(): { index: number; term: number } | null {
    return this.reads ? this.driver.node.leaseRead() : null;
  }

  term(): number {
    return this.driver.node.term();
  }

  alone(): boolean {
    const voters = this.confState.voters;
    return voters.length === 1 && voters[0] === this.nodeId && !this.removed;
  }

  lag(): Lag {
    return this.healthCheck?.lag() ?? { entries: 0, ms: 0 };
  }

  readiness(): Readiness {
    return this.healthCheck?.readiness() ?? { ready: false, lag: { entries: 0, ms: 0 }, reason: `node \`${this.nodeId}\` is starting` };
  }

  async catchUp(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    const commit = this.alone() ? this.driver.status().commit : await this.readIndex(timeoutMs);
    if (commit === null) return false;
    return this.waitApplied(commit, Math.max(1, deadline - Date.now()));
  }

  /** Proposes on this node, which must lead. Resolves once applied here. */
  proposeLocal(data: Uint8Array, timeoutMs: number): Promise<Applied> {
    return this.pending.track(this.driver.propose(data), timeoutMs);
  }

  proposeConfChange(cc: ConfChange, timeoutMs: number): Promise<Applied> {
    return this.pending.track(this.driver.proposeConfChange(cc), timeoutMs);
  }

  async propose(cmd: Command): Promise<ApplyResult> {
    if (this.removed) throw removedError();
    // Encoded in turns (a batch of documents is megabytes to copy), one command after another.
    const encoded = this.encoding.then(() => encodeCommand(cmd));
    this.encoding = encoded.catch(() => undefined);
    const data = await encoded;
    const deadline = Date.now() + this.writeTimeoutMs;
    for (;;) {
      const left = Math.max(1, deadline - Date.now());
      try {
        if (this.isLeader()) return (await this.proposeLocal(data, left)).result;
        const leader = this.leaderId();
        if (leader && leader !== this.nodeId && this.peers.has(leader)) {
          const { index, result } = await this.peers.forward(leader, data, left);
          // Answer only once this node has the entry too, so the client can read it here.
          await this.waitApplied(index, Math.max(100, deadline - Date.now()));
          return result;
        }
      } catch (e) {
        if (e instanceof ProposalTimeout) throw unconfirmed(this.writeTimeoutMs, e.message);
        if (e instanceof AmbiguousError) throw unconfirmed(this.writeTimeoutMs, `the leader did not answer: ${e.message}`);
        // Not appended anywhere: retrying cannot create a duplicate.
        if (!(e instanceof Superseded || e instanceof ProposalError || e instanceof NotAppendedError)) throw e;
        this.d.log.debug({ err: (e as Error).message }, 'retrying a proposal');
      }
      if (Date.now() >= deadline) throw noLeader(this.writeTimeoutMs);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  status(): { self: NodeStatus; nodes: NodeStatus[] } {
    const st = this.driver.status();
    const self: NodeStatus = {
      id: st.id,
      role: st.role === 'follower' && st.confState.learners.includes(st.id) ? 'learner' : st.role,
      term: st.term,
      leader: st.lead || null,
      commitIndex: st.commit,
      appliedIndex: this.appliedIndex,
      lag: st.role === 'leader' ? 0 : null,
    };
    return { self, nodes: [self] };
  }

  clusterView(timeoutMs?: number) {
    return this.membership.view(timeoutMs);
  }

  addNode(id: string, raftAddr: string): Promise<void> {
    return this.membership.addNode(id, raftAddr);
  }

  removeNode(id: string): Promise<void> {
    return this.membership.removeNode(id);
  }

  transferLeadership(to: string | null): Promise<string> {
    return this.membership.transfer(to);
  }
}
