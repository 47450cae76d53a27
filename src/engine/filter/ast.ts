import type { Span } from './errors.js';

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
  | { type: 'geoPolygon'; points: [Token, Token][] };

/** The first `CONTAINS` keyword of the filter, for the feature gate. */
export function findContains(node: FilterNode): Token | null {
  switch (node.type) {
    case 'condition':
      return node.cond.op === 'CONTAINS' ? node.cond.keyword : null;
    case 'not':
      return findContains(node.child);
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

/** Every field a filter names (conditions and `IN`), in order of appearance. */
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
