import type { RankingRule } from '../ranking/rule.js';
import { rustFloat } from '../filter/errors.js';
import type { FacetState } from './facet-state.js';
import { haversine } from './geo.js';
import type { SortCriterion } from './sort.js';

/** Cost of documents without `_geo`: after every document that has one, in both directions. */
const MISSING = 0x7fffffff;
/** Costs are centimeters, so that nearly equal distances still order as the reference orders them. */
const CM_PER_M = 100;
const FARTHEST = 2_100_000_000;

/**
 * The `_geoPoint(lat, lng):asc|desc` criterion as a ranking rule of the search core: nearer
 * (or farther) documents first, documents without `_geo` last. It takes no part in the
 * ranking score; its details show the document's point and its distance, as the reference.
 */
export function geoSortRule(state: FacetState, c: Extract<SortCriterion, { kind: 'geo' }>): RankingRule {
  const name = `_geoPoint(${rustFloat(c.lat)}, ${rustFloat(c.lng)}):${c.ascending ? 'asc' : 'desc'}`;
  const distance = (d: number): number | null => {
    const p = state.geo.get(d);
    return p ? haversine(c.lat, c.lng, p[0], p[1]) : null;
  };
  return {
    name,
    isSort: true,
    usesMatches: false,
    costs(_ctx, docs) {
      const out = new Int32Array(docs.length);
      for (let i = 0; i < docs.length; i++) {
        const m = distance(docs[i]!);
        if (m === null) out[i] = MISSING;
        else {
          const cm = Math.min(FARTHEST, Math.round(m * CM_PER_M));
          out[i] = c.ascending ? cm : FARTHEST - cm;
        }
      }
      return out;
    },
    ranks() {
      return [];
    },
    detail(_ctx, d, _cost, order) {
      const p = state.geo.get(d);
      if (!p) return [name, { order, value: null }];
      return [name, { order, value: { lat: p[0], lng: p[1] }, distance: distance(d) }];
    },
  };
}
