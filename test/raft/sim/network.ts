// The simulated network: per-message loss, duplication and delay (delays
// differ per copy, which reorders), plus link cuts for partitions, which may
// be one-way.

import type { Message, NodeId, Rand } from '../../../src/raft/core/index.js';

export interface NetworkQuality {
  dropRate: number;
  dupRate: number;
  minDelay: number;
  maxDelay: number;
  /** Chance that a copy is held back much longer (up to 10 * maxDelay). */
  slowRate: number;
}

export const PERFECT: NetworkQuality = { dropRate: 0, dupRate: 0, minDelay: 1, maxDelay: 4, slowRate: 0 };

export class Network {
  quality: NetworkQuality = PERFECT;
  private cut = new Set<string>();
  private readonly rand: Rand;

  constructor(rand: Rand) {
    this.rand = rand;
  }

  /** Blocks traffic from a to b (and back, unless oneWay). */
  block(a: NodeId, b: NodeId, oneWay = false): void {
    this.cut.add(`${a}>${b}`);
    if (!oneWay) this.cut.add(`${b}>${a}`);
  }

  /** Splits the nodes into groups that cannot talk to each other. */
  partition(groups: NodeId[][]): void {
    for (let i = 0; i < groups.length; i++) {
      for (let j = i + 1; j < groups.length; j++) {
        for (const a of groups[i]!) for (const b of groups[j]!) this.block(a, b);
      }
    }
  }

  heal(): void {
    this.cut.clear();
  }

  isCut(from: NodeId, to: NodeId): boolean {
    return this.cut.has(`${from}>${to}`);
  }

  describeCuts(): string {
    return [...this.cut].sort().join(' ');
  }

  /**
   * Delivery delays for one sent message: empty when it is lost, two when it
   * is duplicated. A cut link loses everything.
   */
  delays(m: Message): number[] {
    if (this.isCut(m.from, m.to)) return [];
    const q = this.quality;
    if (this.rand() < q.dropRate) return [];
    const copies = this.rand() < q.dupRate ? 2 : 1;
    const out: number[] = [];
    for (let i = 0; i < copies; i++) {
      let d = q.minDelay + this.rand() * (q.maxDelay - q.minDelay);
      if (this.rand() < q.slowRate) d += this.rand() * 10 * q.maxDelay;
      out.push(d);
    }
    return out;
  }
}
