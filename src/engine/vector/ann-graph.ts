// The approximate nearest-neighbour index over the slots of a VectorSlots: a usearch HNSW
// graph keyed by slot number. Slots go in one at a time, in slot order, on the calling
// thread: the graph's random levels and its memory reservations then depend only on the
// sequence of slots, so every node that applied the same log builds the same graph.
// Killed slots stay in the graph as waypoints; callers drop them from the answers.

import usearch from 'usearch';
import type { VectorSlots } from './vector-slots.js';

export interface AnnParams {
  /** Links per node above level 0 (twice as many at level 0). */
  connectivity: number;
  /** Candidate list breadth while linking a new node. */
  expansionAdd: number;
}

/**
 * Clustered embeddings need many links between clusters for a search to find its way to
 * the right one: 32 links (64 at level 0) gave the best recall for the time spent (see
 * docs/vector-search.md).
 */
export const DEFAULT_ANN: AnnParams = { connectivity: 32, expansionAdd: 128 };

export class AnnGraph {
  private readonly index: InstanceType<typeof usearch.Index>;
  private readonly key = new BigUint64Array(1);
  /** Slots inserted so far: every slot below this one is in the graph. */
  size = 0;

  constructor(
    private readonly slots: VectorSlots,
    readonly params: AnnParams = DEFAULT_ANN,
  ) {
    // Inner product of unit vectors is their cosine. The graph keeps them as 8-bit integers
    // (usearch scales each to 127 over its length): distances are then exact integer dot
    // products, the same on every CPU whatever its vector instructions, so nodes on
    // different hardware still build the same graph. A quarter of the memory of floats too;
    // the candidates are scored again exactly by the caller.
    this.index = new usearch.Index({
      dimensions: slots.dims,
      metric: usearch.MetricKind.IP,
      quantization: usearch.ScalarKind.I8,
      connectivity: params.connectivity,
      expansion_add: params.expansionAdd,
      expansion_search: 64,
      multi: false,
    });
  }

  /** Adds the next slot (`this.size`) to the graph. */
  insertNext(): void {
    this.key[0] = BigInt(this.size);
    // One thread, one vector a call: batched adds would spread over worker threads (and
    // their per-thread random levels) and grow the reservation by the batch's size.
    this.index.add(this.key, this.slots.vector(this.size), 1);
    this.size++;
  }

  /** Writes the graph to `path` (usearch's format). */
  save(path: string): void {
    this.index.save(path);
  }

  /** A graph read back from `path`, saved over the first `size` slots of `slots`. */
  static load(slots: VectorSlots, path: string, size: number, params: AnnParams = DEFAULT_ANN): AnnGraph {
    const g = new AnnGraph(slots, params);
    g.index.load(path);
    if (g.index.size() !== size) throw new Error(`saved graph holds ${g.index.size()} vectors, expected ${size}`);
    g.size = size;
    return g;
  }

  /** About the `n` slots closest to the unit vector `q`, closest first (killed ones included). */
  nearest(q: Float32Array, n: number): number[] {
    if (this.size === 0 || n <= 0) return [];
    // The search breadth is the larger of the configured one and `n`.
    const { keys } = this.index.search(q, Math.min(n, this.size), 1);
    const out = new Array<number>(keys.length);
    for (let i = 0; i < keys.length; i++) out[i] = Number(keys[i]!);
    return out;
  }
}
