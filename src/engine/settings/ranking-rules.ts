import { ApiError } from '../../errors/api-error.js';
import { expectArray, expectString, index, invalidValue, type VCtx } from './validate-core.js';

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
