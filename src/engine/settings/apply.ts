import { defaultSettings, type IndexSettings } from './settings.js';

/** Object-valued settings are merged field by field; the others are replaced. */
const MERGED = new Set(['typoTolerance', 'faceting', 'pagination']);

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function mergeObject(base: unknown, patch: Record<string, unknown>, defaults: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  const defs = defaults as Record<string, unknown>;
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) out[k] = structuredClone(defs[k]);
    else if (isPlainObject(v) && isPlainObject(out[k]) && k !== 'sortFacetValuesBy') {
      out[k] = mergeObject(out[k], v, defs[k] ?? {});
    } else out[k] = v;
  }
  return out;
}

/**
 * Applies a validated settings patch: absent fields keep their value, `null` resets a field,
 * object settings merge, `embedders` merges per embedder with `null` removing one.
 */
export function applySettingsPatch(current: IndexSettings, patch: Record<string, unknown>): IndexSettings {
  const defaults = defaultSettings() as unknown as Record<string, unknown>;
  const next = structuredClone(current) as unknown as Record<string, unknown>;
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      next[key] = structuredClone(defaults[key]);
    } else if (key === 'embedders' && isPlainObject(value)) {
      const embedders = { ...(next[key] as Record<string, unknown>) };
      for (const [name, e] of Object.entries(value)) {
        if (e === null) delete embedders[name];
        else if (isPlainObject(e) && isPlainObject(embedders[name])) {
          embedders[name] = mergeObject(embedders[name], e, {});
        } else embedders[name] = e;
      }
      next[key] = embedders;
    } else if (MERGED.has(key) && isPlainObject(value)) {
      next[key] = mergeObject(next[key], value, defaults[key]);
    } else {
      next[key] = structuredClone(value);
    }
  }
  return next as unknown as IndexSettings;
}
