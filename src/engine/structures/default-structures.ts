import { compositeFactory } from './composite-index.js';
import { TEXT_PART, trineSearchFactory } from '../fulltext/fulltext-index.js';
import { facetIndexFactory } from '../facets/facet-index.js';
import type { SearchIndexFactory } from './search-index.js';
import { VECTORS_PART, vectorIndexFactory } from '../vector/vector-index.js';

/** The search structures a node keeps for its indexes. */
export function defaultSearchFactory(): SearchIndexFactory {
  return compositeFactory([
    [TEXT_PART, trineSearchFactory],
    ['facets', facetIndexFactory],
    [VECTORS_PART, vectorIndexFactory],
  ]);
}
