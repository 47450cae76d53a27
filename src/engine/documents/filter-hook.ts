import { ApiError } from '../../errors/api-error.js';
import type { Engine } from '../engine.js';
import type { IndexHandle } from '../indexes/index-handle.js';

/** Resolves a document filter to docids; replaced by the filter engine when it is loaded. */
export type FilterResolver = (engine: Engine, h: IndexHandle, filter: unknown) => Promise<Set<number>>;

let resolver: FilterResolver = async (_engine, h) => {
  const filterable = h.meta.settings.filterableAttributes;
  if (filterable.length === 0) {
    throw new ApiError('invalid_document_filter', 'This index does not have configured filterable attributes.');
  }
  throw new ApiError('invalid_document_filter', 'Filtering documents is not available on this node.');
};

export function setFilterResolver(fn: FilterResolver): void {
  resolver = fn;
}

export function documentFilterDocids(engine: Engine, h: IndexHandle, filter: unknown): Promise<Set<number>> {
  return resolver(engine, h, filter);
}
