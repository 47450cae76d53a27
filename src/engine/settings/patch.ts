import { featureNotEnabled, type GatedFeature } from '../feature-switches.js';
import { checkEmbedder, embedderFeatureUses, mergeEmbedder } from './embedders.js';
import { redactEmbedder } from './embedder-fields.js';
import { SETTING_FIELDS, SETTING_KEYS, settingField, type SettingKey } from './fields.js';
import { CHAT_KEYS } from './setting-values.js';
import { expectFields, isPlainObject, type VCtx } from './validate-core.js';

/**
 * A settings update as routes receive it: each named setting holds its parsed value, or
 * `null` to reset it. It is checked in three passes, as the reference does: value types in
 * body order, then experimental features, then embedders as a whole.
 */
export type SettingsPatch = Partial<Record<SettingKey, unknown>>;

type Embedder = Record<string, unknown>;

/** Parses a `PATCH /settings` body. */
export function parseSettingsBody(body: unknown): SettingsPatch {
  const root: VCtx = { path: '', code: 'bad_request' };
  const obj = expectFields(body, root, SETTING_KEYS);
  const patch: SettingsPatch = {};
  for (const [key, value] of Object.entries(obj)) {
    const field = settingField(key as SettingKey);
    patch[field.key] = value === null ? null : field.parse(value, { path: `.${key}`, code: field.code });
  }
  return patch;
}

/** Parses the body of a single-setting update route (a bare value, `null` resetting it). */
export function parseSettingBody(key: SettingKey, body: unknown): SettingsPatch {
  const field = settingField(key);
  return { [key]: body === null ? null : field.parse(body, { path: '', code: field.code }) };
}

/** What the checks need to know about the node and the index. */
export interface PatchEnv {
  isEnabled(feature: GatedFeature): boolean;
  /**
   * The embedder as the index holds it now; `'pending'` when an unfinished task may change it,
   * in which case only the task can judge the update.
   */
  currentEmbedder(name: string): Embedder | undefined | 'pending';
}

function requireFeature(env: PatchEnv, feature: GatedFeature, action: string): void {
  if (!env.isEnabled(feature)) throw featureNotEnabled(feature, action);
}

/** Feature gates, then embedder checks; throws the first problem found. */
export function checkSettingsPatch(patch: SettingsPatch, env: PatchEnv): void {
  const embedders = isPlainObject(patch.embedders) ? (patch.embedders as Record<string, Embedder | null>) : null;
  if (embedders) for (const use of embedderFeatureUses(embedders)) requireFeature(env, use.feature, use.action);
  for (const field of SETTING_FIELDS) {
    const value = patch[field.key];
    if (field.gate && value !== undefined && value !== null) requireFeature(env, field.gate[0], field.gate[1]);
  }
  if (!embedders) return;
  for (const [name, e] of Object.entries(embedders)) {
    if (!e) continue;
    const named = typeof e['source'] === 'string';
    checkEmbedder(name, e, named);
    const current = env.currentEmbedder(name);
    if (current === 'pending') continue;
    if (current) mergeEmbedder(name, current, e);
    else if (!named) checkEmbedder(name, e, true); // a new embedder must name its source
  }
}

/** The patch as the batch processor applies it. `replace` makes an object setting replace rather than merge. */
export function storedPatch(patch: SettingsPatch, opts: { replace?: boolean } = {}): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(patch)) {
    if ((key === 'displayedAttributes' || key === 'searchableAttributes') && Array.isArray(value) && value.includes('*')) {
      out[key] = ['*'];
    } else if (key === 'chat' && opts.replace && isPlainObject(value)) {
      out[key] = Object.fromEntries(CHAT_KEYS.map((k) => [k, value[k] ?? null]));
    } else out[key] = value;
  }
  return out;
}

/**
 * A settings task's `details`: the fields sent, in the reference's order, secrets masked. Reset
 * attribute lists show the wildcard they return to, the other resets `null`.
 */
export function settingsDetails(patch: SettingsPatch): Record<string, unknown> {
  const details: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    if (!(key in patch)) continue;
    const value = patch[key];
    if (value === null) details[key] = key === 'displayedAttributes' || key === 'searchableAttributes' ? ['*'] : null;
    else if (key === 'embedders' && isPlainObject(value)) {
      details[key] = Object.fromEntries(Object.entries(value).map(([n, e]) => [n, e === null ? null : redactEmbedder(e)]));
    } else details[key] = value;
  }
  return details;
}

/** Every setting reset: the patch of `DELETE /settings`. */
export function resetAllPatch(): SettingsPatch {
  return Object.fromEntries(SETTING_KEYS.map((k) => [k, null])) as SettingsPatch;
}
