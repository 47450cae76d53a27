// A small synchronous cluster for unit tests: every node's Ready is persisted
// to its MemoryStorage, its messages go to one shared queue, and stabilize()
// delivers until nothing moves. Filters model partitions and lost messages.

import {
  MemoryStorage,
  RawNode,
  mulberry32,
  type Entry,
  type Message,
  type NodeId,
  type RaftConfig,
  type Ready,
  type ReadState,
  type Status,
} from '../../src/raft/core/index.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

export function bytes(s: string): Uint8Array {
  return enc.encode(s);
}

export function text(b: Uint8Array): string {
  return dec.decode(b);
}

export type NodeOptions = Partial<Omit<RaftConfig, 'id' | 'storage'>>;

export class TestNode {
  readonly id: NodeId;
  readonly storage: MemoryStorage;
  rn: RawNode;
  /** Data of applied normal entries, in order (no-ops skipped). */
  applied: string[] = [];
  appliedIndex = 0;
  /** Every Ready seen, for assertions on what was persisted and sent. */
  readies: Ready[] = [];
  /** Read indexes received for this node's read requests, in order. */
  readStates: ReadState[] = [];
  readonly opts: NodeOptions;

  constructor(id: NodeId, opts: NodeOptions, storage = new MemoryStorage()) {
    this.id = id;
    this.opts = opts;
    this.storage = storage;
    this.rn = new RawNode({ id, storage, ...opts });
  }

  status(): Status {
    return this.rn.status();
  }

  /** Persists, collects messages, applies and advances one Ready. */
  handleReady(rd: Ready): Message[] {
    this.readies.push(rd);
    this.readStates.push(...rd.readStates);
    if (rd.snapshot) {
      this.storage.applySnapshot(rd.snapshot);
      const data = rd.snapshot.data.length > 0 ? (JSON.parse(text(rd.snapshot.data)) as string[]) : [];
      this.applied = data;
      this.appliedIndex = rd.snapshot.meta.index;
    }
    this.storage.append(rd.entries);
    if (rd.hardState) this.storage.setHardState(rd.hardState);
    for (const e of rd.committedEntries) this.apply(e);
    this.rn.advance();
    return rd.messages;
  }

  private apply(e: Entry): void {
    if (e.index !== this.appliedIndex + 1) {
      throw new Error(`${this.id} applies ${e.index} after ${this.appliedIndex}`);
    }
    this.appliedIndex = e.index;
    if (e.type === 'normal' && e.data.length > 0) this.applied.push(text(e.data));
  }

  /** Snapshots the applied state and compacts up to `compactTo` (default: the snapshot). */
  snapshot(compactTo?: number): void {
    const index = this.appliedIndex;
    this.storage.createSnapshot(index, this.rn.confState(), bytes(JSON.stringify(this.applied)));
    this.storage.compact(compactTo ?? index);
  }

  /** Loses everything not persisted; restarts from storage with the applied index kept. */
  restart(): void {
    this.rn = new RawNode({ id: this.id, storage: this.storage, ...this.opts, applied: this.appliedIndex });
  }
}

export type Filter = (m: Message) => boolean;

export class TestCluster {
  readonly nodes = new Map<NodeId, TestNode>();
  /** Messages sent and not yet delivered (stabilize() drains it). */
  queue: Message[] = [];
  /** Messages delivered, in order, for assertions. */
  delivered: Message[] = [];
  private filters: Filter[] = [];
  private cut = new Set<string>();

  /** `perNode`: options of one node over `opts` (nodes configured differently). */
  constructor(ids: NodeId[], opts: NodeOptions = {}, seed = 1, perNode: (id: NodeId) => NodeOptions = () => ({})) {
    ids.forEach((id, i) => {
      const node = new TestNode(id, { rand: mulberry32(seed * 100 + i), ...opts, ...perNode(id) });
      node.rn.bootstrap(ids);
      this.nodes.set(id, node);
    });
    this.stabilize();
  }

  /** A node that joins later: empty storage, no bootstrap. */
  addEmptyNode(id: NodeId, opts: NodeOptions = {}): TestNode {
    const node = new TestNode(id, { rand: mulberry32(this.nodes.size + 77), ...opts });
    this.nodes.set(id, node);
    return node;
  }

  node(id: NodeId): TestNode {
    const n = this.nodes.get(id);
    if (!n) throw new Error(`no node ${id}`);
    return n;
  }

  /** Drop every message matching `f` until heal(). */
  drop(f: Filter): void {
    this.filters.push(f);
  }

  /** Cuts both directions between a and b. */
  partition(a: NodeId, b: NodeId): void {
    this.cut.add(`${a}>${b}`);
    this.cut.add(`${b}>${a}`);
  }

  isolate(id: NodeId): void {
    for (const other of this.nodes.keys()) if (other !== id) this.partition(id, other);
  }

  heal(): void {
    this.filters = [];
    this.cut.clear();
  }

  private passes(m: Message): boolean {
    if (this.cut.has(`${m.from}>${m.to}`)) return false;
    return !this.filters.some((f) => f(m));
  }

  send(msgs: Message[]): void {
    for (const m of msgs) if (this.passes(m)) this.queue.push(m);
  }

  /** Processes every pending Ready once. Returns whether anything happened. */
  flushReadies(): boolean {
    let any = false;
    for (const node of this.nodes.values()) {
      const rd = node.rn.readyIfAny();
      if (rd) {
        any = true;
        this.send(node.handleReady(rd));
      }
    }
    return any;
  }

  /** Delivers messages and handles readies until the cluster is quiet. */
  stabilize(maxRounds = 10_000): void {
    for (let round = 0; round < maxRounds; round++) {
      const moved = this.flushReadies();
      if (this.queue.length === 0 && !moved) return;
      const batch = this.queue;
      this.queue = [];
      for (const m of batch) this.deliver(m);
    }
    throw new Error('cluster did not stabilize');
  }

  /** Like stabilize() but stops as soon as `pred` holds (checked between rounds). */
  runUntil(pred: () => boolean, maxRounds = 1_000): void {
    for (let round = 0; round < maxRounds && !pred(); round++) {
      this.flushReadies();
      const batch = this.queue;
      this.queue = [];
      for (const m of batch) {
        this.deliver(m);
        if (pred()) {
          this.queue = batch.slice(batch.indexOf(m) + 1).concat(this.queue);
          return;
        }
      }
    }
    if (!pred()) throw new Error('condition not reached');
  }

  deliver(m: Message): void {
    const node = this.nodes.get(m.to);
    if (!node) return;
    this.delivered.push(m);
    node.rn.step(m);
  }

  tick(id: NodeId, times = 1): void {
    for (let i = 0; i < times; i++) {
      this.node(id).rn.tick();
      this.stabilize();
    }
  }

  /** Ticks every node `times` rounds, stabilizing after each round. */
  tickAll(times = 1): void {
    for (let i = 0; i < times; i++) {
      for (const n of this.nodes.values()) n.rn.tick();
      this.stabilize();
    }
  }

  campaign(id: NodeId): void {
    this.node(id).rn.campaign();
    this.stabilize();
  }

  propose(id: NodeId, data: string): { index: number; term: number } {
    const res = this.node(id).rn.propose(bytes(data));
    this.stabilize();
    return res;
  }

  /** The leader of the highest term among nodes that think they lead. */
  leader(): NodeId | undefined {
    let best: Status | undefined;
    for (const n of this.nodes.values()) {
      const s = n.status();
      if (s.role === 'leader' && (!best || s.term > best.term)) best = s;
    }
    return best?.id;
  }

  roles(): Record<NodeId, string> {
    const out: Record<NodeId, string> = {};
    for (const [id, n] of this.nodes) out[id] = n.status().role;
    return out;
  }
}
