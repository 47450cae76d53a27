import type { ErrorCode } from '../../errors/api-error.js';
import type { GatedFeature } from '../feature-switches.js';
import { parseEmbedders } from './embedders.js';
import {
  parseChat,
  parseFaceting,
  parseFilterableAttributes,
  parseForeignKeys,
  parseLocalizedAttributes,
  parsePagination,
  parseSynonyms,
  parseTypoTolerance,
  validateRankingRules,
} from './setting-values.js';
import type { IndexSettings } from './settings.js';
import { expectBool, expectEnum, expectString, expectStringArray, expectStringSet, expectUint, type VCtx } from './validate-core.js';

export type SettingKey = keyof IndexSettings;
type JsonSchema = Record<string, unknown>;

/** One setting: its sub-route, update verb, error code and value parser (for non-null values). */
export interface SettingField {
  key: SettingKey;
  route: string;
  verb: 'PUT' | 'PATCH';
  code: ErrorCode;
  parse(v: unknown, ctx: VCtx): unknown;
  schema: JsonSchema;
  /** Needs an experimental feature to be set: [feature, action as the error words it]. */
  gate?: readonly [GatedFeature, string];
}

const strings: JsonSchema = { type: 'array', items: { type: 'string' } };
const object: JsonSchema = { type: 'object' };

/** An object of exactly these fields, each optional and `null` to reset it (what `fieldsOf` parses). */
function fieldsSchema(fields: Record<string, JsonSchema>): JsonSchema {
  const properties = Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, { oneOf: [v, { type: 'null' }] }]));
  return { type: 'object', properties, additionalProperties: false };
}
const u8: JsonSchema = { type: 'integer', minimum: 0, maximum: 255 };
const typoSchema = fieldsSchema({
  enabled: { type: 'boolean' },
  minWordSizeForTypos: fieldsSchema({ oneTypo: u8, twoTypos: u8 }),
  disableOnWords: strings,
  disableOnAttributes: strings,
  disableOnNumbers: { type: 'boolean' },
});
const facetingSchema = fieldsSchema({
  maxValuesPerFacet: { type: 'integer', minimum: 0 },
  sortFacetValuesBy: { type: 'object', additionalProperties: { enum: ['alpha', 'count'] } },
});
const paginationSchema = fieldsSchema({ maxTotalHits: { type: 'integer', minimum: 1 } });

/** Every setting, in the reference's field order (which task details follow). */
export const SETTING_FIELDS: readonly SettingField[] = [
  { key: 'displayedAttributes', route: 'displayed-attributes', verb: 'PUT', code: 'invalid_settings_displayed_attributes', parse: expectStringArray, schema: strings },
  { key: 'searchableAttributes', route: 'searchable-attributes', verb: 'PUT', code: 'invalid_settings_searchable_attributes', parse: expectStringArray, schema: strings },
  {
    key: 'filterableAttributes',
    route: 'filterable-attributes',
    verb: 'PUT',
    code: 'invalid_settings_filterable_attributes',
    parse: parseFilterableAttributes,
    schema: { type: 'array', items: { oneOf: [{ type: 'string' }, object] } },
  },
  { key: 'sortableAttributes', route: 'sortable-attributes', verb: 'PUT', code: 'invalid_settings_sortable_attributes', parse: expectStringSet, schema: strings },
  {
    key: 'foreignKeys',
    route: 'foreign-keys',
    verb: 'PUT',
    code: 'invalid_settings_foreign_keys',
    parse: parseForeignKeys,
    schema: {
      type: 'array',
      items: {
        type: 'object',
        properties: { foreignIndexUid: { type: 'string' }, fieldName: { type: 'string' } },
        required: ['foreignIndexUid', 'fieldName'],
        additionalProperties: false,
      },
    },
    gate: ['foreignKeys', 'setting `foreignKeys` in the index settings'],
  },
  { key: 'rankingRules', route: 'ranking-rules', verb: 'PUT', code: 'invalid_settings_ranking_rules', parse: validateRankingRules, schema: strings },
  { key: 'stopWords', route: 'stop-words', verb: 'PUT', code: 'invalid_settings_stop_words', parse: expectStringSet, schema: strings },
  { key: 'nonSeparatorTokens', route: 'non-separator-tokens', verb: 'PUT', code: 'invalid_settings_non_separator_tokens', parse: expectStringSet, schema: strings },
  { key: 'separatorTokens', route: 'separator-tokens', verb: 'PUT', code: 'invalid_settings_separator_tokens', parse: expectStringSet, schema: strings },
  { key: 'dictionary', route: 'dictionary', verb: 'PUT', code: 'invalid_settings_dictionary', parse: expectStringSet, schema: strings },
  {
    key: 'synonyms',
    route: 'synonyms',
    verb: 'PUT',
    code: 'invalid_settings_synonyms',
    parse: parseSynonyms,
    schema: { type: 'object', additionalProperties: strings },
  },
  { key: 'distinctAttribute', route: 'distinct-attribute', verb: 'PUT', code: 'invalid_settings_distinct_attribute', parse: expectString, schema: { type: 'string' } },
  {
    key: 'proximityPrecision',
    route: 'proximity-precision',
    verb: 'PUT',
    code: 'invalid_settings_proximity_precision',
    parse: (v, c) => expectEnum(v, c, ['byWord', 'byAttribute']),
    schema: { type: 'string', enum: ['byWord', 'byAttribute'] },
  },
  { key: 'typoTolerance', route: 'typo-tolerance', verb: 'PATCH', code: 'invalid_settings_typo_tolerance', parse: parseTypoTolerance, schema: typoSchema },
  { key: 'faceting', route: 'faceting', verb: 'PATCH', code: 'invalid_settings_faceting', parse: parseFaceting, schema: facetingSchema },
  { key: 'pagination', route: 'pagination', verb: 'PATCH', code: 'invalid_settings_pagination', parse: parsePagination, schema: paginationSchema },
  { key: 'embedders', route: 'embedders', verb: 'PATCH', code: 'invalid_settings_embedders', parse: parseEmbedders, schema: object },
  {
    key: 'searchCutoffMs',
    route: 'search-cutoff-ms',
    verb: 'PUT',
    code: 'invalid_settings_search_cutoff_ms',
    parse: (v, c) => expectUint(v, c),
    schema: { type: 'integer', minimum: 0 },
  },
  {
    key: 'localizedAttributes',
    route: 'localized-attributes',
    verb: 'PUT',
    code: 'invalid_settings_localized_attributes',
    parse: parseLocalizedAttributes,
    schema: { type: 'array', items: object },
  },
  { key: 'facetSearch', route: 'facet-search', verb: 'PUT', code: 'invalid_settings_facet_search', parse: expectBool, schema: { type: 'boolean' } },
  {
    key: 'prefixSearch',
    route: 'prefix-search',
    verb: 'PUT',
    code: 'invalid_settings_prefix_search',
    parse: (v, c) => expectEnum(v, c, ['indexingTime', 'disabled']),
    schema: { type: 'string', enum: ['indexingTime', 'disabled'] },
  },
  {
    key: 'chat',
    route: 'chat',
    verb: 'PUT',
    code: 'invalid_settings_index_chat',
    parse: parseChat,
    schema: object,
    gate: ['chatCompletions', 'setting `chat` in the index settings'],
  },
  {
    key: 'vectorStore',
    route: 'vector-store',
    verb: 'PATCH',
    code: 'invalid_settings_vector_store',
    parse: (v, c) => expectEnum(v, c, ['stable', 'experimental']),
    schema: { type: 'string', enum: ['stable', 'experimental'] },
    gate: ['vectorStoreSetting', 'setting `vectorStore` in the index settings'],
  },
];

export const SETTING_KEYS: readonly SettingKey[] = SETTING_FIELDS.map((f) => f.key);

export function settingField(key: SettingKey): SettingField {
  return SETTING_FIELDS.find((f) => f.key === key)!;
}

/** The whole-settings body as a JSON Schema, for the OpenAPI document. */
export function settingsSchema(): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of SETTING_FIELDS) properties[f.key] = { oneOf: [f.schema, { type: 'null' }] };
  return { type: 'object', properties, additionalProperties: false };
}
