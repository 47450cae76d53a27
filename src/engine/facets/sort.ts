import { ApiError, type ErrorCode } from '../../errors/api-error.js';
import { rustFloat } from '../filter/errors.js';
import { byteOrder, isFacetedBy, isFilterable, matchingFeatures, patternsWhere } from '../filter/rules.js';
import type { IndexSettings } from '../settings/settings.js';
import { Bitmap } from './bitmap.js';
import type { FacetState } from './facet-state.js';
import type { FieldFacets, ForwardIndex } from './field-facets.js';
import { haversine } from './geo.js';

export type SortCriterion =
  | { kind: 'field'; field: string; ascending: boolean; expr: string }
  | { kind: 'geo'; lat: number; lng: number; ascending: boolean; expr: string };

/** A run of documents that tie on one criterion, in the criterion's order. */
export interface SortBucket {
  docids: number[];
  /** The number or (normalized) string the documents share; null for those without a value. */
  value: number | string | null;
  /** Geo criteria: the meters from the sort point. */
  distance?: number;
}

const RESERVED_SORT = ['_geo', '_geoDistance', '_geoPoint', '_geoRadius', '_geoBoundingBox'];

function badLat(lat: number): string {
  return `Bad latitude \`${rustFloat(lat)}\`. Latitude must be contained between -90 and 90 degrees.`;
}

function badLng(lng: number): string {
  const normalized = ((((lng + 180) % 360) + 360) % 360) - 180;
  return `Bad longitude \`${rustFloat(lng)}\`. Longitude must be contained between -180 and 180 degrees. Hint: try using \`${rustFloat(normalized)}\` instead.`;
}

function rustF64(s: string): number | null {
  return /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(s) ? Number(s) : null;
}

/** Reads one `attribute:asc|desc` or `_geoPoint(lat, lng):asc|desc` expression, with the reference's errors. */
export function parseSortExpression(expr: string, code: ErrorCode = 'invalid_search_sort'): SortCriterion {
  const colon = expr.lastIndexOf(':');
  const dir = colon >= 0 ? expr.slice(colon + 1) : '';
  if (dir !== 'asc' && dir !== 'desc') {
    throw new ApiError(code, `Invalid syntax for the sort parameter: expected expression ending by \`:asc\` or \`:desc\`, found \`${expr}\`.`);
  }
  const ascending = dir === 'asc';
  const member = expr.slice(0, colon);
  const badGeoPoint = () =>
    new ApiError(
      code,
      `Invalid syntax for the geo parameter: expected expression formated like \`_geoPoint(latitude, longitude)\` and ending by \`:asc\` or \`:desc\`, found \`${member}\`.`,
    );
  if (member.startsWith('_geoPoint(') && member.endsWith(')')) {
    const inner = member.slice('_geoPoint('.length, -1);
    const comma = inner.indexOf(',');
    const lat = comma < 0 ? null : rustF64(inner.slice(0, comma).trim());
    const lng = comma < 0 ? null : rustF64(inner.slice(comma + 1).trim());
    if (lat === null || lng === null) throw badGeoPoint();
    if (!(lat >= -90 && lat <= 90)) throw new ApiError(code, badLat(lat));
    if (!(lng >= -180 && lng <= 180)) throw new ApiError(code, badLng(lng));
    return { kind: 'geo', lat, lng, ascending, expr };
  }
  const reserved =
    RESERVED_SORT.includes(member) || ['_geoRadius(', '_geoBoundingBox(', '_geo(', '_geoDistance('].some((p) => member.startsWith(p));
  if (reserved) {
    if (member.startsWith('_geoPoint')) throw badGeoPoint();
    const geoHint = " is a reserved keyword and thus can't be used as a sort expression. Use the _geoPoint(latitude, longitude) built-in rule to sort on _geo field coordinates.";
    if (member === '_geo') throw new ApiError(code, `\`_geo\`${geoHint}`);
    for (const f of ['_geoRadius', '_geoBoundingBox']) if (member.startsWith(f)) throw new ApiError(code, `\`${f}\`${geoHint}`);
    throw new ApiError(code, `\`${member}\` is a reserved keyword and thus can't be used as a sort expression.`);
  }
  return { kind: 'field', field: member, ascending, expr };
}

/**
 * A comma-separated `sort` query parameter splits `_geoPoint(lat, lng):asc` at its comma;
 * this puts such fragments back together (whole items pass through unchanged).
 */
export function rejoinGeoPoints(items: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < items.length; i++) {
    let item = items[i]!;
    if (item.trimStart().startsWith('_geoPoint(')) {
      while (!item.includes(')') && i + 1 < items.length) item += ',' + items[++i]!;
    }
    out.push(item);
  }
  return out;
}

export function parseSort(sort: readonly string[], code: ErrorCode = 'invalid_search_sort'): SortCriterion[] {
  return sort.map((s) => parseSortExpression(s, code));
}

/**
 * Refuses criteria on attributes that are not sortable. `requireSortRule`: the search route
 * also needs `sort` among the ranking rules (the documents route does not).
 */
export function checkSortable(criteria: readonly SortCriterion[], settings: IndexSettings, code: ErrorCode, requireSortRule: boolean): void {
  if (criteria.length === 0) return;
  if (requireSortRule && !settings.rankingRules.includes('sort')) {
    throw new ApiError(code, 'You must specify where `sort` is listed in the rankingRules setting to use the sort parameter at search time.');
  }
  const sortable = settings.sortableAttributes;
  for (const c of criteria) {
    const field = c.kind === 'geo' ? '_geo' : c.field;
    const ok = c.kind === 'geo' ? sortable.includes('_geo') : sortable.some((s) => isFacetedBy(field, s));
    if (ok) continue;
    const displayed = settings.displayedAttributes;
    const all = displayed.includes('*');
    const visible = [...new Set(sortable)].filter((s) => all || displayed.includes(s)).sort(byteOrder);
    const hidden = visible.length < new Set(sortable).size;
    const detail =
      sortable.length === 0
        ? 'This index does not have configured sortable attributes.'
        : `Available sortable attributes are: \`${visible.join(', ')}${hidden ? ', <..hidden-attributes>' : ''}\`.`;
    throw new ApiError(code, `Attribute \`${field}\` is not sortable. ${detail}`);
  }
}

/**
 * The candidates in the order of one criterion, as buckets of tied documents, produced
 * lazily. Field criteria: numbers first, then strings (normalized, byte order), each in the
 * criterion's direction, then the documents without a value; a document with several
 * values sorts by the first one reached. Geo criteria: one bucket per document by distance.
 */
export function* sortBuckets(state: FacetState, c: SortCriterion, candidates: Bitmap): Generator<SortBucket> {
  const remaining = candidates.clone();
  if (c.kind === 'geo') {
    for (const [docid, distance] of state.geo.byDistance(c.lat, c.lng, candidates, c.ascending)) {
      remaining.delete(docid);
      yield { docids: [docid], value: null, distance };
    }
  } else {
    const field = state.field(c.field);
    const values = field ? field.numberKeys().length + field.stringKeys().length : 0;
    if (field && remaining.size() * 8 < values) {
      // Few candidates among many values: rank the candidates by their own values instead.
      yield* fewCandidates(field, c.ascending, remaining);
      return;
    }
    if (field) {
      const nums = field.numberKeys();
      for (let k = 0; k < nums.length; k++) {
        const n = nums[c.ascending ? k : nums.length - 1 - k]!;
        const docids = take(remaining, field.numbers.get(n)!);
        if (docids.length > 0) yield { docids, value: n };
      }
      const strs = field.stringKeys();
      for (let k = 0; k < strs.length; k++) {
        const s = strs[c.ascending ? k : strs.length - 1 - k]!;
        const docids = take(remaining, field.strings.get(s)!.docids);
        if (docids.length > 0) yield { docids, value: s };
      }
    }
  }
  const rest = [...remaining];
  if (rest.length > 0) yield { docids: rest, value: null };
}

/** Buckets of a small candidate set, from the per-document values of the field. */
function* fewCandidates(field: FieldFacets, ascending: boolean, candidates: Bitmap): Generator<SortBucket> {
  const fwd = field.forward();
  const numCount = field.numberKeys().length;
  const strCount = field.stringKeys().length;
  // Numbers come before strings in both directions; within each kind the direction applies.
  const rankOf = (slot: number) =>
    ascending ? slot : slot < numCount ? numCount - 1 - slot : numCount + strCount - 1 - (slot - numCount);
  const ranked: [number, number, number][] = [];
  const missing: number[] = [];
  const limit = fwd.offsets.length - 1;
  for (const d of candidates) {
    let best = Infinity;
    let bestSlot = -1;
    if (d < limit) {
      for (let i = fwd.offsets[d]!; i < fwd.offsets[d + 1]!; i++) {
        const r = rankOf(fwd.values[i]!);
        if (r < best) {
          best = r;
          bestSlot = fwd.values[i]!;
        }
      }
    }
    if (bestSlot < 0) missing.push(d);
    else ranked.push([best, d, bestSlot]);
  }
  ranked.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  for (let i = 0; i < ranked.length; ) {
    const [rank, , slot] = ranked[i]!;
    const docids: number[] = [];
    for (; i < ranked.length && ranked[i]![0] === rank; i++) docids.push(ranked[i]![1]);
    const v = fwd.slots[slot]!;
    yield { docids, value: typeof v === 'number' ? v : v.key };
  }
  if (missing.length > 0) yield { docids: missing, value: null };
}

function take(remaining: Bitmap, posting: Uint32Array): number[] {
  const out = remaining.filter(posting);
  for (const d of out) remaining.delete(d);
  return out;
}

/**
 * Orders candidates by several criteria (earlier ones first), stopping once `limit`
 * documents are placed. Ties left by every criterion stay in docid order.
 */
export function sortDocids(state: FacetState, criteria: readonly SortCriterion[], candidates: Bitmap, limit = Infinity): number[] {
  const out: number[] = [];
  const walk = (level: number, docs: Bitmap) => {
    if (out.length >= limit) return;
    if (level === criteria.length) {
      for (const d of docs) {
        out.push(d);
        if (out.length >= limit) return;
      }
      return;
    }
    for (const b of sortBuckets(state, criteria[level]!, docs)) {
      if (b.docids.length === 1 || level + 1 === criteria.length) {
        for (const d of b.docids) {
          out.push(d);
          if (out.length >= limit) return;
        }
      } else {
        walk(level + 1, Bitmap.of(b.docids));
      }
      if (out.length >= limit) return;
    }
  };
  walk(0, candidates);
  return out;
}

/** Meters, rounded, between a document's `_geo` point and (lat, lng), as hits show `_geoDistance`. */
export function geoDistance(state: FacetState, docid: number, lat: number, lng: number): number | null {
  const p = state.geo.get(docid);
  return p ? Math.round(haversine(lat, lng, p[0], p[1])) : null;
}

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
