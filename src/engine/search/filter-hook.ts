// Where the filter engine plugs into search. A resolver turns the `filter` parameter
// into the set of documents allowed (a bitmap by docid); the search then ranks only
// those. Until a filter engine registers itself, the default resolver validates the
// parameter and answers like the reference does for attributes that are not filterable.

import { ApiError } from '../../errors/api-error.js';
import type { IndexState } from '../fulltext/index-state.js';
import type { IndexSettings } from '../settings/settings.js';

export interface FilterInput {
  state: IndexState;
  settings: IndexSettings;
  filter: unknown;
}

/** Allowed documents (1 = allowed, by docid), or null when the filter keeps everything. */
export type SearchFilterResolver = (input: FilterInput) => Uint8Array | null | Promise<Uint8Array | null>;

function describe(v: unknown): string {
  return JSON.stringify(v);
}

/** The reference's answer to a filter of the wrong JSON type. */
export function checkFilterShape(filter: unknown): void {
  if (typeof filter === 'string' || filter === null || filter === undefined) return;
  if (!Array.isArray(filter)) {
    throw new ApiError('invalid_search_filter', `Invalid syntax for the filter parameter: \`expected String, Array, found: ${describe(filter)}\`.`);
  }
  for (const item of filter) {
    if (typeof item === 'string') continue;
    if (Array.isArray(item)) {
      for (const inner of item) {
        if (typeof inner !== 'string') {
          throw new ApiError('invalid_search_filter', `Invalid syntax for the filter parameter: \`expected String, found: ${describe(inner)}\`.`);
        }
      }
      continue;
    }
    throw new ApiError('invalid_search_filter', `Invalid syntax for the filter parameter: \`expected String, [String], found: ${describe(item)}\`.`);
  }
}

/** The expressions of a filter in the order they appear. */
function expressions(filter: unknown): string[] {
  if (typeof filter === 'string') return [filter];
  if (!Array.isArray(filter)) return [];
  return filter.flatMap((f) => (Array.isArray(f) ? (f as string[]) : [f as string]));
}

export function isEmptyFilter(filter: unknown): boolean {
  return expressions(filter).every((e) => e.trim() === '');
}

/** The first attribute an expression names, with its 1-based column span. */
function firstAttribute(expr: string): { name: string; start: number; end: number } | null {
  const m = /^(\s*(?:NOT\s+|\(\s*)*)(?:"([^"]*)"|'([^']*)'|([^\s=!<>()]+))/.exec(expr);
  if (!m) return null;
  const raw = m[2] ?? m[3] ?? m[4] ?? '';
  const quoted = m[2] !== undefined || m[3] !== undefined;
  const start = m[1]!.length + (quoted ? 1 : 0);
  let name = raw;
  if (/^_geo(Radius|BoundingBox|Polygon)$/.test(raw)) name = raw === '_geoPolygon' ? '_geojson' : '_geo';
  return { name, start: start + 1, end: start + raw.length + 1 };
}

export function filterableNames(settings: IndexSettings): string[] {
  const out = new Set<string>();
  for (const f of settings.filterableAttributes) {
    if (typeof f === 'string') out.add(f);
    else for (const p of f.attributePatterns) out.add(p);
  }
  return [...out].sort();
}

const defaultResolver: SearchFilterResolver = ({ settings, filter }) => {
  checkFilterShape(filter);
  if (isEmptyFilter(filter)) return null;
  const expr = expressions(filter).find((e) => e.trim() !== '')!;
  const attr = firstAttribute(expr);
  const names = filterableNames(settings);
  const where = attr ? `\n${attr.start}:${attr.end} ${expr}` : '';
  const name = attr?.name ?? expr.trim();
  if (names.length === 0) {
    throw new ApiError('invalid_search_filter', `Attribute \`${name}\` is not filterable. This index does not have configured filterable attributes.${where}`);
  }
  if (!names.includes(name)) {
    throw new ApiError('invalid_search_filter', `Attribute \`${name}\` is not filterable. Available filterable attributes are: \`${names.join(', ')}\`.${where}`);
  }
  throw new ApiError('invalid_search_filter', `Filter expressions cannot be evaluated on this node yet.${where}`);
};

let resolver: SearchFilterResolver = defaultResolver;

/** Installs the filter engine. */
export function setSearchFilterResolver(fn: SearchFilterResolver): void {
  resolver = fn;
}

export async function resolveSearchFilter(input: FilterInput): Promise<Uint8Array | null> {
  if (input.filter === undefined || input.filter === null) return null;
  return resolver(input);
}
