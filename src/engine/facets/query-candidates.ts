import type { IndexHandle } from '../index-handle.js';

/** What facet search passes on to the full-text search to narrow its candidates by `q`. */
export interface QueryCandidatesInput {
  q: string;
  matchingStrategy: 'last' | 'all' | 'frequency';
  attributesToSearchOn: string[] | null;
  locales: string[] | null;
}

/**
 * Documents matching a query (before ranking, as `estimatedTotalHits` counts them): docids,
 * or a `Uint8Array` mask by docid; null when the query keeps every document. The full-text
 * search core installs it.
 */
type Candidates = Iterable<number> | Uint8Array | null;
export type QueryCandidates = (h: IndexHandle, input: QueryCandidatesInput) => Candidates | Promise<Candidates>;

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
export async function queryCandidates(h: IndexHandle, input: QueryCandidatesInput): Promise<Candidates> {
  if (!provider || input.q.trim() === '') return null;
  return provider(h, input);
}
