// Where the facet engine plugs into search: given the candidates of a search and the
// facets asked for, it returns `facetDistribution` and `facetStats`. The default counts
// the values kept in the document records, which is exact but linear in the candidates;
// a facet index with per-value document sets can replace it.

import { normalizeFacet } from '../tokenizer/index.js';
import { valuesOf } from '../fulltext/field-values.js';
import type { IndexState } from '../fulltext/index-state.js';
import type { IndexSettings } from '../settings/settings.js';

export interface FacetInput {
  state: IndexState;
  settings: IndexSettings;
  facets: readonly string[];
  /** Candidates of the search, ascending docids. */
  candidates: Uint32Array;
}

export interface FacetOutput {
  facetDistribution: Record<string, Record<string, number>>;
  facetStats: Record<string, { min: number; max: number }>;
}

export type FacetResolver = (input: FacetInput) => FacetOutput;

function orderOf(settings: IndexSettings, facet: string): 'alpha' | 'count' {
  const by = settings.faceting.sortFacetValuesBy;
  return by[facet] ?? by['*'] ?? 'alpha';
}

const defaultResolver: FacetResolver = ({ state, settings, facets, candidates }) => {
  const facetDistribution: FacetOutput['facetDistribution'] = {};
  const facetStats: FacetOutput['facetStats'] = {};
  for (const facet of facets) {
    const counts = new Map<string, { shown: string; count: number }>();
    let min = Infinity;
    let max = -Infinity;
    for (let i = 0; i < candidates.length; i++) {
      const d = candidates[i]!;
      const seen = new Set<string>();
      for (const v of valuesOf(state.records[d], facet)) {
        const key = typeof v === 'number' ? `n${v}` : `s${normalizeFacet(v)}`;
        if (seen.has(key)) continue;
        seen.add(key);
        if (typeof v === 'number') {
          if (v < min) min = v;
          if (v > max) max = v;
        }
        const e = counts.get(key);
        if (e) e.count++;
        else counts.set(key, { shown: String(v), count: 1 });
      }
    }
    const entries = [...counts.values()];
    if (orderOf(settings, facet) === 'count') {
      entries.sort((a, b) => b.count - a.count || (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
    } else {
      entries.sort((a, b) => (a.shown < b.shown ? -1 : a.shown > b.shown ? 1 : 0));
    }
    facetDistribution[facet] = Object.fromEntries(
      entries.slice(0, settings.faceting.maxValuesPerFacet).map((e) => [e.shown, e.count]),
    );
    if (min !== Infinity) facetStats[facet] = { min, max };
  }
  return { facetDistribution, facetStats };
};

let resolver: FacetResolver = defaultResolver;

/** Installs the facet engine. */
export function setFacetResolver(fn: FacetResolver): void {
  resolver = fn;
}

export function computeFacets(input: FacetInput): FacetOutput {
  return resolver(input);
}
