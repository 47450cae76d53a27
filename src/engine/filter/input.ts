import { ApiError } from '../../errors/api-error.js';
import { featureNotEnabled } from '../../features/experimental-features.js';
import { findContains, type FilterNode } from './ast.js';
import { FilterError, renderFilterError, type FilterErrorCode } from './errors.js';
import { parseFilterString } from './parser.js';

export interface FilterParseOptions {
  /** `invalid_search_filter`, `invalid_document_filter` or `invalid_similar_filter`, per route. */
  code: FilterErrorCode;
  /** The `containsFilter` experimental feature: `CONTAINS` is refused without it. */
  containsFilter?: boolean;
}

function invalidExpression(code: FilterErrorCode, expected: string, found: unknown): ApiError {
  return new ApiError(code, `Invalid syntax for the filter parameter: \`expected ${expected}, found: ${JSON.stringify(found)}\`.`);
}

function parseOne(s: string, code: FilterErrorCode): FilterNode | null {
  try {
    return parseFilterString(s);
  } catch (e) {
    if (e instanceof FilterError) throw e.toApiError(code);
    throw e;
  }
}

/**
 * Reads a `filter` parameter: a string expression, or the array form where the outer array
 * is an AND of its elements and an inner array an OR of strings. Empty strings (and empty
 * inner arrays) are no condition; a filter with no condition at all is `null`.
 */
export function parseFilter(filter: unknown, opts: FilterParseOptions): FilterNode | null {
  let node: FilterNode | null;
  if (filter === null || filter === undefined) return null;
  if (typeof filter === 'string') {
    node = parseOne(filter, opts.code);
  } else if (Array.isArray(filter)) {
    const ands: FilterNode[] = [];
    for (const el of filter) {
      if (typeof el === 'string') {
        const n = parseOne(el, opts.code);
        if (n) ands.push(n);
      } else if (Array.isArray(el)) {
        const ors: FilterNode[] = [];
        for (const inner of el) {
          if (typeof inner !== 'string') throw invalidExpression(opts.code, 'String', inner);
          const n = parseOne(inner, opts.code);
          if (n) ors.push(n);
        }
        if (ors.length === 1) ands.push(ors[0]!);
        else if (ors.length > 1) ands.push({ type: 'or', children: ors });
      } else {
        throw invalidExpression(opts.code, 'String, [String]', el);
      }
    }
    node = ands.length === 0 ? null : ands.length === 1 ? ands[0]! : { type: 'and', children: ands };
  } else {
    throw invalidExpression(opts.code, 'String, Array', filter);
  }
  if (node && !opts.containsFilter) {
    const kw = findContains(node);
    if (kw) {
      const refusal = featureNotEnabled('containsFilter', 'Using `CONTAINS` in a filter');
      throw new ApiError('feature_not_enabled', renderFilterError(refusal.message, kw.span, kw.source));
    }
  }
  return node;
}
