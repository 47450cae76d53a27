// Where indexing gets the embeddings of texts. Alone, a node asks the embedder itself; in a
// cluster the node that leads asks once and passes the vectors to everyone through the
// replicated log (see `replication/embedding-exchange.ts`), so every node stores the same vectors.

import type { WriteBatch } from '../../store/kv.js';

export interface EmbeddingJob {
  embedder: string;
  /** Texts to embed, by their digest. */
  texts: Map<string, string>;
  /** Asks the provider; only called where this node is the one to ask. */
  embed(texts: readonly string[]): Promise<Float32Array[]>;
}

export interface EmbeddingSource {
  /** The embedding of every text of the job, by digest; throws the embedder's failure. */
  obtain(job: EmbeddingJob): Promise<Map<string, Float32Array>>;
  /**
   * What the batch being applied also writes and does once published, to drop what was kept
   * to obtain its embeddings (a cluster keeps them in the log's state until then).
   */
  release?(): { write(wb: WriteBatch): void; publish(): void } | null;
}

/** Texts sent to a provider between two checks of leadership and of progress. */
export const EMBED_CHUNK = 64;

/** Asks the provider directly: for a node alone, and tools that open an index outside a node. */
export const directSource: EmbeddingSource = {
  async obtain(job) {
    const out = new Map<string, Float32Array>();
    const entries = [...job.texts];
    for (let i = 0; i < entries.length; i += EMBED_CHUNK) {
      const chunk = entries.slice(i, i + EMBED_CHUNK);
      const vectors = await job.embed(chunk.map(([, t]) => t));
      chunk.forEach(([h], j) => out.set(h, vectors[j]!));
    }
    return out;
  },
};
