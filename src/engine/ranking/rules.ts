// The list of rules a search runs, from the `rankingRules` setting: `words` is added
// before the first of typo/proximity/attribute/exactness when missing (and left out
// with the `all` matching strategy); `sort` expands to the request's sort criteria; a
// field sorted once is not sorted again. A placeholder search keeps only the sort rules.

import { attributeRule } from './attribute.js';
import { exactnessRule } from './exactness.js';
import { proximityRule } from './proximity.js';
import type { RankingRule } from './rule.js';
import { sortRule } from './sort.js';
import { typoRule } from './typo.js';
import { wordsRule } from './words.js';

export interface SortCriterion {
  field: string;
  ascending: boolean;
  /** A rule built elsewhere (the facet index's `_geoPoint` sort) instead of a field sort. */
  rule?: RankingRule;
}

/** Makes the rule of a field sort (`sort` criteria and `field:asc|desc` rules alike). */
export type SortRuleMaker = (field: string, ascending: boolean) => RankingRule;

const QUERY_RULES: Record<string, RankingRule> = {
  words: wordsRule,
  typo: typoRule,
  proximity: proximityRule,
  attribute: attributeRule,
  attributeRank: attributeRule,
  wordPosition: attributeRule,
  exactness: exactnessRule,
};

export function rankingRules(
  settingsRules: readonly string[],
  sort: readonly SortCriterion[],
  opts: { placeholder: boolean; matchingAll: boolean; sortRule?: SortRuleMaker },
): RankingRule[] {
  const out: RankingRule[] = [];
  const used = new Set<RankingRule>();
  const sorted = new Set<string>();
  let words = opts.matchingAll;
  const pushSort = (field: string, ascending: boolean, rule?: RankingRule) => {
    if (sorted.has(field)) return;
    sorted.add(field);
    out.push(rule ?? (opts.sortRule ?? sortRule)(field, ascending));
  };
  for (const rr of settingsRules) {
    const custom = /^(.+):(asc|desc)$/.exec(rr);
    if (custom) {
      pushSort(custom[1]!, custom[2] === 'asc');
      continue;
    }
    if (rr === 'sort') {
      for (const c of sort) pushSort(c.field, c.ascending, c.rule);
      continue;
    }
    const rule = QUERY_RULES[rr];
    if (!rule || opts.placeholder) continue;
    if (rule !== wordsRule && !words) {
      out.push(wordsRule);
      words = true;
      used.add(wordsRule);
    }
    if (rule === wordsRule) {
      if (words) continue;
      words = true;
    }
    if (used.has(rule)) continue;
    used.add(rule);
    out.push(rule);
  }
  return out;
}

/**
 * The rules that order semantic hits, as the reference builds them for a vector search:
 * the first of words/typo/proximity/attribute/exactness becomes the vector sort (or it
 * comes last when there is none), the sort rules keep their places around it.
 */
export function semanticRules(
  settingsRules: readonly string[],
  sort: readonly SortCriterion[],
  sortRule?: SortRuleMaker,
): { before: RankingRule[]; after: RankingRule[] } {
  const all = rankingRules(settingsRules, sort, { placeholder: false, matchingAll: false, sortRule });
  const at = all.findIndex((r) => !r.isSort);
  if (at < 0) return { before: all, after: [] };
  return { before: all.slice(0, at), after: all.slice(at).filter((r) => r.isSort) };
}
