import type { FastifyRequest } from 'fastify';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';
import { s } from '../schema.js';

/** The `{indexUid}` path parameter, checked against the uid rules. */
export function indexUidParam(req: FastifyRequest): string {
  const uid = (req.params as { indexUid: string }).indexUid;
  assertIndexUid(uid);
  return uid;
}

/** `offset` and `limit` of a paginated list (indexes, chat workspaces). */
export const pageQuery = s.object({
  offset: s.field(s.uint(), 'invalid_index_offset'),
  limit: s.field(s.uint(), 'invalid_index_limit'),
});

/** The query string of a write route: `customMetadata`, any string, kept in the task. */
export const writeQuery = s.object({ customMetadata: s.field(s.string(), 'invalid_index_custom_metadata') });

/** `customMetadata`, accepted by every write route and echoed in the task. */
export function customMetadata(q: { customMetadata?: string | undefined }): { customMetadata?: string } {
  return q.customMetadata !== undefined ? { customMetadata: q.customMetadata } : {};
}

/** `Service-Include-Metadata: true` (or `1`) adds `metadata` to search responses. */
export function includeMetadata(req: FastifyRequest): boolean {
  const v = req.headers['service-include-metadata'];
  const s = (Array.isArray(v) ? v[0] : v)?.trim().toLowerCase();
  return s === 'true' || s === '1';
}
