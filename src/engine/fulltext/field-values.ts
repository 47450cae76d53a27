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
  return valuesIn(rec?.values ?? null, attr);
}

/** Values of `attr` among a record's kept values (`DocRecord.values`). */
export function valuesIn(v: Record<string, FieldValue[]> | null, attr: string): FieldValue[] {
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
  return keysOf(valuesOf(rec, attr));
}

function keysOf(values: readonly FieldValue[]): string[] {
  return values.map((v) => (typeof v === 'number' ? `n:${v}` : `s:${normalizeFacet(v)}`));
}

const NO_KEY = -1;
const SEVERAL = -2;

/**
 * Every document's distinct keys (as `distinctKeys` gives them), interned as small ids: what
 * counting the distinct hits among all candidates reads instead of a record per candidate.
 */
export class DistinctColumn {
  private constructor(
    /** Key → id; shared with the columns carried from this one (ids only grow). */
    readonly ids: Map<string, number>,
    /** Per docid: NO_KEY, SEVERAL (then in `several`), or the id of its one key. */
    private one: Int32Array,
    private readonly several: Map<number, number[]>,
  ) {}

  static empty(capacity: number): DistinctColumn {
    return new DistinctColumn(new Map(), new Int32Array(capacity).fill(NO_KEY), new Map());
  }

  /** A copy over `capacity` docids, for the state after a batch to update. */
  carried(capacity: number): DistinctColumn {
    const one = new Int32Array(capacity).fill(NO_KEY);
    one.set(this.one.subarray(0, Math.min(capacity, this.one.length)));
    return new DistinctColumn(this.ids, one, new Map(this.several));
  }

  /** Sets a document's keys from its record's kept values (null: no document, or no values). */
  set(d: number, values: Record<string, FieldValue[]> | null, attr: string): void {
    const keys = keysOf(valuesIn(values, attr));
    this.several.delete(d);
    if (keys.length === 0) {
      this.one[d] = NO_KEY;
      return;
    }
    const ids = [...new Set(keys)].map((k) => {
      let id = this.ids.get(k);
      if (id === undefined) this.ids.set(k, (id = this.ids.size));
      return id;
    });
    if (ids.length === 1) this.one[d] = ids[0]!;
    else {
      this.one[d] = SEVERAL;
      this.several.set(d, ids);
    }
  }

  /**
   * Whether `d` is the first document offered with any of its keys; if so, its keys are
   * taken in `seen` (one byte per id, `ids.size` long). A document without keys always is.
   */
  firstOf(seen: Uint8Array, d: number): boolean {
    const k = d < this.one.length ? this.one[d]! : NO_KEY;
    if (k === NO_KEY) return true;
    if (k !== SEVERAL) {
      if (seen[k] === 1) return false;
      seen[k] = 1;
      return true;
    }
    const ids = this.several.get(d)!;
    if (ids.some((id) => seen[id] === 1)) return false;
    for (const id of ids) seen[id] = 1;
    return true;
  }
}
