// The filter tree the parser builds, and the reading of a `filter` parameter (string or array
// form) into one tree, with the `CONTAINS` feature gate.

import { ApiError } from '../../errors/api-error.js';
import { stringifyJson } from '../../util/exact-json.js';
import { featureNotEnabled } from '../feature-switches.js';
import { FilterError, renderFilterError, type FilterErrorCode, type Span } from './errors.js';
import { parseFilterString } from './parser.js';
import { findForeign } from './find-foreign.js';

/** A word or quoted string of the filter: its value (unescaped) and where it was written. */
export interface Token {
  value: string;
  span: Span;
  /** The filter text the span points into (an array filter has one per string). */
  source: string;
}

export type Condition =
  | { op: '=' | '!=' | '<' | '<=' | '>' | '>='; value: Token }
  | { op: 'TO'; from: Token; to: Token }
  | { op: 'EXISTS' | 'IS NULL' | 'IS EMPTY' }
  | { op: 'CONTAINS' | 'STARTS WITH'; keyword: Token; value: Token };

export type FilterNode =
  | { type: 'and'; children: FilterNode[] }
  | { type: 'or'; children: FilterNode[] }
  | { type: 'not'; child: FilterNode }
  | { type: 'condition'; field: Token; cond: Condition }
  | { type: 'in'; field: Token; values: Token[] }
  | { type: 'geoRadius'; lat: Token; lng: Token; radius: Token; resolution: Token | null }
  | { type: 'geoBoundingBox'; topRight: [Token, Token]; bottomLeft: [Token, Token] }
  | { type: 'geoPolygon'; points: [Token, Token][] }
  /** `_foreign(field, filter)`: documents whose `field` holds the id of a document of the foreign index matching `filter`. */
  | { type: 'foreign'; keyword: Token; field: Token; filter: FilterNode };

/** The first `CONTAINS` keyword of the filter, for the feature gate. */
export function findContains(node: FilterNode): Token | null {
  switch (node.type) {
    case 'condition':
      return node.cond.op === 'CONTAINS' ? node.cond.keyword : null;
    case 'not':
      return findContains(node.child);
    case 'foreign':
      return findContains(node.filter);
    case 'and':
    case 'or':
      for (const c of node.children) {
        const t = findContains(c);
        if (t) return t;
      }
      return null;
    default:
      return null;
  }
}

/**
 * Every field a filter names (conditions and `IN`), in order of appearance; not those inside
 * `_foreign(…)`, which belong to another index.
 */
export function filterFields(node: FilterNode, out: Token[] = []): Token[] {
  switch (node.type) {
    case 'condition':
    case 'in':
      out.push(node.field);
      break;
    case 'not':
      filterFields(node.child, out);
      break;
    case 'and':
    case 'or':
      for (const c of node.children) filterFields(c, out);
      break;
    default:
      break;
  }
  return out;
}

/** Most conditions one filter may hold, as in the reference. */
export const MAX_FILTER_CONDITIONS = 2000;

/** Number of leaf conditions (comparisons, `IN`, geo shapes) of a filter. */
export function countConditions(node: FilterNode): number {
  switch (node.type) {
    case 'not':
      return countConditions(node.child);
    case 'foreign':
      return 1 + countConditions(node.filter);
    case 'and':
    case 'or':
      return node.children.reduce((n, c) => n + countConditions(c), 0);
    default:
      return 1;
  }
}

/**
 * Most values one filter may name: each condition's value and each entry of an `IN` list or a
 * polygon. Evaluating a filter costs time in proportion to them; beyond this, one request would
 * hold the node for seconds.
 */
export const MAX_FILTER_VALUES = 100_000;

/** Values a filter names (see {@link MAX_FILTER_VALUES}). */
export function countValues(node: FilterNode): number {
  switch (node.type) {
    case 'not':
      return countValues(node.child);
    case 'foreign':
      return countValues(node.filter);
    case 'and':
    case 'or':
      return node.children.reduce((n, c) => n + countValues(c), 0);
    case 'in':
      return Math.max(1, node.values.length);
    case 'geoPolygon':
      return node.points.length;
    default:
      return 1;
  }
}

export function tooManyFilterValues(code: FilterErrorCode, values: number, where = 'the filter names'): ApiError {
  return new ApiError(
    code,
    `Too many values in the filter: ${where} ${values} values (conditions and \`IN\` list entries together), and at most ${MAX_FILTER_VALUES} can be processed in one request.`,
  );
}

export interface FilterParseOptions {
  /** `invalid_search_filter`, `invalid_document_filter` or `invalid_similar_filter`, per route. */
  code: FilterErrorCode;
  /** The `containsFilter` experimental feature: `CONTAINS` is refused without it. */
  containsFilter?: boolean;
  /** The `foreignKeys` experimental feature: `_foreign(…)` is refused when this is false. */
  foreignKeys?: boolean;
}

function invalidExpression(code: FilterErrorCode, expected: string, found: unknown): ApiError {
  return new ApiError(code, `Invalid syntax for the filter parameter: \`expected ${expected}, found: ${stringifyJson(found)}\`.`);
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
  if (node && countConditions(node) > MAX_FILTER_CONDITIONS) {
    throw new ApiError(opts.code, `Too many filter conditions, can't process more than ${MAX_FILTER_CONDITIONS} filters.`);
  }
  if (node) {
    const values = countValues(node);
    if (values > MAX_FILTER_VALUES) throw tooManyFilterValues(opts.code, values);
  }
  if (node && !opts.containsFilter) {
    const kw = findContains(node);
    if (kw) {
      const refusal = featureNotEnabled('containsFilter', 'Using `CONTAINS` in a filter');
      throw new ApiError('feature_not_enabled', renderFilterError(refusal.message, kw.span, kw.source));
    }
  }
  if (node && opts.foreignKeys === false) {
    const f = findForeign(node);
    if (f) {
      // The reference's words (and its name for the feature), pointing at the foreign key field.
      throw new ApiError(
        'feature_not_enabled',
        renderFilterError('using a foreign filter requires enabling the `foreign_keys` experimental feature. See https://github.com/orgs/meilisearch/discussions/873', f.field.span, f.field.source),
      );
    }
  }
  return node;
}

/**
 * A filter that must select something by saying so: a deletion by filter. Empty strings and
 * empty arrays are no condition, so a filter made only of them would read as "every
 * document"; it is refused instead, with the reference's words.
 */
export function parseRequiredFilter(filter: unknown, opts: FilterParseOptions): FilterNode {
  const node = parseFilter(filter, opts);
  if (node === null) throw new ApiError(opts.code, 'Sending an empty filter is forbidden.');
  return node;
}
