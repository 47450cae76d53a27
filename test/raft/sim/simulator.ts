// A seeded discrete-event simulation of a Raft cluster: virtual clock, ticks
// with per-node clock drift, a lossy reordering network, partitions (one-way
// too), crashes that lose unpersisted writes, restarts, client proposals,
// leadership transfers and membership changes. Every step runs the safety
// checks; at the end the network heals and the cluster must converge.
// Clients also read through any node, with a read index or, on a follower that
// holds a read lease, from its own log: a read must reflect every value that any
// node had applied before the read began.

import { ProposalError, mulberry32, randInt, type Message, type NodeId, type Rand, type Ready } from '../../../src/raft/core/index.js';
import { Checker } from './checker.js';
import { EventHeap } from './heap.js';
import { Network, PERFECT } from './network.js';
import { SimNode, type ReadyView, type SimRaftOptions } from './sim-node.js';
import { converge } from './converge.js';
import { describe, describeCluster, describeReady, readyView } from './trace.js';
import { chooseChaos, chooseMembershipOp, randomRaftOptions } from './scenario.js';

export interface SimOptions {
  seed: number;
  /** Virtual milliseconds of faults before healing. */
  chaosMs?: number;
  /** Ticks allowed for convergence once healed. */
  convergeTicks?: number;
  /** Collect a trace of every event (slow; used to explain a failure). */
  trace?: boolean;
}

export interface SimStats {
  events: number;
  proposals: number;
  acked: number;
  maxTerm: number;
  crashes: number;
  snapshotsSent: number;
  confChanges: number;
  convergedAfterTicks: number;
  /** Reads that got a read index and were answered (the others were dropped without a leader). */
  readsServed: number;
  /** Of those, reads a follower answered under its read lease. */
  leaseReadsServed: number;
}

type Event =
  | { kind: 'tick'; node: NodeId; inc: number }
  | { kind: 'deliver'; msg: Message }
  | { kind: 'ready'; node: NodeId; inc: number }
  | { kind: 'persist'; node: NodeId; inc: number }
  | { kind: 'restart'; node: NodeId }
  | { kind: 'chaos' }
  | { kind: 'heal' }
  | { kind: 'isolate'; node: NodeId }
  | { kind: 'client' }
  | { kind: 'read' }
  | { kind: 'readExpires'; ctx: number }
  | { kind: 'member' }
  | { kind: 'decommission'; node: NodeId; epoch: number }
  | { kind: 'snapReport'; from: NodeId; inc: number; to: NodeId; ok: boolean };

type Scheduled = Event & { at: number; seq: number };

export const TICK_MS = 10;

export class Simulation {
  readonly rand: Rand;
  readonly net: Network;
  readonly checker = new Checker();
  readonly nodes = new Map<NodeId, SimNode>();
  readonly raftOpts: SimRaftOptions;
  readonly stats: SimStats = {
    events: 0, proposals: 0, acked: 0, maxTerm: 0, crashes: 0, snapshotsSent: 0, confChanges: 0, convergedAfterTicks: -1, readsServed: 0, leaseReadsServed: 0,
  };
  /** Reads in flight by context: the node asked, its incarnation, values it must reflect, its read index once known. */
  private readonly reads = new Map<number, { node: NodeId; inc: number; need: number; index?: number; leased?: boolean }>();
  private nextReadCtx = 1;
  readonly traceLines: string[] = [];
  now = 0;
  chaos = true;
  private seq = 0;
  private heap = new EventHeap<Scheduled>();
  nextValue = 0;
  private nextNodeNo: number;
  private drift = new Map<NodeId, number>();
  /** Latest configuration applied by a leader, and at which index. */
  knownConf: { voters: NodeId[]; learners: NodeId[] } = { voters: [], learners: [] };
  private knownConfIndex = -1;
  private readonly opts: Required<SimOptions>;
  /** Chance, per Ready, of dying between persisting it and sending its messages. */
  private readonly crashAfterPersistRate: number;
  /** Chance that a newly elected leader is cut off moments later. */
  private readonly newLeaderFaultRate: number;
  /** Whether nodes keep stepping while a Ready is being persisted. */
  readonly asyncDriver: boolean;
  /**
   * Per-node lease lengths (nodes configured differently, as in a rolling change of
   * `--read-lease`), drawn from their own generator so that the other draws stay as they were.
   */
  private readonly leaseRand: Rand;
  private readonly mixedLeases: boolean;

  constructor(opts: SimOptions) {
    this.opts = { chaosMs: 2500, convergeTicks: 400, trace: false, ...opts };
    this.rand = mulberry32(opts.seed);
    this.net = new Network(mulberry32(opts.seed ^ 0x5bd1e995));
    this.raftOpts = randomRaftOptions(this.rand);
    this.leaseRand = mulberry32(opts.seed ^ 0x1ea5e);
    this.mixedLeases = this.leaseRand() < 0.3;
    this.crashAfterPersistRate = this.rand() < 0.25 ? 0.002 : 0.02;
    this.newLeaderFaultRate = this.rand() < 0.25 ? 0 : 0.4;
    this.asyncDriver = this.rand() < 0.5;
    const size = this.rand() < 0.6 ? 3 : 5;
    const ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
    this.nextNodeNo = size + 1;
    for (const id of ids) {
      const node = this.addNode(id);
      node.start(ids);
    }
    this.knownConf = { voters: ids, learners: [] };
  }

  trace(line: string | (() => string)): void {
    if (this.opts.trace) this.traceLines.push(`${this.now.toFixed(2).padStart(9)} ${typeof line === 'string' ? line : line()}`);
  }

  addNode(id: NodeId): SimNode {
    // Clocks drift by up to ±10%: ticks come every 9 to 11 ms, and the node's clock runs as they do.
    const tickEvery = TICK_MS * (0.9 + 0.2 * this.rand());
    const own = this.mixedLeases ? { followerLeaseMs: this.leaseRand() < 0.25 ? 0 : randInt(this.leaseRand, 15, 90) } : {};
    const node = new SimNode(id, { ...this.raftOpts, ...own }, this.opts.seed * 131 + this.nodes.size, () => (this.now * TICK_MS) / tickEvery);
    this.nodes.set(id, node);
    this.drift.set(id, tickEvery);
    return node;
  }

  newNodeId(): NodeId {
    return `n${this.nextNodeNo++}`;
  }

  schedule(delay: number, ev: Event): void {
    this.heap.push({ ...ev, at: this.now + delay, seq: this.seq++ });
  }

  startTicking(node: SimNode): void {
    this.schedule(this.rand() * TICK_MS, { kind: 'tick', node: node.id, inc: node.incarnation });
  }

  run(): SimStats {
    for (const node of this.nodes.values()) this.startTicking(node);
    this.schedule(50, { kind: 'chaos' });
    this.schedule(5, { kind: 'client' });
    this.schedule(7, { kind: 'read' });
    this.schedule(100, { kind: 'member' });
    this.runUntil(this.opts.chaosMs);
    this.healAll();
    converge(this, this.opts.convergeTicks);
    return this.stats;
  }

  runUntil(t: number): void {
    for (;;) {
      const ev = this.heap.peek();
      if (!ev || ev.at > t) break;
      this.heap.pop();
      this.now = ev.at;
      this.stats.events++;
      this.handle(ev);
    }
    this.now = t;
  }

  private handle(ev: Scheduled): void {
    switch (ev.kind) {
      case 'tick': {
        const node = this.nodes.get(ev.node)!;
        if (!node.up || node.incarnation !== ev.inc) return;
        // Now and then a node declines leases for a while (as a node busy indexing does).
        if (this.rand() < 0.02) node.rn!.wantLeases(this.rand() < 0.7);
        node.rn!.tick();
        this.touched(node);
        this.heap.push({ ...ev, at: this.now + this.drift.get(node.id)!, seq: this.seq++ });
        return;
      }
      case 'deliver':
        return this.deliver(ev.msg);
      case 'ready':
        return this.processReadies(ev.node, ev.inc);
      case 'persist':
        return this.persisted(ev.node, ev.inc);
      case 'restart': {
        const node = this.nodes.get(ev.node)!;
        if (node.up || node.decommissioned) return;
        this.trace(`${node.id} restarts`);
        node.start();
        this.startTicking(node);
        this.touched(node);
        return;
      }
      case 'chaos':
        if (!this.chaos) return;
        chooseChaos(this);
        this.schedule(randInt(this.rand, 30, 200), { kind: 'chaos' });
        return;
      case 'isolate':
        if (!this.chaos) return;
        this.trace(`isolate ${ev.node}`);
        this.net.partition([[ev.node], [...this.nodes.keys()].filter((id) => id !== ev.node)]);
        this.schedule(randInt(this.rand, 5, 100), { kind: 'heal' });
        return;
      case 'heal':
        if (!this.chaos) return;
        this.trace('heal network');
        this.net.heal();
        return;
      case 'client':
        // Once healed, only the barrier is proposed: with a tiny window and
        // one-entry messages, a steady client load can outpace a catch-up.
        if (!this.chaos) return;
        this.clientPropose();
        this.schedule(randInt(this.rand, 3, 25), { kind: 'client' });
        return;
      case 'read':
        if (!this.chaos) return;
        this.clientRead();
        this.schedule(randInt(this.rand, 1, 6), { kind: 'read' });
        return;
      case 'readExpires':
        // No leader answered in time (lost message, election, crash): the client gives up.
        this.reads.delete(ev.ctx);
        return;
      case 'member':
        if (!this.chaos) return;
        chooseMembershipOp(this);
        this.schedule(randInt(this.rand, 20, 200), { kind: 'member' });
        return;
      case 'decommission': {
        const node = this.nodes.get(ev.node)!;
        if (this.isMember(node.id) || node.decommissioned || node.memberEpoch !== ev.epoch) return;
        this.trace(`${node.id} decommissioned`);
        node.crash();
        node.decommissioned = true;
        return;
      }
      case 'snapReport': {
        const from = this.nodes.get(ev.from)!;
        if (!from.up || from.incarnation !== ev.inc) return;
        from.rn!.reportSnapshot(ev.to, ev.ok);
        this.touched(from);
        return;
      }
    }
  }

  private deliver(m: Message): void {
    const node = this.nodes.get(m.to);
    if (!node || !node.up) {
      if (m.type === 'snapshot') this.reportSnapshotLater(m, false);
      return;
    }
    this.trace(() => `deliver ${describe(m)}`);
    node.rn!.step(m);
    if (m.type === 'snapshot') this.reportSnapshotLater(m, true);
    this.touched(node);
  }

  private reportSnapshotLater(m: Message, ok: boolean): void {
    const from = this.nodes.get(m.from);
    if (!from) return;
    this.schedule(randInt(this.rand, 1, 30), { kind: 'snapReport', from: m.from, inc: from.incarnation, to: m.to, ok });
  }

  /** After any step: check election safety and queue a Ready pass after an fsync delay. */
  touched(node: SimNode): void {
    // As the driver does while it writes a Ready: what depends on no write leaves at once.
    if (node.outstanding) {
      const { messages, readStates } = node.rn!.takeUrgent();
      for (const m of messages) this.send(m);
      this.answerReads(node, { readStates });
    }
    const st = node.rn!.status();
    this.checker.checkRole(node.id, st.role, st.term);
    if (st.term > this.stats.maxTerm) this.stats.maxTerm = st.term;
    if (!node.readyScheduled) {
      node.readyScheduled = true;
      this.schedule(this.rand() * 2, { kind: 'ready', node: node.id, inc: node.incarnation });
    }
  }

  /**
   * Sync driver: take, persist, send, apply and advance each Ready in one go.
   * Async driver: take a Ready now and finish it after an fsync delay, while
   * ticks and messages keep stepping the node in between (as a real driver
   * awaiting its disk would).
   */
  private processReadies(id: NodeId, inc: number): void {
    const node = this.nodes.get(id)!;
    if (!node.up || node.incarnation !== inc) return;
    node.readyScheduled = false;
    const rn = node.rn!;
    if (this.asyncDriver) {
      if (node.outstanding || !rn.hasReady()) return;
      const view = readyView(rn);
      const rd = rn.ready();
      node.outstanding = { rd, view };
      this.trace(() => describeReady(id, rd));
      this.schedule(this.rand() * 3, { kind: 'persist', node: id, inc });
      return;
    }
    while (rn.hasReady()) {
      const view = readyView(rn);
      const rd = rn.ready();
      this.trace(() => describeReady(id, rd));
      if (!this.finishReady(node, rd, view)) return;
    }
  }

  private persisted(id: NodeId, inc: number): void {
    const node = this.nodes.get(id)!;
    if (!node.up || node.incarnation !== inc || !node.outstanding) return;
    const { rd, view } = node.outstanding;
    node.outstanding = undefined;
    if (this.finishReady(node, rd, view)) this.touched(node);
  }

  /** Persists, sends, applies and advances; false if the node died after persisting. */
  private finishReady(node: SimNode, rd: Ready, view: ReadyView): boolean {
    const crash = this.chaos && this.rand() < this.crashAfterPersistRate;
    const msgs = node.handleReady(rd, view, this.checker, crash);
    if (msgs === undefined) {
      this.trace(`${node.id} crashes right after persisting`);
      this.stats.crashes++;
      this.schedule(randInt(this.rand, 10, 300), { kind: 'restart', node: node.id });
      return false;
    }
    for (const m of msgs) this.send(m);
    this.answerReads(node, rd);
    const st = node.rn!.status();
    if (st.role === 'leader') this.observeConf(st.applied, st.confState);
    if (rd.softState?.role === 'leader' && this.chaos && this.rand() < this.newLeaderFaultRate) {
      // Cut a fresh leader off while its first entries are half replicated:
      // the raw material of figure 8.
      const delay = this.rand() * 15;
      this.trace(`new leader ${node.id} will be cut off in ${delay.toFixed(1)}ms`);
      this.schedule(delay, { kind: 'isolate', node: node.id });
    }
    return true;
  }

  private send(m: Message): void {
    const delays = this.net.delays(m);
    if (m.type === 'snapshot') {
      this.stats.snapshotsSent++;
      if (delays.length === 0) this.reportSnapshotLater(m, false);
    }
    if (delays.length === 0 && m.type === 'app' && this.net.isCut(m.from, m.to) && this.rand() < 0.5) {
      // The transport noticed the peer is unreachable.
      this.nodes.get(m.from)!.rn!.reportUnreachable(m.to);
    }
    // A snapshot is one logical transfer: the first copy that arrives counts.
    const copies = m.type === 'snapshot' ? delays.slice(0, 1) : delays;
    for (const d of copies) this.schedule(d, { kind: 'deliver', msg: m });
  }

  /** A leader applied a configuration: stop servers that left it, a little later. */
  private observeConf(applied: number, cs: { voters: NodeId[]; learners: NodeId[] }): void {
    if (applied <= this.knownConfIndex) return;
    const before = [...this.knownConf.voters, ...this.knownConf.learners];
    this.knownConf = cs;
    this.knownConfIndex = applied;
    for (const id of before) {
      if (!this.isMember(id)) {
        const epoch = this.nodes.get(id)!.memberEpoch;
        this.schedule(randInt(this.rand, 0, 300), { kind: 'decommission', node: id, epoch });
      }
    }
  }

  isMember(id: NodeId): boolean {
    return this.knownConf.voters.includes(id) || this.knownConf.learners.includes(id);
  }

  /** The up node that leads at the highest term, if any. */
  leader(): SimNode | undefined {
    let best: SimNode | undefined;
    let bestTerm = -1;
    for (const n of this.nodes.values()) {
      if (!n.up) continue;
      const st = n.rn!.status();
      if (st.role === 'leader' && st.term > bestTerm) {
        best = n;
        bestTerm = st.term;
      }
    }
    return best;
  }

  private clientPropose(): void {
    const leaders = [...this.nodes.values()].filter((n) => n.up && n.rn!.status().role === 'leader');
    if (leaders.length === 0) return;
    const node = leaders[randInt(this.rand, 0, leaders.length)]!;
    const value = `v${this.nextValue++}`;
    try {
      node.rn!.propose(new TextEncoder().encode(value));
      this.stats.proposals++;
      this.trace(`client proposes ${value} on ${node.id}`);
      this.touched(node);
    } catch (e) {
      if (!(e instanceof ProposalError)) throw e;
    }
  }

  /**
   * A client reads through a random node. Every node applies the same sequence of values,
   * so the values applied anywhere so far are the longest prefix any node holds: the read
   * must be answered with at least that many.
   */
  private clientRead(): void {
    const up = [...this.nodes.values()].filter((n) => n.up);
    if (up.length === 0) return;
    const node = up[randInt(this.rand, 0, up.length)]!;
    let need = 0;
    for (const n of this.nodes.values()) need = Math.max(need, n.values.length);
    const ctx = this.nextReadCtx++;
    this.schedule(300, { kind: 'readExpires', ctx });
    const lease = node.rn!.leaseRead();
    if (lease !== null) {
      // Whatever happens to the term meanwhile, applying up to the lease's index is enough.
      this.reads.set(ctx, { node: node.id, inc: node.incarnation, need, index: lease.index, leased: true });
      this.trace(`client reads through ${node.id} under its lease (ctx ${ctx}, index ${lease.index}, needs ${need} values)`);
      this.answerReads(node, { readStates: [] });
      return;
    }
    this.reads.set(ctx, { node: node.id, inc: node.incarnation, need });
    this.trace(`client reads through ${node.id} (ctx ${ctx}, needs ${need} values)`);
    node.rn!.readIndex(ctx);
    this.touched(node);
  }

  /** Takes the node's new read indexes, then serves every read of it that it has applied far enough for. */
  private answerReads(node: SimNode, rd: Pick<Ready, 'readStates'>): void {
    for (const s of rd.readStates) {
      const read = this.reads.get(s.ctx);
      if (!read || read.node !== node.id || read.inc !== node.incarnation) continue;
      read.index = s.index;
    }
    for (const [ctx, read] of this.reads) {
      if (read.node !== node.id || read.index === undefined) continue;
      if (read.inc !== node.incarnation) {
        this.reads.delete(ctx);
        continue;
      }
      if (node.appliedIndex < read.index) continue;
      this.reads.delete(ctx);
      this.stats.readsServed++;
      if (read.leased) this.stats.leaseReadsServed++;
      if (node.values.length < read.need) {
        this.checker.fail(
          `stale read on ${node.id} (ctx ${ctx}${read.leased ? ', under a lease' : ''}): read index ${read.index}, ${node.values.length} values applied, but ${read.need} were applied somewhere before the read began`,
        );
      }
    }
  }

  /** Tries a membership change on the current leader; false if it was refused. */
  proposeConfChange(type: 'addVoter' | 'addLearner' | 'removeNode', nodeId: NodeId): boolean {
    const leader = this.leader();
    if (!leader) return false;
    try {
      leader.rn!.proposeConfChange({ type, nodeId });
    } catch (e) {
      if (e instanceof ProposalError) return false;
      throw e;
    }
    this.stats.confChanges++;
    this.trace(`${leader.id} proposes ${type} ${nodeId}`);
    this.touched(leader);
    return true;
  }

  private healAll(): void {
    this.chaos = false;
    this.trace('--- heal everything ---');
    this.net.heal();
    this.net.quality = PERFECT;
    for (const n of this.nodes.values()) {
      if (!n.up && !n.decommissioned) this.schedule(this.rand() * 5, { kind: 'restart', node: n.id });
    }
  }

  describeCluster(): string {
    return describeCluster(this.nodes.values());
  }

}
