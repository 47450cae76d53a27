import { ApiError } from '../../errors/api-error.js';
import { invalidIndexUidMessage, isValidIndexUid } from '../indexes/index-uid.js';
import {
  at,
  expectArray,
  expectBool,
  expectEnum,
  expectFields,
  expectNonZeroUint,
  expectNumber,
  expectObject,
  expectString,
  expectStringArray,
  expectStringSet,
  expectUint,
  index,
  invalidValue,
  missingField,
  sortedKeys,
  U8_MAX,
  unknownValue,
  wrongType,
  type VCtx,
} from './validate-core.js';

/**
 * Parsers of setting values beyond plain lists and enums: object settings (where a `null`
 * field is an explicit reset, kept as `null` for the merge to act on), ranking rules and
 * locales.
 */

/** Parses the non-null fields of an object with `parse`, keeping nulls, in `keys` order. */
function fieldsOf(
  v: unknown,
  ctx: VCtx,
  keys: readonly string[],
  parse: (key: string, value: unknown, c: VCtx) => unknown,
): Record<string, unknown> {
  const obj = expectFields(v, ctx, keys);
  const parsed: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(obj)) parsed[k] = x === null ? null : parse(k, x, at(ctx, k));
  const out: Record<string, unknown> = {};
  for (const k of keys) if (k in parsed) out[k] = parsed[k];
  return out;
}

export function minWordSizeError(oneTypo: number, twoTypos: number): string {
  return (
    '`minWordSizeForTypos` setting is invalid. `oneTypo` and `twoTypos` fields should be between `0` and `255`, ' +
    `and \`twoTypos\` should be greater or equals to \`oneTypo\` but found \`oneTypo: ${oneTypo}\` and twoTypos: ${twoTypos}\`.`
  );
}

export const TYPO_KEYS = ['enabled', 'minWordSizeForTypos', 'disableOnWords', 'disableOnAttributes', 'disableOnNumbers'] as const;

export function parseTypoTolerance(v: unknown, ctx: VCtx): Record<string, unknown> {
  return fieldsOf(v, ctx, TYPO_KEYS, (key, x, c) => {
    switch (key) {
      case 'enabled':
      case 'disableOnNumbers':
        return expectBool(x, c);
      case 'disableOnWords':
      case 'disableOnAttributes':
        return expectStringSet(x, c);
      default: {
        const sizes = fieldsOf(x, c, ['oneTypo', 'twoTypos'], (_k, n, cc) => expectUint(n, cc, U8_MAX));
        const one = sizes['oneTypo'];
        const two = sizes['twoTypos'];
        if (typeof one === 'number' && typeof two === 'number' && one > two) throw invalidValue(c, minWordSizeError(one, two));
        return sizes;
      }
    }
  });
}

export function parseFaceting(v: unknown, ctx: VCtx): Record<string, unknown> {
  return fieldsOf(v, ctx, ['maxValuesPerFacet', 'sortFacetValuesBy'], (key, x, c) => {
    if (key === 'maxValuesPerFacet') return expectUint(x, c);
    const obj = expectObject(x, c);
    const out: Record<string, string> = {};
    for (const [facet, order] of Object.entries(obj)) out[facet] = expectEnum(order, at(c, facet), ['alpha', 'count']);
    return sortedKeys(out);
  });
}

export function parsePagination(v: unknown, ctx: VCtx): Record<string, unknown> {
  return fieldsOf(v, ctx, ['maxTotalHits'], (_k, x, c) => expectNonZeroUint(x, c));
}

export function parseSynonyms(v: unknown, ctx: VCtx): Record<string, string[]> {
  const obj = expectObject(v, ctx);
  const out: Record<string, string[]> = {};
  for (const [word, list] of Object.entries(obj)) out[word] = expectStringArray(list, at(ctx, word));
  return sortedKeys(out);
}

/** Filterable attributes: plain names (every feature on) or pattern objects, stored with defaults filled. */
export function parseFilterableAttributes(v: unknown, ctx: VCtx): unknown[] {
  return expectArray(v, ctx).map((item, i) => {
    const c = index(ctx, i);
    if (typeof item === 'string') return item;
    if (item === null || typeof item !== 'object' || Array.isArray(item)) throw wrongType(c, 'a string', item);
    const obj = expectFields(item, c, ['attributePatterns', 'features']);
    const patterns = 'attributePatterns' in obj ? expectStringArray(obj['attributePatterns'], at(c, 'attributePatterns')) : [];
    let facetSearch = false;
    let equality = true;
    let comparison = false;
    if ('features' in obj) {
      const fc = at(c, 'features');
      const features = expectFields(obj['features'], fc, ['facetSearch', 'filter']);
      if ('facetSearch' in features) facetSearch = expectBool(features['facetSearch'], at(fc, 'facetSearch'));
      if ('filter' in features) {
        const flc = at(fc, 'filter');
        const filter = expectFields(features['filter'], flc, ['equality', 'comparison']);
        if ('equality' in filter) equality = expectBool(filter['equality'], at(flc, 'equality'));
        if ('comparison' in filter) comparison = expectBool(filter['comparison'], at(flc, 'comparison'));
      }
    }
    return { attributePatterns: patterns, features: { facetSearch, filter: { equality, comparison } } };
  });
}

export function parseLocalizedAttributes(v: unknown, ctx: VCtx): { attributePatterns: string[]; locales: string[] }[] {
  return expectArray(v, ctx).map((item, i) => {
    const c = index(ctx, i);
    const obj = expectFields(item, c, ['attributePatterns', 'locales']);
    const patterns = 'attributePatterns' in obj ? expectStringArray(obj['attributePatterns'], at(c, 'attributePatterns')) : [];
    const locales =
      'locales' in obj
        ? expectArray(obj['locales'], at(c, 'locales')).map((l, j) => {
            const lc = index(at(c, 'locales'), j);
            const code = expectString(l, lc);
            const canonical = canonicalLocale(code);
            if (!canonical) throw unknownValue(lc, code, LOCALE_CODES);
            return canonical;
          })
        : [];
    return { attributePatterns: patterns, locales };
  });
}

const CHAT_KEYS = ['description', 'documentTemplate', 'documentTemplateMaxBytes', 'searchParameters'] as const;
const CHAT_SEARCH_KEYS = ['hybrid', 'limit', 'sort', 'distinct', 'matchingStrategy', 'attributesToSearchOn', 'rankingScoreThreshold'] as const;

function ratio(x: unknown, c: VCtx, name: string): number {
  const n = expectNumber(x, c);
  if (n < 0 || n > 1) throw invalidValue(c, `the value of \`${name}\` is invalid, expected a float between \`0.0\` and \`1.0\`.`);
  return n;
}

function parseChatSearch(v: unknown, ctx: VCtx): Record<string, unknown> {
  return fieldsOf(v, ctx, CHAT_SEARCH_KEYS, (key, x, c) => {
    switch (key) {
      case 'hybrid':
        return fieldsOf(x, c, ['embedder', 'semanticRatio'], (k, y, cc) => (k === 'embedder' ? expectString(y, cc) : ratio(y, cc, 'semanticRatio')));
      case 'limit':
        return expectUint(x, c);
      case 'sort':
      case 'attributesToSearchOn':
        return expectStringArray(x, c);
      case 'distinct':
        return expectString(x, c);
      case 'matchingStrategy':
        return expectEnum(x, c, ['last', 'all', 'frequency']);
      default:
        return ratio(x, c, 'rankingScoreThreshold');
    }
  });
}

/** The experimental `chat` setting of an index. */
export function parseChat(v: unknown, ctx: VCtx): Record<string, unknown> {
  const chat = fieldsOf(v, ctx, CHAT_KEYS, (key, x, c) => {
    if (key === 'documentTemplateMaxBytes') return expectUint(x, c);
    if (key === 'searchParameters') return parseChatSearch(x, c);
    return expectString(x, c);
  });
  if (chat['documentTemplateMaxBytes'] === 0) {
    // The reference files this one under the embedders' code.
    throw new ApiError('invalid_settings_embedders', '`.chat.documentTemplateMaxBytes`: `documentTemplateMaxBytes` cannot be zero');
  }
  return chat;
}

export { CHAT_KEYS };

/** A parsed ranking rule: a built-in one, or a custom sort on a field. */
export type RankingRule =
  | { kind: 'words' | 'typo' | 'proximity' | 'attribute' | 'attributeRank' | 'wordPosition' | 'sort' | 'exactness' }
  | { kind: 'asc' | 'desc'; field: string };

const BUILT_IN = ['words', 'typo', 'proximity', 'attribute', 'attributeRank', 'wordPosition', 'sort', 'exactness'] as const;

/** Field names the geo features own; a custom rule on them is refused. */
const RESERVED = new Set(['_geo', '_geoDistance', '_geoPoint', '_geoRadius', '_geoBoundingBox', '_geojson', '_geoPolygon']);

function invalidName(name: string): string {
  return `\`${name}\` ranking rule is invalid. Valid ranking rules are words, typo, sort, proximity, attribute, exactness and custom ranking rules.`;
}

function reservedForSort(name: string): string {
  return `\`${name}\` is a reserved keyword and thus can't be used as a ranking rule. \`${name}\` can only be used for sorting at search time`;
}

function reservedForFilter(name: string): string {
  return `\`${name}\` is a reserved keyword and thus can't be used as a ranking rule. \`${name}\` can only be used for filtering at search time`;
}

/**
 * Parses one rule the way the reference does: built-in names first, then `<field>:asc|desc`
 * split on the last colon, refusing the reserved geo names. Returns the error text on failure.
 */
export function parseRankingRule(text: string): RankingRule | string {
  if ((BUILT_IN as readonly string[]).includes(text)) return { kind: text as (typeof BUILT_IN)[number] };
  const colon = text.lastIndexOf(':');
  const dir = colon >= 0 ? text.slice(colon + 1) : '';
  if (colon < 0 || (dir !== 'asc' && dir !== 'desc')) return invalidName(text);
  const field = text.slice(0, colon);
  if (field.startsWith('_geoPoint(')) {
    // A well-formed geo point is a sort expression; either way it is not a setting.
    return reservedForSort('_geoPoint');
  }
  if (field.startsWith('_geoRadius')) return reservedForFilter('_geoRadius');
  if (field.startsWith('_geoBoundingBox')) return reservedForFilter('_geoBoundingBox');
  if (field === '_geoPoint') return reservedForSort('_geoPoint');
  if (RESERVED.has(field) || field.startsWith('_geo(') || field.startsWith('_geoDistance(')) {
    return `\`${field}\` is a reserved keyword and thus can't be used as a ranking rule`;
  }
  return { kind: dir, field };
}

/**
 * Validates a `rankingRules` value. `attribute` is the older rule that ranks by attribute and
 * by word position at once; mixing it with its two halves would apply them twice.
 */
export function validateRankingRules(v: unknown, ctx: VCtx): string[] {
  const list = expectArray(v, ctx);
  const rules = list.map((item, i) => {
    const c = index(ctx, i);
    const text = expectString(item, c);
    const parsed = parseRankingRule(text);
    if (typeof parsed === 'string') throw invalidValue(c, parsed);
    return text;
  });
  const split = rules.filter((r) => r === 'attributeRank' || r === 'wordPosition');
  if (rules.includes('attribute') && split.length > 0) {
    throw new ApiError(
      ctx.code,
      `Invalid value${ctx.path ? ` at \`${ctx.path}\`` : ''}: the \`attribute\` ranking rule cannot be used together with \`${split[0]}\`. ` +
        'Use either `attribute`, or `attributeRank` and `wordPosition`.',
    );
  }
  return rules;
}

/**
 * Locales accepted by `localizedAttributes`: the spec's three-letter codes and their two-letter
 * equivalents. Stored and shown in their three-letter form, as the reference does.
 */
const PAIRS: readonly (readonly [string | null, string])[] = [
  ['af', 'afr'],
  ['ak', 'aka'],
  ['am', 'amh'],
  ['ar', 'ara'],
  ['az', 'aze'],
  ['be', 'bel'],
  ['bn', 'ben'],
  ['bg', 'bul'],
  ['ca', 'cat'],
  ['cs', 'ces'],
  ['da', 'dan'],
  ['de', 'deu'],
  ['el', 'ell'],
  ['en', 'eng'],
  ['eo', 'epo'],
  ['et', 'est'],
  ['fi', 'fin'],
  ['fr', 'fra'],
  ['gu', 'guj'],
  ['he', 'heb'],
  ['hi', 'hin'],
  ['hr', 'hrv'],
  ['hu', 'hun'],
  ['hy', 'hye'],
  ['id', 'ind'],
  ['it', 'ita'],
  ['jv', 'jav'],
  ['ja', 'jpn'],
  ['kn', 'kan'],
  ['ka', 'kat'],
  ['km', 'khm'],
  ['ko', 'kor'],
  ['la', 'lat'],
  ['lv', 'lav'],
  ['lt', 'lit'],
  ['ml', 'mal'],
  ['mr', 'mar'],
  ['mk', 'mkd'],
  ['my', 'mya'],
  ['ne', 'nep'],
  ['nl', 'nld'],
  ['nb', 'nob'],
  ['or', 'ori'],
  ['pa', 'pan'],
  ['fa', 'pes'],
  ['pl', 'pol'],
  ['pt', 'por'],
  ['ro', 'ron'],
  ['ru', 'rus'],
  ['si', 'sin'],
  ['sk', 'slk'],
  ['sl', 'slv'],
  ['sn', 'sna'],
  ['es', 'spa'],
  ['sr', 'srp'],
  ['sv', 'swe'],
  ['ta', 'tam'],
  ['te', 'tel'],
  ['tl', 'tgl'],
  ['th', 'tha'],
  ['tk', 'tuk'],
  ['tr', 'tur'],
  ['uk', 'ukr'],
  ['ur', 'urd'],
  ['uz', 'uzb'],
  ['vi', 'vie'],
  ['yi', 'yid'],
  ['zu', 'zul'],
  // Mandarin has no two-letter code of its own.
  [null, 'cmn'],
];

const TO_THREE = new Map<string, string>();
for (const [two, three] of PAIRS) {
  if (two) TO_THREE.set(two, three);
  TO_THREE.set(three, three);
}

/** Every accepted spelling, in the order the reference lists them: two-letter, then three-letter. */
export const LOCALE_CODES: readonly string[] = [
  ...PAIRS.flatMap(([two]) => (two ? [two] : [])),
  ...PAIRS.map(([, three]) => three),
];

/** The three-letter form of an accepted locale, or undefined. */
export function canonicalLocale(code: string): string | undefined {
  return TO_THREE.get(code);
}

/** The experimental `foreignKeys` setting: fields of this index holding ids of another index's documents. */
export function parseForeignKeys(v: unknown, ctx: VCtx): { foreignIndexUid: string; fieldName: string }[] {
  const seen = new Set<string>();
  return expectArray(v, ctx).map((item, i) => {
    const c = index(ctx, i);
    const obj = expectFields(item, c, ['foreignIndexUid', 'fieldName']);
    if (!('foreignIndexUid' in obj)) throw missingField(c, 'foreignIndexUid');
    if (!('fieldName' in obj)) throw missingField(c, 'fieldName');
    const foreignIndexUid = expectString(obj['foreignIndexUid'], at(c, 'foreignIndexUid'));
    if (!isValidIndexUid(foreignIndexUid)) throw invalidValue(at(c, 'foreignIndexUid'), invalidIndexUidMessage(foreignIndexUid));
    const fieldName = expectString(obj['fieldName'], at(c, 'fieldName'));
    if (fieldName.trim() === '') throw invalidValue(at(c, 'fieldName'), 'the field name cannot be empty');
    if (seen.has(fieldName)) throw invalidValue(at(c, 'fieldName'), `\`${fieldName}\` already has a foreign key: a field refers to one index`);
    seen.add(fieldName);
    return { foreignIndexUid, fieldName };
  });
}
