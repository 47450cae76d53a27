// Checks of the search parameters that depend on the index's settings, with the
// reference's messages: sort criteria (syntax, reserved keywords, sortable attributes,
// `sort` in the ranking rules), distinct (must be filterable) and facets.

import { ApiError } from '../../errors/api-error.js';
import type { SortCriterion } from '../ranking/rules.js';
import type { IndexSettings } from '../settings/settings.js';
import { matchesPattern } from '../fulltext/field-table.js';
import { filterableNames } from './filter-hook.js';

const GEO_POINT = /^_geoPoint\(\s*([^,]+?)\s*,\s*([^)]+?)\s*\)$/;

/** A `field:asc|desc` criterion, or a `_geoPoint(lat, lng):dir` one (kept for the geo engine). */
export interface ParsedSort extends SortCriterion {
  geo?: { lat: number; lng: number };
}

export function parseSort(items: readonly string[]): ParsedSort[] {
  return items.map((raw) => {
    const m = /^(.*):(asc|desc)$/.exec(raw.trim());
    if (!m) {
      throw new ApiError('invalid_search_sort', `Invalid syntax for the sort parameter: expected expression ending by \`:asc\` or \`:desc\`, found \`${raw}\`.`);
    }
    const field = m[1]!;
    const ascending = m[2] === 'asc';
    const geo = GEO_POINT.exec(field);
    if (geo) {
      const lat = Number(geo[1]);
      const lng = Number(geo[2]);
      if (!Number.isFinite(lat) || !Number.isFinite(lng)) {
        throw new ApiError('invalid_search_sort', `Invalid syntax for the sort parameter: the \`_geoPoint\` parameters are not valid numbers, found \`${raw}\`.`);
      }
      return { field: '_geoPoint', ascending, geo: { lat, lng } };
    }
    if (field === '_geo') {
      throw new ApiError('invalid_search_sort', '`_geo` is a reserved keyword and thus can\'t be used as a sort expression. Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.');
    }
    if (field === '_geoDistance' || field === '_geoRadius' || field === '_geoBoundingBox' || field === '_geoPolygon') {
      throw new ApiError('invalid_search_sort', `\`${field}\` is a reserved keyword and thus can't be used as a sort expression.`);
    }
    return { field, ascending };
  });
}

function sortableMessage(settings: IndexSettings): string {
  const list = [...settings.sortableAttributes].sort();
  return list.length === 0
    ? 'This index does not have configured sortable attributes.'
    : `Available sortable attributes are: \`${list.join(', ')}\`.`;
}

/** Throws unless every criterion can be applied to the index (messages without the index prefix). */
export function checkSort(sort: readonly ParsedSort[], settings: IndexSettings): void {
  if (sort.length === 0) return;
  if (!settings.rankingRules.includes('sort')) {
    throw new ApiError('invalid_search_sort', 'You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.');
  }
  for (const c of sort) {
    const name = c.geo ? '_geo' : c.field;
    if (!settings.sortableAttributes.some((s) => s === name || matchesPattern(s, name))) {
      throw new ApiError('invalid_search_sort', `Attribute \`${name}\` is not sortable. ${sortableMessage(settings)}`);
    }
    if (c.geo) {
      throw new ApiError('invalid_search_sort', 'Sorting by `_geoPoint` is not available on this node yet.');
    }
  }
}

export function isFilterable(settings: IndexSettings, attr: string): boolean {
  for (const f of settings.filterableAttributes) {
    if (typeof f === 'string') {
      if (f === attr) return true;
    } else if (f.attributePatterns.some((p) => matchesPattern(p, attr))) return true;
  }
  return false;
}

function filterableList(settings: IndexSettings): string {
  return filterableNames(settings).join(', ');
}

export function checkDistinct(distinct: string, settings: IndexSettings): void {
  if (isFilterable(settings, distinct)) return;
  const names = filterableNames(settings);
  const tail = names.length === 0
    ? 'This index does not have configured filterable attributes.'
    : `Available filterable attributes are: \`${filterableList(settings)}\`.`;
  throw new ApiError('invalid_search_distinct', `Attribute \`${distinct}\` is not filterable and thus, cannot be used as distinct attribute. ${tail}`);
}

/** Facet names to compute: `*` expands to every filterable attribute; others must be filterable. */
export function checkFacets(facets: readonly string[], settings: IndexSettings): string[] {
  const names = filterableNames(settings);
  if (facets.includes('*')) return names.filter((n) => !n.includes('*'));
  const bad = facets.filter((f) => !isFilterable(settings, f));
  if (bad.length === 0) return [...facets];
  if (names.length === 0) {
    throw new ApiError('invalid_search_facets', 'Invalid facet distribution, this index does not have configured filterable attributes.');
  }
  const what = bad.length === 1 ? `attribute \`${bad[0]}\` is` : `attributes \`${bad.join(', ')}\` are`;
  const available = names.length === 1 ? `The available filterable attribute is \`${names[0]}\`.` : `The available filterable attributes are \`${names.join(', ')}\`.`;
  throw new ApiError('invalid_search_facets', `Invalid facet distribution, ${what} not filterable. ${available}`);
}
