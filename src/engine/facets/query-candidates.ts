import type { IndexHandle } from '../index-handle.js';

/** What facet search passes on to the full-text search to narrow its candidates by `q`. */
export interface QueryCandidatesInput {
  q: string;
  matchingStrategy: 'last' | 'all' | 'frequency';
  attributesToSearchOn: string[] | null;
  locales: string[] | null;
}

/**
 * Documents matching a query (before ranking, as `estimatedTotalHits` counts them), or null
 * when the query keeps every document. The full-text search core installs it.
 */
export type QueryCandidates = (h: IndexHandle, input: QueryCandidatesInput) => Iterable<number> | null | Promise<Iterable<number> | null>;

let provider: QueryCandidates | null = null;

export function setQueryCandidates(fn: QueryCandidates): void {
  provider = fn;
}

/** True once a search core can narrow facet-search candidates by `q`. */
export function hasQueryCandidates(): boolean {
  return provider !== null;
}

/**
 * Candidates of `q` for facet search. Without a search core registered, a query does not
 * narrow the candidates: facet counts then cover every document the filter keeps.
 */
export async function queryCandidates(h: IndexHandle, input: QueryCandidatesInput): Promise<Iterable<number> | null> {
  if (!provider || input.q.trim() === '') return null;
  return provider(h, input);
}
