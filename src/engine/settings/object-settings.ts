import { ApiError } from '../../errors/api-error.js';
import { canonicalLocale, LOCALE_CODES } from './locales.js';
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
  sortedKeys,
  U8_MAX,
  unknownValue,
  wrongType,
  type VCtx,
} from './validate-core.js';

/**
 * Parsers of the settings whose value is an object or a list of objects. Inside these, a
 * `null` field is an explicit reset and is kept as `null` for the merge to act on.
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
