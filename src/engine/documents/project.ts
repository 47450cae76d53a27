import type { Doc } from './primary-key.js';

/**
 * Keeps the fields of `doc` selected by `fields` (`*` for all, dot notation into objects),
 * in the document's own key order.
 */
export function projectFields(doc: Doc, fields: readonly string[] | null | undefined): Doc {
  if (!fields || fields.includes('*')) return doc;
  const out: Doc = {};
  for (const [key, value] of Object.entries(doc)) {
    const v = selectValue(key, value, fields);
    if (v !== undefined) out[key] = v;
  }
  return out;
}

function selectValue(path: string, value: unknown, fields: readonly string[]): unknown {
  if (fields.some((f) => f === path || matchesWildcard(f, path) || path.startsWith(f + '.'))) return value;
  // Some requested field lies below this one: descend.
  if (!fields.some((f) => f.startsWith(path + '.'))) return undefined;
  if (Array.isArray(value)) {
    const items = value
      .map((item) => (item !== null && typeof item === 'object' && !Array.isArray(item) ? selectObject(path, item as Doc, fields) : undefined))
      .filter((x) => x !== undefined);
    return items.length > 0 ? items : undefined;
  }
  if (value !== null && typeof value === 'object') return selectObject(path, value as Doc, fields);
  return undefined;
}

function selectObject(path: string, obj: Doc, fields: readonly string[]): Doc | undefined {
  const out: Doc = {};
  let any = false;
  for (const [k, v] of Object.entries(obj)) {
    const sel = selectValue(`${path}.${k}`, v, fields);
    if (sel !== undefined) {
      out[k] = sel;
      any = true;
    }
  }
  return any ? out : undefined;
}

function matchesWildcard(pattern: string, path: string): boolean {
  if (!pattern.includes('*')) return false;
  if (pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1))) return true;
  if (pattern.startsWith('*') && path.endsWith(pattern.slice(1))) return true;
  return false;
}
