import { rustFloat } from '../filter/errors.js';
import {
  byteOrder, isFacetedBy, isFilterable, isReservedField, matchingFeatures,
} from '../filter/rules.js';
import type { Faceting, FilterableAttributeRule } from '../settings/settings.js';
import type { Bitmap } from './bitmap.js';
import type { FacetState } from './facet-state.js';
import type { FieldFacets } from './field-facets.js';

/** Below this many candidates the reference counts values document by document (alphabetical order only). */
const LINEAR_SCAN_CANDIDATES = 3000;

type Rules = readonly (string | FilterableAttributeRule)[];

export interface FacetsResult {
  facetDistribution: Record<string, Record<string, number>>;
  facetStats: Record<string, { min: number; max: number }>;
}


/** Filterable fields the request selects: all of them for `*`, else those named or nested under a name. */
function selectedFields(state: FacetState, facets: readonly string[], rules: Rules): FieldFacets[] {
  const all = facets.includes('*');
  const out: FieldFacets[] = [];
  for (const name of [...state.fields.keys()].sort(byteOrder)) {
    if (isReservedField(name)) continue;
    const m = matchingFeatures(name, rules);
    if (!m || !isFilterable(m.features)) continue;
    if (!all && !facets.some((f) => isFacetedBy(name, f))) continue;
    out.push(state.fields.get(name)!);
  }
  return out;
}

function orderOf(name: string, requested: readonly string[], faceting: Faceting): 'alpha' | 'count' {
  const by = faceting.sortFacetValuesBy;
  const fallback = by['*'] ?? 'alpha';
  // A nested field selected through its parent's name takes the default order, as in the reference.
  if (requested.includes('*') || !requested.includes(name)) return fallback;
  return by[name] ?? fallback;
}

/**
 * `facetDistribution` and `facetStats` over `candidates`: counts per value (numbers first,
 * then strings under their first spelling), at most `maxValuesPerFacet` values per field in
 * `alpha` or `count` order; min and max of the numbers. Fields without any value are left out,
 * and so are requested attributes that are not filterable (the spec accepts them silently;
 * the reference refuses them).
 */
export function computeFacets(
  state: FacetState,
  rules: Rules,
  faceting: Faceting,
  candidates: Bitmap,
  facets: readonly string[],
): FacetsResult {
  const facetDistribution: Record<string, Record<string, number>> = {};
  const facetStats: Record<string, { min: number; max: number }> = {};
  const total = candidates.size();
  const isAll = total === state.all.length;
  const count = (docids: Uint32Array) => (isAll ? docids.length : candidates.countOf(docids));
  const max = faceting.maxValuesPerFacet;
  for (const field of selectedFields(state, facets, rules)) {
    const order = orderOf(field.name, facets, faceting);
    const values =
      order === 'alpha' && total <= LINEAR_SCAN_CANDIDATES
        ? byDocuments(field, candidates, max)
        : byValues(field, candidates, order, max, count);
    if (values.length > 0) facetDistribution[field.name] = Object.fromEntries(values);
    const stats = numericStats(field, count);
    if (stats) facetStats[field.name] = stats;
  }
  return { facetDistribution, facetStats };
}

/** Few candidates: count each candidate's values; numbers then sort as text, as in the reference. */
function byDocuments(field: FieldFacets, candidates: Bitmap, max: number): [string, number][] {
  const fwd = field.forward();
  const counts = new Map<number, number>();
  const limit = fwd.offsets.length - 1;
  for (const d of candidates) {
    if (d >= limit) break;
    for (let i = fwd.offsets[d]!; i < fwd.offsets[d + 1]!; i++) counts.set(fwd.values[i]!, (counts.get(fwd.values[i]!) ?? 0) + 1);
  }
  const numbers: [string, number][] = [];
  const strings: [string, string, number][] = [];
  for (const [slot, n] of counts) {
    const v = fwd.slots[slot]!;
    if (typeof v === 'number') numbers.push([rustFloat(v), n]);
    else strings.push([v.key, field.original(v, candidates), n]);
  }
  numbers.sort((a, b) => byteOrder(a[0], b[0]));
  strings.sort((a, b) => byteOrder(a[0], b[0]));
  const out = numbers.slice(0, max);
  for (const [, orig, n] of strings.slice(0, Math.max(0, max - out.length))) out.push([orig, n]);
  return out;
}

/** Many candidates, or count order: walk the sorted values, numbers then strings. */
function byValues(
  field: FieldFacets,
  candidates: Bitmap,
  order: 'alpha' | 'count',
  max: number,
  count: (docids: Uint32Array) => number,
): [string, number][] {
  const out: [string, number][] = [];
  const take = <T>(keys: Iterable<T>, postings: (k: T) => Uint32Array, label: (k: T) => string) => {
    if (out.length >= max) return;
    if (order === 'alpha') {
      for (const k of keys) {
        const n = count(postings(k));
        if (n === 0) continue;
        out.push([label(k), n]);
        if (out.length >= max) return;
      }
      return;
    }
    const counted: [T, number][] = [];
    for (const k of keys) {
      const n = count(postings(k));
      if (n > 0) counted.push([k, n]);
    }
    // Stable sort: equal counts keep value order.
    counted.sort((a, b) => b[1] - a[1]);
    for (const [k, n] of counted.slice(0, max - out.length)) out.push([label(k), n]);
  };
  take(field.numberKeys(), (n) => field.numbers.get(n)!, rustFloat);
  take(
    field.stringKeys(),
    (k) => field.strings.get(k)!.docids,
    (k) => field.original(field.strings.get(k)!, candidates),
  );
  return out;
}

function numericStats(field: FieldFacets, count: (docids: Uint32Array) => number): { min: number; max: number } | null {
  const keys = field.numberKeys();
  let lo = -1;
  for (let i = 0; i < keys.length; i++) {
    if (count(field.numbers.get(keys[i]!)!) > 0) {
      lo = i;
      break;
    }
  }
  if (lo < 0) return null;
  for (let i = keys.length - 1; i >= lo; i--) {
    if (count(field.numbers.get(keys[i]!)!) > 0) return { min: keys[lo]!, max: keys[i]! };
  }
  return null;
}
