import type { FilterNode } from './filter-tree.js';

/** The first `_foreign(…)` of the filter, for the feature gate. */
export function findForeign(node: FilterNode): Extract<FilterNode, { type: 'foreign' }> | null {
  switch (node.type) {
    case 'foreign':
      return node;
    case 'not':
      return findForeign(node.child);
    case 'and':
    case 'or':
      for (const c of node.children) {
        const f = findForeign(c);
        if (f) return f;
      }
      return null;
    default:
      return null;
  }
}
