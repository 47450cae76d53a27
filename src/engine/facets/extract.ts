import { ApiError } from '../../errors/api-error.js';
import { stringifyJson } from '../../util/exact-json.js';
import type { Doc } from '../documents/primary-key.js';
import type { FilterableAttributeRule, IndexSettings } from '../settings/settings.js';
import { normalizeFacet } from '../tokenizer/index.js';
import { isFacetedBy, matchRule, type PatternMatch } from '../filter/rules.js';

/** Fields a document carries that the facet index handles on their own, never as plain facets. */
export const GEO_FIELD = '_geo';
export const GEOJSON_FIELD = '_geojson';
const SKIPPED = new Set([GEO_FIELD, GEOJSON_FIELD, '_vectors']);

/** The longest normalized string facet the reference keeps (its key limit minus overhead). */
export const MAX_FACET_BYTES = 468;

/** What decides which document fields get facet values, and whether geo data is kept. */
export interface FacetConfig {
  filterable: (string | FilterableAttributeRule)[];
  sortable: string[];
  distinct: string | null;
  /** Fields of `field:asc` / `field:desc` ranking rules. */
  ascDesc: string[];
}

export function facetConfigOf(s: IndexSettings): FacetConfig {
  const ascDesc: string[] = [];
  for (const r of s.rankingRules) {
    const m = /^(.+):(asc|desc)$/.exec(r);
    if (m) ascDesc.push(m[1]!);
  }
  return { filterable: s.filterableAttributes, sortable: s.sortableAttributes, distinct: s.distinctAttribute, ascDesc };
}

export function sameFacetConfig(a: FacetConfig, b: FacetConfig): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether `_geo` points are kept: `_geo` filterable (as a plain string) or sortable. */
export function geoEnabled(c: FacetConfig): boolean {
  return c.filterable.includes(GEO_FIELD) || c.sortable.includes(GEO_FIELD);
}

export function geojsonEnabled(c: FacetConfig): boolean {
  return c.filterable.includes(GEOJSON_FIELD);
}

/** Match / parent-of-a-match / no match of a field path against every faceting setting. */
export function facetSelector(c: FacetConfig): (path: string) => PatternMatch {
  const cache = new Map<string, PatternMatch>();
  return (path) => {
    let m = cache.get(path);
    if (m !== undefined) return m;
    m = 'none';
    const merge = (x: PatternMatch) => {
      if (x === 'match') m = 'match';
      else if (x === 'parent' && m === 'none') m = 'parent';
    };
    let ruleSeen = false;
    for (const rule of c.filterable) {
      const r = matchRule(rule, path);
      if (r === 'match' && !ruleSeen) {
        ruleSeen = true;
        const f = typeof rule === 'string' ? null : rule.features;
        if (!f || f.facetSearch || f.filter.equality || f.filter.comparison) merge('match');
      } else if (r === 'parent') {
        merge('parent');
      }
    }
    for (const f of [...c.sortable, ...c.ascDesc]) {
      if (isFacetedBy(path, f)) merge('match');
      else if (isFacetedBy(f, path)) merge('parent');
    }
    if (c.distinct !== null) {
      if (path === c.distinct) merge('match');
      else if (isFacetedBy(c.distinct, path)) merge('parent');
    }
    cache.set(path, m);
    return m;
  };
}

/** One facet fact about a document: kinds `e` exists, `z` null, `y` empty, `s` string, `n` number. */
export type FacetEmit = (field: string, kind: 'e' | 'z' | 'y' | 's' | 'n', value: string | number | null) => void;

type Depth = 'base' | 'array';

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Walks a document the way the reference extracts facets: dot paths into nested objects,
 * array elements under their array's path (objects in arrays too), `EXISTS` for every path
 * met, `IS NULL` / `IS EMPTY` only for values not inside an array.
 */
export function extractFacets(doc: Doc, select: (path: string) => PatternMatch, emit: FacetEmit): void {
  const value = (path: string, depth: Depth, v: unknown) => {
    emit(path, 'e', null);
    if (typeof v === 'number') {
      if (Number.isFinite(v)) emit(path, 'n', v === 0 ? 0 : v);
    } else if (typeof v === 'bigint') {
      // Filters and facets compare numbers as doubles, as the reference's facets do.
      emit(path, 'n', Number(v));
    } else if (typeof v === 'string') {
      if (v !== '') emit(path, 's', v);
      else if (depth === 'base') emit(path, 'y', null);
    } else if (typeof v === 'boolean') {
      emit(path, 's', v ? 'true' : 'false');
    } else if (v === null) {
      if (depth === 'base') emit(path, 'z', null);
    } else if (depth === 'base' && (Array.isArray(v) ? v.length === 0 : Object.keys(v as object).length === 0)) {
      emit(path, 'y', null);
    }
  };
  const seekObject = (obj: Record<string, unknown>, base: string, depth: Depth) => {
    for (const [k, v] of Object.entries(obj)) {
      const path = `${base}.${k}`;
      const sel = select(path);
      if (sel === 'none') continue;
      if (sel === 'match') value(path, depth, v);
      if (isObject(v)) seekObject(v, path, depth);
      else if (Array.isArray(v)) seekArray(v, path);
    }
  };
  const seekArray = (arr: unknown[], base: string) => {
    for (const el of arr) {
      if (isObject(el)) seekObject(el, base, 'array');
      else if (Array.isArray(el)) seekArray(el, base);
      else if (select(base) === 'match') value(base, 'array', el);
    }
  };
  for (const [k, v] of Object.entries(doc)) {
    if (SKIPPED.has(k)) continue;
    const sel = select(k);
    if (sel === 'none') continue;
    if (isObject(v)) seekObject(v, k, 'base');
    else if (Array.isArray(v)) seekArray(v, k);
    if (sel === 'match') value(k, 'base', v);
  }
}

/** A string facet's key: normalized, then cut to the reference's byte limit on a character boundary. */
export function facetKey(original: string): string {
  const n = normalizeFacet(original);
  if (n.length * 3 <= MAX_FACET_BYTES || Buffer.byteLength(n) <= MAX_FACET_BYTES) return n;
  let bytes = 0;
  let end = 0;
  for (const ch of n) {
    const b = Buffer.byteLength(ch);
    if (bytes + b > MAX_FACET_BYTES) break;
    bytes += b;
    end += ch.length;
  }
  return n.slice(0, end);
}

/** `_geo` as `[lat, lng]`: numbers or numeric strings; anything else means no point. */
export function extractGeoPoint(doc: Doc): [number, number] | null {
  const g = doc[GEO_FIELD];
  if (!isObject(g)) return null;
  const num = (v: unknown) => (typeof v === 'number' || typeof v === 'bigint' ? Number(v) : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN);
  const lat = num(g['lat']);
  const lng = num(g['lng']);
  if (!Number.isFinite(lat) || !Number.isFinite(lng)) return null;
  return [lat, lng];
}

/**
 * The reference's refusal of a malformed `_geo` (null is fine: no point). `id` is the
 * document's primary key value, shown the way the reference shows it.
 */
export function checkGeoField(doc: Doc, id: unknown): ApiError | null {
  const g = doc[GEO_FIELD];
  if (g === undefined || g === null) return null;
  const docId = `\`${stringifyJson(typeof id === 'number' || typeof id === 'bigint' ? String(id) : id)}\``;
  const err = (m: string) => new ApiError('invalid_document_geo_field', m);
  if (!isObject(g)) {
    return err(`The \`_geo\` field in the document with the id: ${docId} is not an object. Was expecting an object with the \`_geo.lat\` and \`_geo.lng\` fields but instead got \`${stringifyJson(g)}\`.`);
  }
  const extra = Object.fromEntries(Object.entries(g).filter(([k]) => k !== 'lat' && k !== 'lng'));
  if (Object.keys(extra).length > 0) {
    return err(`The \`_geo\` field in the document with the id: ${docId} contains the following unexpected fields: \`${stringifyJson(extra)}\`.`);
  }
  const hasLat = 'lat' in g;
  const hasLng = 'lng' in g;
  if (!hasLat && !hasLng) return err(`Could not find latitude nor longitude in the document with the id: ${docId}. Was expecting \`_geo.lat\` and \`_geo.lng\` fields.`);
  if (!hasLat) return err(`Could not find latitude in the document with the id: ${docId}. Was expecting a \`_geo.lat\` field.`);
  if (!hasLng) return err(`Could not find longitude in the document with the id: ${docId}. Was expecting a \`_geo.lng\` field.`);
  const ok = (v: unknown) =>
    (typeof v === 'number' && Number.isFinite(v)) || typeof v === 'bigint' || (typeof v === 'string' && /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/.test(v));
  const badLat = !ok(g['lat']);
  const badLng = !ok(g['lng']);
  if (badLat && badLng) {
    return err(`Could not parse latitude nor longitude in the document with the id: ${docId}. Was expecting finite numbers but instead got \`${stringifyJson(g['lat'])}\` and \`${stringifyJson(g['lng'])}\`.`);
  }
  if (badLat) return err(`Could not parse latitude in the document with the id: ${docId}. Was expecting a finite number but instead got \`${stringifyJson(g['lat'])}\`.`);
  if (badLng) return err(`Could not parse longitude in the document with the id: ${docId}. Was expecting a finite number but instead got \`${stringifyJson(g['lng'])}\`.`);
  return null;
}
