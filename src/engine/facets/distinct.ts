import { ApiError, type ErrorCode } from '../../errors/api-error.js';
import { isFilterable, matchingFeatures, patternsWhere } from '../filter/rules.js';
import type { IndexSettings } from '../settings/settings.js';
import { Bitmap } from './bitmap.js';
import type { FacetState } from './facet-state.js';
import type { ForwardIndex } from './field-facets.js';

/**
 * The `distinct` search parameter must name a filterable attribute. The setting
 * `distinctAttribute` is not checked: it is faceted whatever the filterable attributes say.
 */
export function checkDistinctAttribute(field: string, settings: IndexSettings, code: ErrorCode = 'invalid_search_distinct'): void {
  const rules = settings.filterableAttributes;
  const m = matchingFeatures(field, rules);
  if (m && isFilterable(m.features)) return;
  let detail: string;
  if (m) {
    detail =
      `Note: this attribute matches rule #${m.ruleIndex} in filterableAttributes, but this rule does not enable filtering.\n` +
      `Hint: enable filtering in rule #${m.ruleIndex} by adding appropriate filter features.\n` +
      `Hint: prepend another rule matching ${field} with filter features before rule #${m.ruleIndex}`;
  } else {
    const patterns = patternsWhere(rules, isFilterable);
    detail = patterns.length === 0
      ? 'This index does not have configured filterable attributes.'
      : `Available filterable attributes patterns are: \`${patterns.join(', ')}\`.`;
  }
  throw new ApiError(code, `Attribute \`${field}\` is not filterable and thus, cannot be used as distinct attribute. ${detail}`);
}

/**
 * Keeps one document per distinct value, in the order documents are offered: a kept
 * document rules out every later one sharing any of its values (numbers and normalized
 * strings). Documents without a value are always kept.
 */
export class DistinctFilter {
  private readonly fwd: ForwardIndex | null;
  private readonly seen = new Set<number>();

  constructor(state: FacetState, field: string) {
    this.fwd = state.field(field)?.forward() ?? null;
  }

  keep(docid: number): boolean {
    const f = this.fwd;
    if (!f || docid + 1 >= f.offsets.length) return true;
    const from = f.offsets[docid]!;
    const to = f.offsets[docid + 1]!;
    for (let i = from; i < to; i++) if (this.seen.has(f.values[i]!)) return false;
    for (let i = from; i < to; i++) this.seen.add(f.values[i]!);
    return true;
  }
}

/** The candidates left once distinct is applied in docid order, as the reference counts exhaustive totals. */
export function distinctCandidates(state: FacetState, field: string, candidates: Bitmap): Bitmap {
  const d = new DistinctFilter(state, field);
  const out = new Bitmap(state.capacity());
  for (const docid of candidates) if (d.keep(docid)) out.add(docid);
  return out;
}
