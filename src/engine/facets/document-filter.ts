import { setFilterResolver } from '../documents/filter-hook.js';
import { facetStateOf, filterBitmap } from './index.js';

/**
 * Plugs filter evaluation into the documents routes (listing, fetch) and into deletion by
 * filter, which the batch processor runs. The `CONTAINS` feature gate is the routes' job:
 * they know the node's experimental features, and they refuse before enqueuing.
 */
export function installDocumentFilter(): void {
  setFilterResolver(async (_engine, h, filter) => {
    const matched = filterBitmap(h, filter, { code: 'invalid_document_filter', containsFilter: true });
    return new Set(matched ? matched.toArray() : facetStateOf(h).all);
  });
}
