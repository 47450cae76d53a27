/**
 * What the rest of the engine uses of filters and facets. Everything takes an open index
 * handle; the facet structures are the `facets` part of its composite search index.
 */
import { CompositeIndex } from '../structures/composite-index.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import type { RankingRule } from '../ranking/rule.js';
import type { SortRuleMaker } from '../ranking/rules.js';
import { sortRule } from '../ranking/sort.js';
import { FilterError } from '../filter/errors.js';
import { FilterEvaluator, type ForeignFilters, type ShardFilters } from '../filter/evaluate.js';
import { shardOf } from '../network/shards.js';
import { vectorFactsOf } from '../vector/vector-facts.js';
import { parseFilter, type FilterParseOptions } from '../filter/filter-tree.js';
import { Bitmap } from './bitmap.js';
import { computeFacets, type FacetsResult } from './distribution.js';
import { geoSortRule } from './geo-rule.js';
import { searchFacetValues, type FacetHit } from './facet-search.js';
import { facetSortColumn } from './sort-column.js';
import type { FacetIndex } from './facet-index.js';
import type { FacetState } from './facet-state.js';
import { sortBuckets, sortDocids, type SortCriterion } from './sort.js';

export { Bitmap } from './bitmap.js';
export { facetIndexFactory, FacetIndex } from './facet-index.js';
export type { FacetState } from './facet-state.js';
export type { FacetsResult } from './distribution.js';
export { checkFacetSearchable, type FacetHit } from './facet-search.js';
export {
  checkDistinctAttribute, checkSortable, DistinctFilter, distinctCandidates, geoDistance, parseSort, parseSortExpression, rejoinGeoPoints,
  type SortBucket, type SortCriterion,
} from './sort.js';
export { parseFilter, type FilterParseOptions } from '../filter/filter-tree.js';

/** The name the facet structures have among an index's search parts. */
export const FACETS_PART = 'facets';

function facetPart(h: IndexHandle): FacetIndex | undefined {
  return h.search instanceof CompositeIndex ? h.search.part<FacetIndex>(FACETS_PART) : undefined;
}

export function facetStateOf(h: IndexHandle): FacetState {
  const part = facetPart(h);
  if (!part) throw new Error(`index \`${h.uid}\` keeps no facet structures`);
  return part.state;
}

/** Every document's docid, ascending; null when the index keeps no facet structures. */
export function everyDocid(h: IndexHandle): Uint32Array | null {
  return facetPart(h)?.state.all ?? null;
}

/**
 * Any docid collection as a bitmap; null stands for every document of the index. A
 * `Uint8Array` is read as a mask by docid (non-zero = included), not as a list of docids.
 */
export function toBitmap(h: IndexHandle, docids: Bitmap | Uint8Array | Iterable<number> | null): Bitmap {
  const state = facetStateOf(h);
  if (docids === null) return state.universe().clone();
  if (docids instanceof Bitmap) return docids;
  if (docids instanceof Uint8Array) {
    const b = new Bitmap(Math.max(state.capacity(), docids.length));
    for (let d = 0; d < docids.length; d++) if (docids[d] !== 0) b.add(d);
    return b;
  }
  return Bitmap.from(docids, state.capacity());
}

/** {@link filterBitmap} as a mask by docid (1 = kept), sized to cover `size` docids. */
export function filterMask(h: IndexHandle, filter: unknown, opts: FilterOptions, size = 0): Uint8Array | null {
  return filterBitmap(h, filter, opts)?.toMask(size) ?? null;
}

export interface FilterOptions extends FilterParseOptions {
  /** Search routes prefix evaluation errors (not syntax errors) with ``Index `uid`: ``. */
  indexPrefix?: boolean;
  /** The other indexes by uid, for `_foreign(…)` (throws `index_not_found`); without it no field is a foreign key. */
  foreignIndex?: (uid: string) => IndexHandle;
  /** The shards of the network, for `_shard`; none when it does not shard. */
  shards?: readonly string[];
}

/**
 * The owning shard of each document id, kept per index while the shard names stay the same:
 * computing it hashes the id once per shard.
 */
const shardCache = new WeakMap<IndexHandle, { names: string; byId: Map<string, string | null> }>();

function shardFilters(h: IndexHandle, shards: readonly string[] | undefined): ShardFilters | null {
  if (!shards || shards.length === 0) return null;
  const names = [...shards].sort();
  const key = names.join('\u0000');
  return {
    docsOf(wanted) {
      let cache = shardCache.get(h);
      if (!cache || cache.names !== key || cache.byId.size > 2 * h.ext.size + 1024) {
        cache = { names: key, byId: new Map() };
        shardCache.set(h, cache);
      }
      const out = new Bitmap(facetStateOf(h).capacity());
      for (const [id, docid] of h.ext) {
        let s = cache.byId.get(id);
        if (s === undefined) {
          s = shardOf(names, id);
          cache.byId.set(id, s);
        }
        if (s !== null && wanted.has(s)) out.add(docid);
      }
      return out;
    },
  };
}

/** `_foreign(…)` over the indexes `foreignIndex` gives: one level only, so the foreign filter has none. */
function foreignFilters(h: IndexHandle, foreignIndex: ((uid: string) => IndexHandle) | undefined): ForeignFilters | null {
  if (!foreignIndex) return null;
  return {
    keys: h.meta.settings.foreignKeys,
    matchingIds(uid, node) {
      const f = foreignIndex(uid);
      const matched = new FilterEvaluator(facetStateOf(f), f.meta.settings.filterableAttributes, vectorFactsOf(f)).evaluate(node);
      const ids: string[] = [];
      if (matched.isEmpty()) return ids;
      for (const [id, docid] of f.ext) if (matched.has(docid)) ids.push(id);
      return ids.sort();
    },
  };
}

/**
 * The documents a `filter` parameter (string or array form) selects, or null when it
 * selects no condition (absent, blank, or only blank strings). Throws the reference's
 * errors with `opts.code`.
 */
export function filterBitmap(h: IndexHandle, filter: unknown, opts: FilterOptions): Bitmap | null {
  const node = parseFilter(filter, opts);
  if (!node) return null;
  try {
    return new FilterEvaluator(facetStateOf(h), h.meta.settings.filterableAttributes, vectorFactsOf(h), foreignFilters(h, opts.foreignIndex), shardFilters(h, opts.shards)).evaluate(node);
  } catch (e) {
    if (!(e instanceof FilterError)) throw e;
    const err = e.toApiError(opts.code);
    throw opts.indexPrefix ? err.prefixed(`Index \`${h.uid}\`: `) : err;
  }
}

/** {@link filterBitmap} as a sorted docid array. */
export function filterDocids(h: IndexHandle, filter: unknown, opts: FilterOptions): Uint32Array | null {
  return filterBitmap(h, filter, opts)?.toArray() ?? null;
}

/**
 * `facetDistribution` and `facetStats` of the requested `facets` (names, nested paths or
 * `*`) over the candidates, following the index's `faceting` setting. Throws
 * `invalid_search_facets` for a facet that is not filterable.
 */
export function facetDistribution(h: IndexHandle, candidates: Bitmap | Uint8Array | Iterable<number> | null, facets: readonly string[]): FacetsResult {
  const s = h.meta.settings;
  return computeFacets(facetStateOf(h), s.filterableAttributes, s.faceting, toBitmap(h, candidates), facets);
}

/**
 * A sort criterion as the search core's ranking rules take it: a field sort, or the
 * `_geoPoint` sort as a ready-made rule over this index's `_geo` points.
 */
export function searchSortCriterion(
  h: IndexHandle,
  c: SortCriterion,
): { field: string; ascending: boolean; rule?: RankingRule; geo?: { lat: number; lng: number } } {
  if (c.kind === 'field') return { field: c.field, ascending: c.ascending };
  return { field: c.expr, ascending: c.ascending, rule: geoSortRule(facetStateOf(h), c), geo: { lat: c.lat, lng: c.lng } };
}

/**
 * Field sort rules that take their order from this index's facet postings, as they are now: a
 * rule run after a batch changed them (a hybrid search ranks once its embedding came back)
 * leaves the order to the records of the state the search started on.
 */
export function facetSortRules(h: IndexHandle): SortRuleMaker {
  const state = facetStateOf(h);
  const version = state.version;
  return (field, ascending) => sortRule(field, ascending, () => (state.version === version ? facetSortColumn(state, field, ascending) : null));
}

/** Candidates ordered by several criteria, at most `limit` of them. */
export function sortedDocids(h: IndexHandle, criteria: readonly SortCriterion[], candidates: Bitmap | Uint8Array | Iterable<number> | null, limit?: number): number[] {
  return sortDocids(facetStateOf(h), criteria, toBitmap(h, candidates), limit);
}

/**
 * Each document's value for each sort criterion (the number or normalized string it sorts by,
 * the meters of a geo criterion, null without one), for merging sorted lists of documents.
 */
export function sortValuesOf(h: IndexHandle, criteria: readonly SortCriterion[], docids: readonly number[]): Map<number, (number | string | null)[]> {
  const out = new Map<number, (number | string | null)[]>(docids.map((d) => [d, []]));
  const state = facetStateOf(h);
  for (const c of criteria) {
    for (const b of sortBuckets(state, c, Bitmap.of(docids, state.capacity()))) {
      for (const d of b.docids) out.get(d)!.push(c.kind === 'geo' ? (b.distance ?? null) : b.value);
    }
  }
  return out;
}

/** Facet values of `facetName` matching `facetQuery` among the candidates (see `searchFacetValues`). */
export function facetSearch(h: IndexHandle, facetName: string, facetQuery: string | null, candidates: Bitmap | Uint8Array | Iterable<number> | null): FacetHit[] {
  return searchFacetValues(facetStateOf(h), h.meta.settings, facetName, facetQuery, toBitmap(h, candidates));
}
