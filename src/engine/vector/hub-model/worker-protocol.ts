// Messages between the serving thread and a model's worker (`runtime-worker.ts`).

import type { Fault } from '../embed-error.js';

export interface WorkerInit {
  dir: string;
  /** The model's name in errors. */
  model: string;
  /** The embedder's `pooling` setting. */
  pooling: string | undefined;
}

export interface ToWorker {
  id: number;
  texts: string[];
  /** A search query: goes before indexing work. */
  urgent: boolean;
}

export type FromWorker =
  | { type: 'ready'; dims: number }
  | { type: 'failed'; fault: Fault; detail: string }
  /** `vectors`: the embeddings one after the other, `dims` floats each. */
  | { type: 'done'; id: number; vectors: Float32Array }
  | { type: 'error'; id: number; fault: Fault; detail: string };
