import type { SearchRuleStore } from '../../engine/search-rules/rules.js';
import type { AppContext } from '../context.js';

/** The dynamic search rules searches apply: none unless the `dynamicSearchRules` feature is on. */
export function searchRules(ctx: AppContext): SearchRuleStore | null {
  return ctx.features.isEnabled('dynamicSearchRules') ? ctx.engine.searchRules : null;
}

/** The search options the node's experimental features decide. */
export function searchOptions(ctx: AppContext) {
  return { containsFilter: ctx.features.isEnabled('containsFilter'), searchRules: searchRules(ctx), foreignKeys: ctx.features.isEnabled('foreignKeys') };
}
