import { ApiError } from '../../errors/api-error.js';
import { matchingFeatures, patternsWhere } from '../filter/rules.js';
import { assertFacetSearchEnabled, type IndexSettings } from '../settings/settings.js';
import { normalize, TypoMatcher } from '../tokenizer/index.js';
import type { Bitmap } from './bitmap.js';
import type { FacetState } from './facet-state.js';
import type { FieldFacets, StringValue } from './field-facets.js';

export interface FacetHit {
  value: string;
  count: number;
}

/** Facet search needs `facetSearch` on the index and the facet-search feature on the attribute. */
export function checkFacetSearchable(facetName: string, settings: IndexSettings): void {
  assertFacetSearchEnabled(settings);
  const rules = settings.filterableAttributes;
  const m = matchingFeatures(facetName, rules);
  if (m?.features.facetSearch) return;
  let detail: string;
  if (m) {
    detail =
      `Note: this attribute matches rule #${m.ruleIndex} in filterableAttributes, but this rule does not enable facetSearch.\n` +
      `Hint: enable facetSearch in rule #${m.ruleIndex} by adding \`"facetSearch": true\` to the rule.\n` +
      `Hint: prepend another rule matching ${facetName} with facetSearch: true before rule #${m.ruleIndex}`;
  } else {
    const patterns = patternsWhere(rules, (f) => f.facetSearch);
    const add = ' To make it facet-searchable add it to the `filterableAttributes` index settings.';
    detail = patterns.length === 0
      ? `This index does not have configured facet-searchable attributes.${add}`
      : `Available facet-searchable attributes patterns are: \`${patterns.join(', ')}\`.${add}`;
  }
  throw new ApiError('invalid_facet_search_facet_name', `Attribute \`${facetName}\` is not facet-searchable. ${detail}`);
}

/** Each string value with the form a facet query is compared to (lowercased, accents removed). */
const searchKeys = new WeakMap<string[], [string, StringValue][]>();

function keysOf(field: FieldFacets): [string, StringValue][] {
  const sorted = field.stringKeys();
  let keys = searchKeys.get(sorted);
  if (!keys) {
    keys = sorted.map((k) => [normalize(k), field.strings.get(k)!] as [string, StringValue]);
    searchKeys.set(sorted, keys);
  }
  return keys;
}

/**
 * The string values of `facetName` among `candidates` that the facet query matches as a
 * prefix, with typos allowed by the query's length in bytes (0 below `oneTypo`, 1 below
 * `twoTypos`, else 2) unless typo tolerance is off for the index, the attribute or the word.
 */
export function searchFacetValues(
  state: FacetState,
  settings: IndexSettings,
  facetName: string,
  facetQuery: string | null,
  candidates: Bitmap,
): FacetHit[] {
  const field = state.field(facetName);
  if (!field) return [];
  const isAll = candidates.size() === state.all.length;
  const q = facetQuery ? normalize(facetQuery) : '';
  const typo = settings.typoTolerance;
  let accept: (key: string) => boolean = () => true;
  if (q !== '') {
    const bytes = Buffer.byteLength(q);
    const exact = !typo.enabled || typo.disableOnAttributes.includes(facetName) || typo.disableOnWords.includes(q);
    const max = exact || bytes < typo.minWordSizeForTypos.oneTypo ? 0 : bytes < typo.minWordSizeForTypos.twoTypos ? 1 : 2;
    if (max === 0) {
      accept = (key) => key.startsWith(q);
    } else {
      const matcher = new TypoMatcher(q, max, { prefix: true });
      accept = (key) => key.startsWith(q) || matcher.distance(key, max) >= 0;
    }
  }
  const hits: [FacetHit, number][] = [];
  for (const [key, v] of keysOf(field)) {
    if (!accept(key)) continue;
    const count = isAll ? v.docids.length : candidates.countOf(v.docids);
    if (count > 0) hits.push([{ value: field.original(v, isAll ? null : candidates), count }, hits.length]);
  }
  const by = settings.faceting.sortFacetValuesBy;
  if ((by[facetName] ?? by['*'] ?? 'alpha') === 'count') hits.sort((a, b) => b[0].count - a[0].count || a[1] - b[1]);
  return hits.slice(0, settings.faceting.maxValuesPerFacet).map(([h]) => h);
}
