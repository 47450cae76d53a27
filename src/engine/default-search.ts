import { compositeFactory } from './composite-index.js';
import { installDocumentFilter } from './facets/index.js';
import { facetIndexFactory } from './facets/facet-index.js';
import type { SearchIndexFactory } from './search-index.js';

/** The search structures a node keeps for its indexes. */
export function defaultSearchFactory(): SearchIndexFactory {
  installDocumentFilter();
  return compositeFactory([['facets', facetIndexFactory]]);
}
