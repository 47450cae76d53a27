import { featuresOf, matchRule } from '../filter/rules.js';
import { isPathOrChild, matchesPattern } from '../fulltext/field-table.js';
import { parseRankingRule } from './setting-values.js';
import type { IndexSettings } from './settings.js';

/**
 * What the settings make of each field of an index (`POST /indexes/{uid}/fields`): whether it
 * is displayed, searchable, sortable, the distinct attribute, a custom ranking rule, and how
 * it can be filtered. A field is named by its dot path; parents of nested fields are fields too.
 */
export interface FieldMetadata {
  name: string;
  displayed: { enabled: boolean };
  searchable: { enabled: boolean };
  sortable: { enabled: boolean };
  distinct: { enabled: boolean };
  rankingRule: { enabled: boolean; order?: 'asc' | 'desc' };
  filterable: { enabled: boolean; sortBy: 'alpha' | 'count'; facetSearch: boolean; equality: boolean; comparison: boolean };
  localized: { locales: string[] };
}

/** Capabilities a fields listing can be filtered on (all must hold). */
export interface FieldFilter {
  attributePatterns?: string[] | undefined;
  displayed?: boolean | undefined;
  searchable?: boolean | undefined;
  sortable?: boolean | undefined;
  distinct?: boolean | undefined;
  rankingRule?: boolean | undefined;
  filterable?: boolean | undefined;
}

/** `list` names `path` itself or one of its parents (a bare `*` names everything). */
function listed(list: readonly string[], path: string): boolean {
  return list.some((a) => a === '*' || isPathOrChild(a, path));
}

/** Every field path of `leaves` with the parents of nested ones, sorted. */
export function withParents(leaves: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const leaf of leaves) {
    out.add(leaf);
    for (let i = leaf.indexOf('.'); i > 0; i = leaf.indexOf('.', i + 1)) out.add(leaf.slice(0, i));
  }
  return [...out].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

export function fieldMetadata(name: string, s: IndexSettings): FieldMetadata {
  let order: 'asc' | 'desc' | undefined;
  for (const text of s.rankingRules) {
    const r = parseRankingRule(text);
    if (typeof r !== 'string' && (r.kind === 'asc' || r.kind === 'desc') && r.field === name) {
      order = r.kind;
      break;
    }
  }
  // The first filterable rule matching the field decides its features.
  const rule = s.filterableAttributes.find((r) => matchRule(r, name) === 'match');
  const features = rule ? featuresOf(rule) : { facetSearch: false, equality: false, comparison: false };
  const sortBy = s.faceting.sortFacetValuesBy[name] ?? s.faceting.sortFacetValuesBy['*'] ?? 'alpha';
  const localized = (s.localizedAttributes ?? []).find((r) => r.attributePatterns.some((p) => matchesPattern(p, name)));
  return {
    name,
    displayed: { enabled: listed(s.displayedAttributes, name) },
    searchable: { enabled: listed(s.searchableAttributes, name) },
    sortable: { enabled: s.sortableAttributes.some((a) => isPathOrChild(a, name)) },
    distinct: { enabled: s.distinctAttribute !== null && isPathOrChild(s.distinctAttribute, name) },
    rankingRule: order ? { enabled: true, order } : { enabled: false },
    filterable: {
      enabled: features.equality || features.comparison || features.facetSearch,
      sortBy,
      facetSearch: features.facetSearch,
      equality: features.equality,
      comparison: features.comparison,
    },
    localized: { locales: localized ? [...localized.locales] : [] },
  };
}

export function fieldPasses(f: FieldMetadata, filter: FieldFilter | null | undefined): boolean {
  if (!filter) return true;
  if (filter.attributePatterns && !filter.attributePatterns.some((p) => matchesPattern(p, f.name))) return false;
  const checks: [boolean | undefined, boolean][] = [
    [filter.displayed, f.displayed.enabled],
    [filter.searchable, f.searchable.enabled],
    [filter.sortable, f.sortable.enabled],
    [filter.distinct, f.distinct.enabled],
    [filter.rankingRule, f.rankingRule.enabled],
    [filter.filterable, f.filterable.enabled],
  ];
  return checks.every(([want, has]) => want === undefined || want === has);
}
