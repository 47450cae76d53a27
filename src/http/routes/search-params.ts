import { ApiError } from '../../errors/api-error.js';
import { ISO639_1_TO_3, isSupportedLocale, SUPPORTED_LOCALES } from '../../engine/tokenizer/index.js';
import type { SearchQuery } from '../../engine/search/answer-query.js';
import { s, typeError, valueError, type Ctx, type FieldDef } from '../schema.js';
import { jsonDepthExceeded } from '../../util/json-depth.js';

/**
 * The search parameters as one description for three uses: the POST body, the GET query
 * string (lists comma-separated, `filter` as a string) and the queries of multi-search.
 */

const strings = () => s.array(s.string());
const nullableStrings = () => strings().nullable();

const threshold = s.custom((v, ctx) => {
  const n = s.number().parse(v, ctx);
  if (n < 0 || n > 1) {
    throw valueError(ctx, 'the value of `rankingScoreThreshold` is invalid, expected a float between `0.0` and `1.0`.');
  }
  return n;
}, { type: 'number', minimum: 0, maximum: 1 });

const LOCALE_LIST = [...SUPPORTED_LOCALES, ...Object.keys(ISO639_1_TO_3)].map((l) => `\`${l}\``).join(', ');

const locale = s.custom((v, ctx) => {
  if (typeof v !== 'string') throw typeError(ctx, 'a string', v);
  if (!isSupportedLocale(v)) {
    const at = ctx.mode === 'query' ? ` for parameter \`${ctx.path}\`` : ` at \`${ctx.path}\``;
    throw new ApiError(ctx.code, `Unknown value \`${v}\`${at}: expected one of ${LOCALE_LIST}`);
  }
  return v;
}, { type: 'string', enum: [...SUPPORTED_LOCALES] });

/** `sort` in a query string: comma-separated, with `_geoPoint(lat, lng):dir` kept whole. */
function splitSort(raw: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of raw) {
    if (ch === '(') depth++;
    if (ch === ')') depth = Math.max(0, depth - 1);
    if (ch === ',' && depth === 0) {
      out.push(cur.trim());
      cur = '';
    } else cur += ch;
  }
  if (cur.trim() !== '' || out.length > 0) out.push(cur.trim());
  return out.filter((x) => x !== '');
}

const sortSchema = s.custom((v, ctx: Ctx) => {
  if (ctx.mode === 'query' && typeof v === 'string') return splitSort(v);
  return nullableStrings().parse(v, ctx);
}, { oneOf: [{ type: 'array', items: { type: 'string' } }, { type: 'null' }] });

/** `filter` in a query string is tried as JSON first (so an array can be passed), else kept as a string. */
const filterSchema = s.custom((v, ctx: Ctx) => {
  if (ctx.mode !== 'query' || typeof v !== 'string') return v;
  // Too deep to be the array form (which nests two levels): read as an expression, which refuses it.
  if (jsonDepthExceeded(v)) return v;
  try {
    const parsed: unknown = JSON.parse(v);
    if (Array.isArray(parsed)) return parsed;
  } catch {
    // not JSON: a filter expression
  }
  return v;
}, { oneOf: [{ type: 'string' }, { type: 'array' }, { type: 'null' }] });

const hybridSchema = s.object({
  embedder: s.required(s.string(), 'invalid_search_embedder'),
  semanticRatio: s.field(s.custom((v, ctx) => {
    const n = s.number().parse(v, ctx);
    if (n < 0 || n > 1) throw valueError(ctx, 'the value of `semanticRatio` is invalid, expected a float between `0.0` and `1.0`.');
    return n;
  }, { type: 'number' }), 'invalid_search_semantic_ratio'),
});

/** Fields shared by the POST body and multi-search queries. */
/** `media` is what search fragments read as `media.*`: an object (or null). */
const mediaSchema = s.custom((v, ctx) => {
  if (v !== null && (typeof v !== 'object' || Array.isArray(v))) throw typeError(ctx, 'an object', v);
  return v as Record<string, unknown> | null;
}, { type: ['object', 'null'] });

export const searchFields = {
  q: s.field(s.string().nullable(), 'invalid_search_q'),
  vector: s.field(s.array(s.number()).nullable(), 'invalid_search_vector'),
  offset: s.field(s.uint(), 'invalid_search_offset'),
  limit: s.field(s.uint(), 'invalid_search_limit'),
  page: s.field(s.uint(), 'invalid_search_page'),
  hitsPerPage: s.field(s.uint(), 'invalid_search_hits_per_page'),
  attributesToRetrieve: s.field(nullableStrings(), 'invalid_search_attributes_to_retrieve'),
  retrieveVectors: s.field(s.boolean(), 'invalid_search_retrieve_vectors'),
  attributesToCrop: s.field(nullableStrings(), 'invalid_search_attributes_to_crop'),
  cropLength: s.field(s.uint(), 'invalid_search_crop_length'),
  attributesToHighlight: s.field(nullableStrings(), 'invalid_search_attributes_to_highlight'),
  showMatchesPosition: s.field(s.boolean(), 'invalid_search_show_matches_position'),
  showRankingScore: s.field(s.boolean(), 'invalid_search_show_ranking_score'),
  showRankingScoreDetails: s.field(s.boolean(), 'invalid_search_show_ranking_score_details'),
  showPerformanceDetails: s.field(s.boolean(), 'invalid_search_show_performance_details'),
  filter: s.field(filterSchema, 'invalid_search_filter'),
  sort: s.field(sortSchema, 'invalid_search_sort'),
  distinct: s.field(s.string().nullable(), 'invalid_search_distinct'),
  facets: s.field(nullableStrings(), 'invalid_search_facets'),
  highlightPreTag: s.field(s.string().nullable(), 'invalid_search_highlight_pre_tag'),
  highlightPostTag: s.field(s.string().nullable(), 'invalid_search_highlight_post_tag'),
  cropMarker: s.field(s.string().nullable(), 'invalid_search_crop_marker'),
  matchingStrategy: s.field(s.enum(['last', 'all', 'frequency'] as const), 'invalid_search_matching_strategy'),
  attributesToSearchOn: s.field(nullableStrings(), 'invalid_search_attributes_to_search_on'),
  hybrid: s.field(hybridSchema.nullable(), 'invalid_search_hybrid_query'),
  rankingScoreThreshold: s.field(threshold.nullable(), 'invalid_search_ranking_score_threshold'),
  locales: s.field(s.array(locale).nullable(), 'invalid_search_locales'),
  media: s.field(mediaSchema, 'invalid_search_media'),
  personalize: s.field(s.any({ type: 'object' }), 'invalid_search_personalize'),
  useNetwork: s.field(s.boolean(), 'invalid_search_use_network'),
} satisfies Record<string, FieldDef>;

export const searchBody = s.object(searchFields);

const { media: _media, personalize: _personalize, hybrid: _hybrid, ...getShared } = searchFields;
void _media;
void _personalize;
void _hybrid;

export const searchQueryString = s.object({
  ...getShared,
  hybridEmbedder: s.field(s.string(), 'invalid_search_hybrid_query'),
  hybridSemanticRatio: s.field(s.number(), 'invalid_search_semantic_ratio'),
  personalizeUserContext: s.field(s.string(), 'invalid_search_personalize_user_context'),
});

type Parsed = ReturnType<typeof searchBody.validate> | ReturnType<typeof searchQueryString.validate>;

/** `vector` without an embedder to compare it with answers the reference's code before anything runs. */
function checkUnsupported(p: Record<string, unknown>): void {
  const embedder = (p['hybrid'] as { embedder?: string } | null | undefined)?.embedder ?? (p['hybridEmbedder'] as string | undefined);
  if (p['vector'] !== undefined && p['vector'] !== null && embedder === undefined) {
    throw new ApiError('missing_search_hybrid', 'Invalid request: missing `hybrid` parameter when `vector` is present.');
  }
}

/** The engine's view of validated parameters. */
export function toSearchQuery(p: Parsed): SearchQuery {
  checkUnsupported(p as Record<string, unknown>);
  const q: SearchQuery = {};
  const copy = p as Record<string, unknown>;
  for (const key of [
    'q', 'offset', 'limit', 'page', 'hitsPerPage', 'attributesToRetrieve', 'retrieveVectors', 'attributesToCrop',
    'cropLength', 'cropMarker', 'attributesToHighlight', 'highlightPreTag', 'highlightPostTag', 'showMatchesPosition',
    'showRankingScore', 'showRankingScoreDetails', 'filter', 'sort', 'distinct', 'facets', 'matchingStrategy',
    'attributesToSearchOn', 'rankingScoreThreshold', 'locales',
  ] as const) {
    if (copy[key] !== undefined) (q as Record<string, unknown>)[key] = copy[key];
  }
  if (copy['vector'] !== undefined) q.vector = copy['vector'] as number[] | null;
  if (copy['hybrid'] !== undefined) q.hybrid = copy['hybrid'] as SearchQuery['hybrid'];
  if (copy['media'] !== undefined) q.media = copy['media'] as SearchQuery['media'];
  if (typeof copy['hybridEmbedder'] === 'string') {
    const ratio = copy['hybridSemanticRatio'] as number | undefined;
    q.hybrid = { embedder: copy['hybridEmbedder'], ...(ratio !== undefined ? { semanticRatio: ratio } : {}) };
  }
  return q;
}
