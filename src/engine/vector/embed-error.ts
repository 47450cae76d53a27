// Why an embedding could not be made, worded as the reference words it, with whose fault
// it is. Indexing turns it into a failed task (`vector_embedding_error`) naming the embedder.

import { ApiError } from '../../errors/api-error.js';

export type Fault = 'user' | 'runtime' | 'bug' | 'undecided';

const FAULT_TEXT: Record<Fault, string> = {
  user: 'user error',
  runtime: 'runtime error',
  bug: 'internal error',
  undecided: 'error',
};

export class EmbedError extends Error {
  constructor(
    readonly fault: Fault,
    readonly detail: string,
  ) {
    super(`${FAULT_TEXT[fault]}: ${detail}`);
    this.name = 'EmbedError';
  }
}

/** `\n  - server replied with `…`` when the server said something. */
export function replied(body: string | null): string {
  return body ? `\n  - server replied with \`${body}\`` : '';
}

/** The failure of indexing with an embedder, as a task error. */
export function indexingError(embedder: string, e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const why = e instanceof EmbedError ? e.message : `runtime error: ${e instanceof Error ? e.message : String(e)}`;
  return new ApiError('vector_embedding_error', `While embedding documents for embedder \`${embedder}\`: ${why}`);
}

/** The failure of embedding a search query. */
export function queryEmbeddingError(e: unknown): ApiError {
  if (e instanceof ApiError) return e;
  const why = e instanceof EmbedError ? e.message : `runtime error: ${e instanceof Error ? e.message : String(e)}`;
  return new ApiError('vector_embedding_error', `Error while generating embeddings: ${why}`);
}
