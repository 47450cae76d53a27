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

/**
 * A sort order over documents: rank per docid (equal values share a rank, ranks are dense)
 * and the value each document sorts by. `valueOf` answers undefined where only the
 * document's record can tell which of its values it shows (see `bestValue`).
 */
export interface SortColumn {
  rank: Int32Array;
  valueOf(d: number): FieldValue | null | undefined;
}

/** A document's value for a sort: its number or its (normalized) string, and the value shown. */
export interface SortValue {
  num: number;
  /** '' for a number. */
  str: string;
  shown: FieldValue;
}

/**
 * The value a document sorts by, as the reference's facet-based sort places it: any number
 * before any string, the best one in the requested direction (strings compared normalized,
 * blank ones ignored); among equal ones the first in the document shows.
 */
export function bestValue(vals: readonly FieldValue[], ascending: boolean): SortValue | null {
  let best: SortValue | null = null;
  for (const v of vals) {
    if (typeof v === 'number') {
      if (!best || best.str !== '' || (ascending ? v < best.num : v > best.num)) best = { num: v, str: '', shown: v };
    } else if (!best || best.str !== '') {
      const s = normalizeFacet(v);
      if (s === '') continue;
      if (!best || (ascending ? s < best.str : s > best.str)) best = { num: 0, str: s, shown: v };
    }
  }
  return best;
}

interface Keyed extends SortValue {
  d: number;
}

/**
 * Builds the sort order from every document's record (see `bestValue`): numbers first,
 * then strings, then documents without the field. The facet index builds the same order
 * from its postings far faster (`facets/sort-column.ts`); this one serves states without it.
 */
export function buildSortColumn(capacity: number, recordAt: (d: number) => DocRecord | undefined, attr: string, ascending: boolean): SortColumn {
  const rank = new Int32Array(capacity).fill(MISSING_RANK);
  const value = new Array<FieldValue | null>(capacity).fill(null);
  const nums: Keyed[] = [];
  const strs: Keyed[] = [];
  for (let d = 0; d < capacity; d++) {
    const best = bestValue(valuesOf(recordAt(d), attr), ascending);
    if (!best) continue;
    (best.str === '' ? nums : strs).push({ ...best, d });
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
  return { rank, valueOf: (d) => value[d] ?? null };
}

/** Keys identifying a document's value(s) for distinct; empty when it has none. */
export function distinctKeys(rec: DocRecord | undefined, attr: string): string[] {
  return valuesOf(rec, attr).map((v) => (typeof v === 'number' ? `n:${v}` : `s:${normalizeFacet(v)}`));
}
