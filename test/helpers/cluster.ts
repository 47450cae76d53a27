import { rmSync } from 'node:fs';
import { freePort, spawnNode, tempDir, type NodeProcess } from './node.js';
import { FaultProxy } from './tcp-proxy.js';

export interface ClusterMember {
  id: string;
  role: string | null;
  voter: boolean;
  term: number | null;
  commitIndex: number | null;
  appliedIndex: number | null;
  lag: number | null;
  reachable: boolean;
  httpAddr: string | null;
  raftAddr: string | null;
}

export interface ClusterView {
  nodeId: string;
  leader: string | null;
  term: number;
  members: ClusterMember[];
}

export interface ClusterOptions {
  size?: number;
  /** Put a fault-injecting proxy on every node-to-node path (so that partitions can be made). */
  proxied?: boolean;
  /** Extra flags for every node. */
  flags?: string[];
  /** Extra flags for node i (after the common ones, so they win). */
  nodeFlags?: (i: number) => string[];
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Real node processes forming one cluster on 127.0.0.1. Node i is `n{i+1}`. With `proxied`,
 * node i reaches node j through its own proxy (i→j), so one direction of one link can fail.
 */
export class TestCluster {
  readonly ids: string[];
  readonly nodes: (NodeProcess | null)[];
  readonly dirs: string[];
  readonly proxies = new Map<string, FaultProxy>();
  private httpPorts: number[] = [];
  private raftPorts: number[] = [];
  /** Output of every process that ever ran, for failure messages. */
  private readonly logs: string[] = [];

  private constructor(
    readonly size: number,
    private readonly opts: ClusterOptions,
  ) {
    this.ids = Array.from({ length: size }, (_, i) => `n${i + 1}`);
    this.nodes = this.ids.map(() => null);
    this.dirs = this.ids.map((id) => tempDir(`trine-cluster-${id}-`));
  }

  static async start(opts: ClusterOptions = {}): Promise<TestCluster> {
    const c = new TestCluster(opts.size ?? 3, opts);
    for (let i = 0; i < c.size; i++) {
      c.httpPorts.push(await freePort());
      c.raftPorts.push(await freePort());
    }
    if (opts.proxied) {
      for (let i = 0; i < c.size; i++) {
        for (let j = 0; j < c.size; j++) {
          if (i === j) continue;
          const p = new FaultProxy(c.raftPorts[j]!);
          await p.listen();
          c.proxies.set(`${i}->${j}`, p);
        }
      }
    }
    // One node failing to start must not leave the others running: the caller gets no cluster to close.
    const started = await Promise.allSettled(c.ids.map((_, i) => c.startNode(i)));
    const failed = started.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) {
      await c.stop();
      throw failed.reason;
    }
    return c;
  }

  /** How node `i` reaches node `j` (its own Raft port when i = j). */
  private addrFor(i: number, j: number): string {
    if (i === j || !this.opts.proxied) return `127.0.0.1:${this.raftPorts[j]}`;
    return this.proxies.get(`${i}->${j}`)!.addr;
  }

  flagsFor(i: number): string[] {
    const peers = this.ids.map((id, j) => `${id}=${this.addrFor(i, j)}`).join(',');
    return [
      '--node-id',
      this.ids[i]!,
      '--raft-addr',
      `127.0.0.1:${this.raftPorts[i]}`,
      '--peers',
      peers,
      '--cluster-secret',
      'test-cluster-secret',
      ...(this.opts.flags ?? []),
      ...(this.opts.nodeFlags?.(i) ?? []),
    ];
  }

  async startNode(i: number, extra: string[] = []): Promise<NodeProcess> {
    const n = await spawnNode([...this.flagsFor(i), ...extra], this.dirs[i]!, this.httpPorts[i]!);
    this.nodes[i] = n;
    return n;
  }

  url(i: number): string {
    return `http://127.0.0.1:${this.httpPorts[i]}`;
  }

  /** The HTTP ports of every node, in order (for a load balancer in front of them). */
  ports(): number[] {
    return [...this.httpPorts];
  }

  raftAddr(i: number): string {
    return `127.0.0.1:${this.raftPorts[i]}`;
  }

  indexOf(id: string): number {
    return this.ids.indexOf(id);
  }

  alive(): number[] {
    return this.nodes.flatMap((n, i) => (n && n.proc.exitCode === null && n.proc.signalCode === null ? [i] : []));
  }

  async kill(i: number, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const n = this.nodes[i];
    if (!n) return;
    await n.kill(signal);
    this.logs.push(`--- ${this.ids[i]} (${signal}) ---\n${n.output()}`);
    this.nodes[i] = null;
  }

  /** Restarts node `i` with the same flags; with `wipe`, from an empty data directory. */
  async restart(i: number, opts: { wipe?: boolean; extra?: string[] } = {}): Promise<NodeProcess> {
    if (this.nodes[i]) await this.kill(i);
    if (opts.wipe) rmSync(this.dirs[i]!, { recursive: true, force: true });
    return this.startNode(i, opts.extra ?? []);
  }

  /** Cuts every link to and from node `i` (both directions). */
  isolate(i: number): void {
    for (const [key, p] of this.proxies) {
      const [from, to] = key.split('->').map(Number);
      if (from === i || to === i) p.cut();
    }
  }

  heal(): void {
    for (const p of this.proxies.values()) p.heal();
  }

  async view(i: number): Promise<ClusterView> {
    const r = await fetch(`${this.url(i)}/cluster`);
    if (!r.ok) throw new Error(`GET /cluster on ${this.ids[i]}: ${r.status} ${await r.text()}`);
    return (await r.json()) as ClusterView;
  }

  /**
   * Waits until the nodes in `among` (default: all alive) agree on one leader among them;
   * returns its index. Throws with the nodes' output after `timeoutMs`.
   */
  async waitForLeader(among = this.alive(), timeoutMs = 30_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      try {
        const views = await Promise.all(among.map((i) => this.view(i)));
        const leaders = new Set(views.map((v) => v.leader));
        const [lead] = [...leaders];
        if (leaders.size === 1 && lead && among.includes(this.indexOf(lead))) {
          const self = views.find((v) => v.nodeId === lead)!.members.find((m) => m.id === lead);
          if (self?.role === 'leader') return this.indexOf(lead);
        }
      } catch {
        // a node between two states; ask again
      }
      await sleep(100);
    }
    throw new Error(`no leader among ${among.map((i) => this.ids[i]).join(', ')} within ${timeoutMs} ms\n${this.output()}`);
  }

  output(): string {
    const live = this.nodes.flatMap((n, i) => (n ? [`--- ${this.ids[i]} (running) ---\n${n.output()}`] : []));
    return [...this.logs, ...live].join('\n').slice(-20_000);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((_, i) => this.kill(i)));
    await Promise.all([...this.proxies.values()].map((p) => p.close()));
    for (const d of this.dirs) rmSync(d, { recursive: true, force: true });
  }
}
