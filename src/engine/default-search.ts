import { noSearchIndex, type SearchIndexFactory } from './search-index.js';

/** The search structures a node keeps for its indexes. */
export function defaultSearchFactory(): SearchIndexFactory {
  return noSearchIndex;
}
