// Raw field values kept per document for sorting, custom ranking rules, distinct and
// (later) filters and facets, and the sort orders derived from them.

import { normalizeFacet } from '../tokenizer/index.js';
import type { IndexSettings } from '../settings/settings.js';
import type { DocRecord, FieldValue } from './doc-record.js';
import { isPathOrChild, matchesPattern } from './field-table.js';

/** `field:asc` / `field:desc` ranking rules of the settings. */
export function customRuleFields(settings: IndexSettings): string[] {
  const out: string[] = [];
  for (const r of settings.rankingRules) {
    const m = /^(.+):(asc|desc)$/.exec(r);
    if (m) out.push(m[1]!);
  }
  return out;
}

/** Attribute names (or patterns) whose values must be kept. */
export function valueAttributes(settings: IndexSettings): { names: string[]; patterns: string[] } {
  const names = new Set<string>([...settings.sortableAttributes, ...customRuleFields(settings)]);
  if (settings.distinctAttribute) names.add(settings.distinctAttribute);
  const patterns: string[] = [];
  for (const f of settings.filterableAttributes) {
    if (typeof f === 'string') names.add(f);
    else {
      for (const p of f.attributePatterns) {
        if (p.includes('*')) patterns.push(p);
        else names.add(p);
      }
    }
  }
  return { names: [...names].sort(), patterns };
}

export function valuePredicate(settings: IndexSettings): (path: string) => boolean {
  const { names, patterns } = valueAttributes(settings);
  if (names.length === 0 && patterns.length === 0) return () => false;
  return (path) => names.some((n) => isPathOrChild(n, path)) || patterns.some((p) => matchesPattern(p, path));
}

/** Values of `attr` in a record: its own path and every path below it. */
export function valuesOf(rec: DocRecord | undefined, attr: string): FieldValue[] {
  const v = rec?.values;
  if (!v) return [];
  const own = v[attr];
  let out: FieldValue[] | null = own ? [...own] : null;
  for (const [path, vals] of Object.entries(v)) {
    if (path !== attr && isPathOrChild(attr, path)) {
      out ??= [];
      for (const x of vals) out.push(x); // an array field may hold more values than a call takes arguments
    }
  }
  return out ?? [];
}

export const MISSING_RANK = 0x7fffffff;

/** A sort order over documents: rank per docid (equal values share a rank) and the value used. */
export interface SortColumn {
  rank: Int32Array;
  value: (FieldValue | null)[];
}

interface Keyed {
  d: number;
  num: number;
  str: string;
  shown: FieldValue;
}

/**
 * Builds the order the reference's facet-based sort produces: numbers first, then strings
 * (compared normalized), then documents without the field. A document with several values
 * is placed by its best one in the requested direction.
 */
export function buildSortColumn(capacity: number, recordAt: (d: number) => DocRecord | undefined, attr: string, ascending: boolean): SortColumn {
  const rank = new Int32Array(capacity).fill(MISSING_RANK);
  const value = new Array<FieldValue | null>(capacity).fill(null);
  const nums: Keyed[] = [];
  const strs: Keyed[] = [];
  for (let d = 0; d < capacity; d++) {
    const vals = valuesOf(recordAt(d), attr);
    if (vals.length === 0) continue;
    let best: Keyed | null = null;
    for (const v of vals) {
      if (typeof v === 'number') {
        if (!best || best.str !== '' || (ascending ? v < best.num : v > best.num)) best = { d, num: v, str: '', shown: v };
      } else if (!best || best.str !== '') {
        const s = normalizeFacet(v);
        if (s === '') continue;
        if (!best || (ascending ? s < best.str : s > best.str)) best = { d, num: 0, str: s, shown: v };
      }
    }
    if (!best) continue;
    (best.str === '' ? nums : strs).push(best);
  }
  nums.sort((a, b) => (ascending ? a.num - b.num : b.num - a.num) || a.d - b.d);
  strs.sort((a, b) => (a.str === b.str ? a.d - b.d : (a.str < b.str) === ascending ? -1 : 1));
  let r = 0;
  let prev: Keyed | null = null;
  for (const k of [...nums, ...strs]) {
    if (prev && (prev.str !== k.str || prev.num !== k.num)) r++;
    rank[k.d] = r;
    value[k.d] = k.shown;
    prev = k;
  }
  return { rank, value };
}

/** Keys identifying a document's value(s) for distinct; empty when it has none. */
export function distinctKeys(rec: DocRecord | undefined, attr: string): string[] {
  return valuesOf(rec, attr).map((v) => (typeof v === 'number' ? `n:${v}` : `s:${normalizeFacet(v)}`));
}
