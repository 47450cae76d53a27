// A hierarchical navigable small world graph (Malkov & Yashunin) over the slots of a
// VectorSlots, in plain TypeScript: typed arrays for the links, a seeded generator for the
// levels (same insertion order, same graph), similarity = dot product of unit vectors.
// Killed slots stay in the graph as waypoints; searches just do not return them.

import { dotAt } from './distance.js';
import type { VectorSlots } from './vector-slots.js';

export interface HnswParams {
  /** Links per node above level 0 (twice as many at level 0). */
  m: number;
  efConstruction: number;
}

export const DEFAULT_HNSW: HnswParams = { m: 16, efConstruction: 100 };

/** Parallel-array binary heap; `sign` 1 keeps the largest on top, -1 the smallest. */
class Heap {
  ids: number[] = [];
  keys: number[] = [];
  constructor(private readonly sign: 1 | -1) {}
  get size(): number {
    return this.ids.length;
  }
  topKey(): number {
    return this.keys[0]!;
  }
  topId(): number {
    return this.ids[0]!;
  }
  push(id: number, key: number): void {
    const { ids, keys, sign } = this;
    let i = ids.length;
    ids.push(id);
    keys.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (sign * keys[p]! >= sign * key) break;
      ids[i] = ids[p]!;
      keys[i] = keys[p]!;
      i = p;
    }
    ids[i] = id;
    keys[i] = key;
  }
  pop(): void {
    const { ids, keys, sign } = this;
    const lastId = ids.pop()!;
    const lastKey = keys.pop()!;
    const n = ids.length;
    if (n === 0) return;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && sign * keys[r]! > sign * keys[l]! ? r : l;
      if (sign * keys[c]! <= sign * lastKey) break;
      ids[i] = ids[c]!;
      keys[i] = keys[c]!;
      i = c;
    }
    ids[i] = lastId;
    keys[i] = lastKey;
  }
}

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class HnswGraph {
  private readonly m0: number;
  private links0: Int32Array;
  private count0: Uint8Array;
  /** Per node with a level above 0: for each upper level, [count, ...m links]. */
  private upper: (Int32Array | undefined)[] = [];
  private levels: Uint8Array;
  private visited: Uint32Array;
  private epoch = 0;
  private entry = -1;
  private maxLevel = -1;
  private readonly random: () => number;
  private readonly ml: number;
  /** Slots inserted so far: every slot below this one is in the graph. */
  size = 0;

  constructor(
    private readonly slots: VectorSlots,
    readonly params: HnswParams = DEFAULT_HNSW,
    seed = 42,
  ) {
    this.m0 = params.m * 2;
    const cap = Math.max(16, slots.capacity);
    this.links0 = new Int32Array(cap * this.m0);
    this.count0 = new Uint8Array(cap);
    this.levels = new Uint8Array(cap);
    this.visited = new Uint32Array(cap);
    this.random = mulberry32(seed);
    this.ml = 1 / Math.log(params.m);
  }

  private ensure(cap: number): void {
    if (cap <= this.count0.length) return;
    const n = Math.max(cap, this.count0.length * 2);
    const links0 = new Int32Array(n * this.m0);
    links0.set(this.links0);
    this.links0 = links0;
    const grow8 = (a: Uint8Array) => {
      const b = new Uint8Array(n);
      b.set(a);
      return b;
    };
    this.count0 = grow8(this.count0);
    this.levels = grow8(this.levels);
    this.visited = new Uint32Array(n);
    this.epoch = 0;
  }

  private dot(q: Float32Array, slot: number): number {
    return dotAt(q, this.slots.data, slot * this.slots.dims, this.slots.dims);
  }

  private neighbours(node: number, level: number): Int32Array {
    if (level === 0) {
      const off = node * this.m0;
      return this.links0.subarray(off, off + this.count0[node]!);
    }
    const u = this.upper[node]!;
    const off = (level - 1) * (this.params.m + 1);
    return u.subarray(off + 1, off + 1 + u[off]!);
  }

  private setNeighbours(node: number, level: number, list: number[]): void {
    if (level === 0) {
      this.links0.set(list, node * this.m0);
      this.count0[node] = list.length;
      return;
    }
    const u = this.upper[node]!;
    const off = (level - 1) * (this.params.m + 1);
    u[off] = list.length;
    u.set(list, off + 1);
  }

  private nextEpoch(): number {
    if (++this.epoch === 0xffffffff) {
      this.visited.fill(0);
      this.epoch = 1;
    }
    return this.epoch;
  }

  /** Best `ef` nodes reachable from `entries` at `level`, best first (only `accept`ed ones are returned). */
  private searchLevel(q: Float32Array, entries: number[], ef: number, level: number, accept?: (slot: number) => boolean): Heap {
    const epoch = this.nextEpoch();
    const visited = this.visited;
    const candidates = new Heap(1);
    const results = new Heap(-1);
    for (const e of entries) {
      visited[e] = epoch;
      const d = this.dot(q, e);
      candidates.push(e, d);
      if (!accept || accept(e)) results.push(e, d);
    }
    while (candidates.size > 0) {
      const c = candidates.topId();
      const cd = candidates.topKey();
      if (results.size >= ef && cd < results.topKey()) break;
      candidates.pop();
      const ns = this.neighbours(c, level);
      for (let i = 0; i < ns.length; i++) {
        const n = ns[i]!;
        if (visited[n] === epoch) continue;
        visited[n] = epoch;
        const d = this.dot(q, n);
        if (results.size < ef || d > results.topKey()) {
          candidates.push(n, d);
          if (!accept || accept(n)) {
            results.push(n, d);
            if (results.size > ef) results.pop();
          }
        }
      }
    }
    return results;
  }

  private greedy(q: Float32Array, from: number, fromLevel: number, toLevel: number): number {
    let cur = from;
    let curDot = this.dot(q, cur);
    for (let level = fromLevel; level > toLevel; level--) {
      for (let moved = true; moved; ) {
        moved = false;
        const ns = this.neighbours(cur, level);
        for (let i = 0; i < ns.length; i++) {
          const d = this.dot(q, ns[i]!);
          if (d > curDot) {
            curDot = d;
            cur = ns[i]!;
            moved = true;
          }
        }
      }
    }
    return cur;
  }

  /** Keeps candidates (best first) that are closer to the node than to the neighbours already kept. */
  private select(candidates: { id: number; d: number }[], m: number): number[] {
    const kept: number[] = [];
    for (const c of candidates) {
      if (kept.length >= m) break;
      const v = this.slots.vector(c.id);
      if (kept.every((k) => this.dot(v, k) <= c.d)) kept.push(c.id);
    }
    // Fill up with the best of the pruned ones: sparse areas keep their degree.
    for (const c of candidates) {
      if (kept.length >= m) break;
      if (!kept.includes(c.id)) kept.push(c.id);
    }
    return kept;
  }

  /** Adds the next slot (`this.size`) to the graph. */
  insertNext(): void {
    const node = this.size;
    this.ensure(this.slots.capacity);
    const level = Math.min(15, Math.floor(-Math.log(1 - this.random()) * this.ml));
    this.levels[node] = level;
    if (level > 0) this.upper[node] = new Int32Array(level * (this.params.m + 1));
    this.size++;
    if (this.entry < 0) {
      this.entry = node;
      this.maxLevel = level;
      return;
    }
    const q = this.slots.vector(node);
    let ep = this.greedy(q, this.entry, this.maxLevel, level);
    for (let l = Math.min(level, this.maxLevel); l >= 0; l--) {
      const found = this.searchLevel(q, [ep], this.params.efConstruction, l);
      const cands: { id: number; d: number }[] = found.ids.map((id, i) => ({ id, d: found.keys[i]! })).sort((a, b) => b.d - a.d);
      const max = l === 0 ? this.m0 : this.params.m;
      const chosen = this.select(cands, this.params.m);
      this.setNeighbours(node, l, chosen);
      for (const n of chosen) this.link(n, node, l, max);
      ep = cands[0]!.id;
    }
    if (level > this.maxLevel) {
      this.maxLevel = level;
      this.entry = node;
    }
  }

  private link(from: number, to: number, level: number, max: number): void {
    const current = this.neighbours(from, level);
    if (current.length < max) {
      const list = Array.from(current);
      list.push(to);
      this.setNeighbours(from, level, list);
      return;
    }
    // A full list swaps its farthest link for the new node when that one is closer: cheaper
    // than pruning the list again, and close enough in recall.
    const v = this.slots.vector(from);
    let worst = -1;
    let worstDot = this.dot(v, to);
    for (let i = 0; i < current.length; i++) {
      const d = this.dot(v, current[i]!);
      if (d < worstDot) {
        worstDot = d;
        worst = i;
      }
    }
    if (worst >= 0) current[worst] = to;
  }

  /** Up to `k` accepted slots closest to the unit vector `q`, best first, with their dot products. */
  search(q: Float32Array, k: number, ef: number, accept?: (slot: number) => boolean): { slot: number; dot: number }[] {
    if (this.entry < 0 || k <= 0) return [];
    const ep = this.greedy(q, this.entry, this.maxLevel, 0);
    const found = this.searchLevel(q, [ep], Math.max(ef, k), 0, accept);
    const out = found.ids.map((slot, i) => ({ slot, dot: found.keys[i]! }));
    out.sort((a, b) => b.dot - a.dot);
    return out.slice(0, k);
  }
}
