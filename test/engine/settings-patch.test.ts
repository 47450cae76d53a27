import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { applySettingsPatch } from '../../src/engine/settings/apply.js';
import { checkSettingsPatch, parseSettingBody, parseSettingsBody, resetAllPatch, settingsDetails, storedPatch, type PatchEnv } from '../../src/engine/settings/patch.js';
import { defaultSettings, type IndexSettings } from '../../src/engine/settings/settings.js';

// Settings updates as a table: a body applied to some current settings gives these settings,
// with these task details; or it is refused with this error.

const apply = (current: IndexSettings, body: unknown) => applySettingsPatch(current, storedPatch(parseSettingsBody(body)));
const env = (enabled: string[] = []): PatchEnv => ({ isEnabled: (f) => enabled.includes(f), currentEmbedder: () => undefined });

function errorOf(fn: () => unknown): { code: string; message: string } {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('no error');
}

describe('settings patches', () => {
  const d = defaultSettings();

  const cases: [string, unknown, Partial<IndexSettings>][] = [
    ['replaces a list', { searchableAttributes: ['title', 'overview'] }, { searchableAttributes: ['title', 'overview'] }],
    ['a wildcard among attributes is the wildcard alone', { displayedAttributes: ['title', '*'] }, { displayedAttributes: ['*'] }],
    ['null resets a setting', { rankingRules: null }, { rankingRules: d.rankingRules }],
    ['merges typo tolerance field by field', { typoTolerance: { minWordSizeForTypos: { oneTypo: 4 } } }, { typoTolerance: { ...d.typoTolerance, minWordSizeForTypos: { ...d.typoTolerance.minWordSizeForTypos, oneTypo: 4 } } }],
    ['merges faceting', { faceting: { maxValuesPerFacet: 10 } }, { faceting: { ...d.faceting, maxValuesPerFacet: 10 } }],
    ['merges pagination', { pagination: { maxTotalHits: 50 } }, { pagination: { maxTotalHits: 50 } }],
    ['sets several at once', { stopWords: ['the'], distinctAttribute: 'sku', searchCutoffMs: 150 }, { stopWords: ['the'], distinctAttribute: 'sku', searchCutoffMs: 150 }],
    ['an empty body changes nothing', {}, {}],
  ];
  for (const [name, body, changed] of cases) {
    it(name, () => {
      expect(apply(d, body)).toEqual({ ...d, ...changed });
    });
  }

  it('resets every setting with the reset-all patch', () => {
    const changed = apply(d, { stopWords: ['a'], rankingRules: ['words'], distinctAttribute: 'x' });
    expect(applySettingsPatch(changed, storedPatch(resetAllPatch()))).toEqual(d);
  });

  it('parses a single setting route body, null resetting it', () => {
    expect(parseSettingBody('stopWords', ['a', 'b'])).toEqual({ stopWords: ['a', 'b'] });
    expect(parseSettingBody('distinctAttribute', null)).toEqual({ distinctAttribute: null });
  });

  it('writes the task details in the reference order, resets of attribute lists as the wildcard', () => {
    const patch = parseSettingsBody({ stopWords: ['a'], displayedAttributes: null, rankingRules: ['words'] });
    const details = settingsDetails(patch);
    expect(details).toEqual({ displayedAttributes: ['*'], rankingRules: ['words'], stopWords: ['a'] });
    expect(Object.keys(details)).toEqual(['displayedAttributes', 'rankingRules', 'stopWords']);
  });

  const refusals: [string, unknown, string, RegExp][] = [
    ['an unknown setting, with a hint', { rankingRule: [] }, 'bad_request', /^Unknown field `rankingRule`: did you mean `rankingRules`\? expected one of /],
    ['a body that is not an object', ['words'], 'bad_request', /^Invalid value type: expected an object, but found an array/],
    ['a list of the wrong type', { stopWords: 'the' }, 'invalid_settings_stop_words', /^Invalid value type at `\.stopWords`: expected an array, but found a string/],
    ['an unknown ranking rule', { rankingRules: ['nearness'] }, 'invalid_settings_ranking_rules', /`nearness` ranking rule is invalid/],
    ['a negative cutoff', { searchCutoffMs: -1 }, 'invalid_settings_search_cutoff_ms', /^Invalid value type at `\.searchCutoffMs`/],
  ];
  for (const [name, body, code, message] of refusals) {
    it(`refuses ${name}`, () => {
      const e = errorOf(() => parseSettingsBody(body));
      expect(e.code).toBe(code);
      expect(e.message).toMatch(message);
    });
  }

  it('refuses typo bounds that cross, once merged with the current ones', () => {
    const e = errorOf(() => apply(d, { typoTolerance: { minWordSizeForTypos: { oneTypo: 12 } } }));
    expect(e.code).toBe('invalid_settings_typo_tolerance');
  });

  it('checks feature-gated settings against the switches given as data', () => {
    const patch = parseSettingsBody({ embedders: { e: { source: 'userProvided', dimensions: 2 } }, vectorStore: 'experimental' });
    const refused = errorOf(() => checkSettingsPatch(patch, env()));
    expect(refused.code).toBe('feature_not_enabled');
    expect(() => checkSettingsPatch(patch, env(['vectorStoreSetting']))).not.toThrow();
  });
});
