import { ApiError } from '../../errors/api-error.js';
import { redactEmbedder } from './embedder-fields.js';
import { sortedKeys } from './validate-core.js';

/** An index's settings as the engine uses them (always complete: defaults filled in). */

export interface FilterableAttributeRule {
  attributePatterns: string[];
  features: {
    facetSearch: boolean;
    filter: { equality: boolean; comparison: boolean };
  };
}

export interface TypoTolerance {
  enabled: boolean;
  minWordSizeForTypos: { oneTypo: number; twoTypos: number };
  disableOnWords: string[];
  disableOnAttributes: string[];
  disableOnNumbers: boolean;
}

export interface Faceting {
  maxValuesPerFacet: number;
  sortFacetValuesBy: Record<string, 'alpha' | 'count'>;
}

export interface LocalizedAttributeRule {
  attributePatterns: string[];
  locales: string[];
}

export interface IndexSettings {
  displayedAttributes: string[];
  searchableAttributes: string[];
  filterableAttributes: (string | FilterableAttributeRule)[];
  sortableAttributes: string[];
  rankingRules: string[];
  stopWords: string[];
  nonSeparatorTokens: string[];
  separatorTokens: string[];
  dictionary: string[];
  synonyms: Record<string, string[]>;
  distinctAttribute: string | null;
  proximityPrecision: 'byWord' | 'byAttribute';
  typoTolerance: TypoTolerance;
  faceting: Faceting;
  pagination: { maxTotalHits: number };
  embedders: Record<string, Record<string, unknown>>;
  searchCutoffMs: number | null;
  localizedAttributes: LocalizedAttributeRule[] | null;
  facetSearch: boolean;
  prefixSearch: 'indexingTime' | 'disabled';
  chat: Record<string, unknown>;
  vectorStore: 'stable' | 'experimental';
  /** Fields holding ids of another index's documents, shown in place of the ids (experimental). */
  foreignKeys: { foreignIndexUid: string; fieldName: string }[];
}

export const DEFAULT_RANKING_RULES = ['words', 'typo', 'proximity', 'attribute', 'sort', 'exactness'];

export function defaultSettings(): IndexSettings {
  return {
    displayedAttributes: ['*'],
    searchableAttributes: ['*'],
    filterableAttributes: [],
    sortableAttributes: [],
    rankingRules: [...DEFAULT_RANKING_RULES],
    stopWords: [],
    nonSeparatorTokens: [],
    separatorTokens: [],
    dictionary: [],
    synonyms: {},
    distinctAttribute: null,
    proximityPrecision: 'byWord',
    typoTolerance: {
      enabled: true,
      minWordSizeForTypos: { oneTypo: 5, twoTypos: 9 },
      disableOnWords: [],
      disableOnAttributes: [],
      disableOnNumbers: false,
    },
    faceting: { maxValuesPerFacet: 100, sortFacetValuesBy: { '*': 'alpha' } },
    pagination: { maxTotalHits: 1000 },
    embedders: {},
    searchCutoffMs: null,
    localizedAttributes: [],
    facetSearch: true,
    prefixSearch: 'indexingTime',
    chat: {},
    vectorStore: 'stable',
    foreignKeys: [],
  };
}

/**
 * Settings as clients read them. The whole-settings object lists the fields the spec lists,
 * in its order; `localizedAttributes` is read through its own route only.
 */
export const SETTINGS_VIEW_ORDER: readonly (keyof IndexSettings)[] = [
  'displayedAttributes',
  'searchableAttributes',
  'filterableAttributes',
  'sortableAttributes',
  'rankingRules',
  'stopWords',
  'nonSeparatorTokens',
  'separatorTokens',
  'dictionary',
  'synonyms',
  'distinctAttribute',
  'typoTolerance',
  'faceting',
  'pagination',
  'proximityPrecision',
  'facetSearch',
  'prefixSearch',
  'searchCutoffMs',
  'embedders',
  'chat',
  'vectorStore',
];

/** One setting's value as its own route returns it. */
export function settingView(s: IndexSettings, key: keyof IndexSettings): unknown {
  switch (key) {
    case 'typoTolerance': {
      const t = s.typoTolerance;
      return {
        enabled: t.enabled,
        minWordSizeForTypos: { oneTypo: t.minWordSizeForTypos.oneTypo, twoTypos: t.minWordSizeForTypos.twoTypos },
        disableOnWords: t.disableOnWords,
        disableOnAttributes: t.disableOnAttributes,
        disableOnNumbers: t.disableOnNumbers,
      };
    }
    case 'faceting':
      // `*` always has an order: alphabetical unless set otherwise.
      return {
        maxValuesPerFacet: s.faceting.maxValuesPerFacet,
        sortFacetValuesBy: sortedKeys({ '*': 'alpha', ...s.faceting.sortFacetValuesBy }),
      };
    case 'embedders':
      return sortedKeys(Object.fromEntries(Object.entries(s.embedders).map(([name, e]) => [name, redactEmbedder(e)])));
    case 'localizedAttributes':
      return s.localizedAttributes ?? [];
    default:
      return structuredClone(s[key]);
  }
}

/**
 * The whole settings object. Its typo tolerance shows the four fields the spec's default object
 * shows; `disableOnNumbers` appears once it is turned on, so that a set value is never hidden.
 */
export function settingsView(s: IndexSettings, opts: { foreignKeys?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SETTINGS_VIEW_ORDER) {
    out[key] = settingView(s, key);
    // Listed, as by the reference, only while its experimental feature is on.
    if (key === 'sortableAttributes' && opts.foreignKeys) out['foreignKeys'] = settingView(s, 'foreignKeys');
  }
  const typo = out['typoTolerance'] as Record<string, unknown>;
  if (typo['disableOnNumbers'] === false) delete typo['disableOnNumbers'];
  return out;
}

/** What the facet-search route answers when `facetSearch` is off for the index. */
export function assertFacetSearchEnabled(s: IndexSettings): void {
  if (!s.facetSearch) throw new ApiError('facet_search_disabled', 'The facet search is disabled for this index');
}
