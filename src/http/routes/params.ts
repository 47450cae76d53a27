import type { FastifyRequest } from 'fastify';
import { taskSummary, type TaskSpec } from '../../tasks/task.js';
import type { AppContext } from '../context.js';
import { s } from '../schema.js';

/** `offset` and `limit` of a paginated list (indexes, chat workspaces). */
export const pageQuery = s.object({
  offset: s.field(s.uint(), 'invalid_index_offset'),
  limit: s.field(s.uint(), 'invalid_index_limit'),
});

/** `customMetadata`, accepted by every write route and echoed in the task. */
function customMetadata(q: { customMetadata?: string | undefined }): { customMetadata?: string } {
  return q.customMetadata !== undefined ? { customMetadata: q.customMetadata } : {};
}

/** `Service-Include-Metadata: true` (or `1`) adds `metadata` to search responses. */
export function includeMetadata(req: FastifyRequest): boolean {
  const v = req.headers['service-include-metadata'];
  const s = (Array.isArray(v) ? v[0] : v)?.trim().toLowerCase();
  return s === 'true' || s === '1';
}

/** The query string of the routes that create a task on an index: `customMetadata`, kept in the task. */
export const writeQuery = s.object({ customMetadata: s.field(s.string(), 'invalid_index_custom_metadata') });

/**
 * Proposes a task (with the request's `customMetadata`) and answers its summary once it is
 * durable: what every route that creates a task answers.
 */
export async function enqueueTask(ctx: AppContext, spec: TaskSpec, q: { customMetadata?: string | undefined } = {}, payload?: Buffer): Promise<ReturnType<typeof taskSummary>> {
  return taskSummary(await ctx.enqueue({ ...spec, ...customMetadata(q) }, payload));
}
