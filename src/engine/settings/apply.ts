import { ApiError } from '../../errors/api-error.js';
import { applyEmbedders } from './embedders.js';
import { minWordSizeError } from './setting-values.js';
import { defaultSettings, type IndexSettings } from './settings.js';
import { isPlainObject } from './validate-core.js';

type Obj = Record<string, unknown>;

/** A value without its `null` fields (resets of fields that had no value). */
function stripNulls(v: unknown): unknown {
  if (!isPlainObject(v)) return structuredClone(v);
  const out: Obj = {};
  for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = stripNulls(x);
  return out;
}

/** `base` with `patch` laid over it: `null` puts the default back, nested objects in `deep` merge too. */
function merge(base: Obj, patch: Obj, defaults: Obj, deep: readonly string[] = []): Obj {
  const out: Obj = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      if (defaults[k] === undefined) delete out[k];
      else out[k] = structuredClone(defaults[k]);
    } else if (deep.includes(k) && isPlainObject(v) && isPlainObject(out[k])) {
      out[k] = merge(out[k] as Obj, v, (defaults[k] as Obj | undefined) ?? {});
    } else out[k] = stripNulls(v);
  }
  return out;
}

/** Keys of `obj` in the order of `keys`. */
function ordered(obj: Obj, keys: readonly string[]): Obj {
  const out: Obj = {};
  for (const k of keys) if (k in obj) out[k] = obj[k];
  return out;
}

function applyTypoTolerance(current: IndexSettings['typoTolerance'], patch: Obj): IndexSettings['typoTolerance'] {
  const defaults = defaultSettings().typoTolerance as unknown as Obj;
  const next = merge(current as unknown as Obj, patch, defaults, ['minWordSizeForTypos']) as unknown as IndexSettings['typoTolerance'];
  const { oneTypo, twoTypos } = next.minWordSizeForTypos;
  // Each bound may come from a different update; only the result can be judged.
  if (oneTypo > twoTypos) throw new ApiError('invalid_settings_typo_tolerance', minWordSizeError(oneTypo, twoTypos));
  next.minWordSizeForTypos = { oneTypo, twoTypos };
  return ordered(next as unknown as Obj, ['enabled', 'minWordSizeForTypos', 'disableOnWords', 'disableOnAttributes', 'disableOnNumbers']) as unknown as IndexSettings['typoTolerance'];
}

/**
 * Applies a validated settings patch (see `patch.ts`): absent fields keep their value, `null`
 * resets a field, object settings merge field by field, `embedders` merges per embedder with
 * `null` removing one. Throws an ApiError when the result is invalid as a whole (typo bounds
 * set by different updates, an embedder left incomplete), which fails the task.
 */
export function applySettingsPatch(current: IndexSettings, patch: Record<string, unknown>): IndexSettings {
  const defaults = defaultSettings() as unknown as Obj;
  const next = structuredClone(current) as unknown as Obj;
  for (const [key, value] of Object.entries(patch)) {
    if (!(key in defaults)) continue; // an unknown key can only come from an older version's log
    if (value === null) {
      next[key] = structuredClone(defaults[key]);
      continue;
    }
    switch (key) {
      case 'typoTolerance':
        next[key] = applyTypoTolerance(next[key] as IndexSettings['typoTolerance'], value as Obj);
        break;
      case 'faceting':
      case 'pagination':
        next[key] = merge(next[key] as Obj, value as Obj, defaults[key] as Obj);
        break;
      case 'embedders':
        next[key] = applyEmbedders(next[key] as Record<string, Obj>, value as Record<string, Obj | null>);
        break;
      case 'chat':
        next[key] = ordered(merge(next[key] as Obj, value as Obj, {}, ['searchParameters']), [
          'description',
          'documentTemplate',
          'documentTemplateMaxBytes',
          'searchParameters',
        ]);
        break;
      default:
        next[key] = structuredClone(value);
    }
  }
  return next as unknown as IndexSettings;
}
