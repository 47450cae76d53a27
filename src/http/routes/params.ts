import type { FastifyRequest } from 'fastify';
import { assertIndexUid } from '../../engine/indexes/index-uid.js';

/** The `{indexUid}` path parameter, checked against the uid rules. */
export function indexUidParam(req: FastifyRequest): string {
  const uid = (req.params as { indexUid: string }).indexUid;
  assertIndexUid(uid);
  return uid;
}

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
