import type { FastifyInstance } from 'fastify';
import type { IndexHandle } from '../../engine/indexes/index-handle.js';
import { searchStateOf } from '../../engine/fulltext/fulltext-index.js';
import { fieldMetadata, fieldPasses, withParents, type FieldFilter } from '../../engine/settings/field-metadata.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';

const pageQuery = s.object({
  offset: s.field(s.uint(), 'invalid_index_offset'),
  limit: s.field(s.uint(), 'invalid_index_limit'),
});

const filterSchema = s.object({
  attributePatterns: s.field(s.array(s.string()), 'invalid_index_fields_filter_attribute_patterns'),
  displayed: s.field(s.boolean(), 'invalid_index_fields_filter_displayed'),
  searchable: s.field(s.boolean(), 'invalid_index_fields_filter_searchable'),
  sortable: s.field(s.boolean(), 'invalid_index_fields_filter_sortable'),
  distinct: s.field(s.boolean(), 'invalid_index_fields_filter_distinct'),
  rankingRule: s.field(s.boolean(), 'invalid_index_fields_filter_ranking_rule'),
  filterable: s.field(s.boolean(), 'invalid_index_fields_filter_filterable'),
});

const listBody = s.object({
  offset: s.field(s.uint(), 'invalid_index_offset'),
  limit: s.field(s.uint(), 'invalid_index_limit'),
  filter: s.field(filterSchema.nullable(), 'invalid_index_fields_filter'),
});

/**
 * Field paths of an index: every path its documents have held (as the reference, a field stays
 * known once seen), with the parents of nested paths. Without full-text structures, the
 * top-level fields of the current documents.
 */
function fieldNames(h: IndexHandle): string[] {
  const state = searchStateOf(h);
  return withParents(state ? state.names.names : Object.keys(h.meta.fieldDistribution));
}

function listFields(h: IndexHandle, p: { offset?: number | undefined; limit?: number | undefined; filter?: FieldFilter | null | undefined }) {
  const offset = p.offset ?? 0;
  const limit = p.limit ?? 20;
  const all = fieldNames(h)
    .map((n) => fieldMetadata(n, h.meta.settings))
    .filter((f) => fieldPasses(f, p.filter));
  return { results: all.slice(offset, offset + limit), offset, limit, total: all.length };
}

export function fieldRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/indexes/:indexUid/fields',
    summary: 'List the fields of an index with what the settings make of each (displayed, searchable, filterable, …), filtered and paginated',
    tags: ['Indexes'],
    action: 'fields.post',
    body: listBody,
    status: 200,
    errors: ['index_not_found', 'invalid_index_fields_filter'],
    handler: async (_req, _reply, { uid, body }) => listFields(ctx.engine.getIndex(uid), body),
  });

  route(app, {
    method: 'GET',
    url: '/indexes/:indexUid/fields',
    summary: 'List the fields of an index with what the settings make of each, paginated (the POST form also filters)',
    tags: ['Indexes'],
    action: 'fields.post',
    query: pageQuery,
    status: 200,
    errors: ['index_not_found'],
    handler: async (_req, _reply, { uid, query }) => listFields(ctx.engine.getIndex(uid), query),
  });
}
