// The query vector of a search: the query text embedded as it is, or, for an embedder with
// fragments, the first search fragment that renders with the query's `q` and `media`.

import { queryEmbeddingError } from './embed-error.js';
import { fragmentText, renderSearch, type SearchInput } from './fragments.js';
import { embedQuery, type ResolvedEmbedder } from './semantic-search.js';

export async function embedSearchQuery(e: ResolvedEmbedder, input: SearchInput): Promise<Float32Array> {
  const fragments = e.runtime.fragments;
  if (!fragments) return embedQuery(e, input.q ?? '');
  let text: string;
  try {
    text = fragmentText(renderSearch(fragments, input));
  } catch (err) {
    throw queryEmbeddingError(err);
  }
  return embedQuery(e, text);
}
