import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { indexVisibility } from '../../auth/request-auth.js';
import { ApiError } from '../../errors/api-error.js';
import { requestGrant } from '../../auth/request-auth.js';
import { batchView } from '../../tasks/batch.js';
import { FILTER_PARAMS, matchesTask, parseFilterParam, type FilterParam, type TaskFilter } from '../../tasks/task-filter.js';
import { taskView, type TaskRecord } from '../../tasks/task.js';
import { enqueueTask } from './params.js';
import { PAYLOADS } from '../../tasks/task-queue.js';
import { decodePayload, payloadHasExactIntegers } from '../../engine/documents/document-json.js';
import { stringifyJson } from '../../util/exact-json.js';
import type { AppContext } from '../context.js';
import { queryRecord, route } from '../route.js';
import { s, type FieldDef } from '../schema.js';

/** The task filters, each read by the task layer's own parser (its errors carry their own codes). */
const filterFields: Record<FilterParam, FieldDef> = Object.fromEntries(
  FILTER_PARAMS.map((p) => [p, s.field(s.custom((v) => parseFilterParam(p, String(v)), { type: 'string' }), 'bad_request')]),
) as Record<FilterParam, FieldDef>;

function uintParam(name: 'limit' | 'from', code: 'invalid_task_limit' | 'invalid_task_from'): FieldDef<number> {
  return s.field(s.custom((v) => {
    const raw = String(v);
    if (!/^\d+$/.test(raw) || Number(raw) > 0xffffffff) {
      throw new ApiError(code, `Invalid value in parameter \`${name}\`: could not parse \`${raw}\` as a positive integer`);
    }
    return Number(raw);
  }, { type: 'integer', minimum: 0 }), code);
}

const reverseParam = s.field(s.custom((v) => {
  if (v !== 'true' && v !== 'false') {
    throw new ApiError('invalid_task_reverse', `Invalid value in parameter \`reverse\`: could not parse \`${String(v)}\` as a boolean, expected either \`true\` or \`false\``);
  }
  return v === 'true';
}, { type: 'boolean' }), 'invalid_task_reverse');

/** Task and batch lists: paging first, then the filters, as the reference checks them. */
const listQuery = s.object({ limit: uintParam('limit', 'invalid_task_limit'), from: uintParam('from', 'invalid_task_from'), reverse: reverseParam, ...filterFields });
const filterQuery = s.object({ ...filterFields, customMetadata: s.field(s.string(), 'bad_request') });

/** The filters a checked query holds (`*` restricting nothing). */
function taskFilterOf(q: Record<string, unknown>): TaskFilter {
  const f: Record<string, unknown> = {};
  for (const p of FILTER_PARAMS) if (q[p] !== undefined) f[p] = q[p];
  return f as TaskFilter;
}

/**
 * A task or batch uid this node has not seen yet may exist on the leader (a client enqueues
 * through one node and polls another): catch up with the leader's commit, this long at most,
 * before answering not found.
 */
const CATCH_UP_MS = 2_000;

function paging(q: { limit?: number | undefined; from?: number | undefined; reverse?: boolean | undefined }) {
  return { limit: q.limit ?? 20, from: q.from, reverse: q.reverse ?? false };
}

/** A page of `items` (sorted newest first unless reversed), starting at uid `from`. */
function paginate<T>(items: T[], uidOf: (t: T) => number, paging: { limit: number; from?: number; reverse: boolean }) {
  // The queue keeps tasks and batches in uid order: a full sort is only a fallback.
  let ascending = true;
  for (let i = 1; i < items.length && ascending; i++) ascending = uidOf(items[i - 1]!) < uidOf(items[i]!);
  const sorted = ascending
    ? paging.reverse
      ? items
      : items.slice().reverse()
    : [...items].sort((a, b) => (paging.reverse ? uidOf(a) - uidOf(b) : uidOf(b) - uidOf(a)));
  const start =
    paging.from === undefined
      ? 0
      : sorted.findIndex((t) => (paging.reverse ? uidOf(t) >= paging.from! : uidOf(t) <= paging.from!));
  const rest = start < 0 ? [] : sorted.slice(start);
  const page = rest.slice(0, paging.limit);
  const next = rest.length > paging.limit ? uidOf(rest[paging.limit]!) : null;
  return { page, total: sorted.length, from: page.length > 0 ? uidOf(page[0]!) : null, next };
}

/** Documents as NDJSON, a few hundred lines per chunk, so a large payload streams out. */
function* ndjsonChunks(docs: readonly unknown[]): Generator<string> {
  for (let i = 0; i < docs.length; i += 256) {
    yield docs.slice(i, i + 256).map((d) => stringifyJson(d) + '\n').join('');
  }
}

function originalFilter(req: FastifyRequest): string {
  const i = req.url.indexOf('?');
  return i >= 0 ? req.url.slice(i) : '?';
}

export function taskRoutes(app: FastifyInstance, ctx: AppContext): void {
  // Tasks as clients may see them: a batch's outcome shows once the log has settled it (see TaskQueue.reported).
  const reported = (t: TaskRecord): TaskRecord => ctx.queue.reported(t);
  const filtered = (f: TaskFilter): TaskRecord[] => {
    const out: TaskRecord[] = [];
    for (const t of ctx.queue.tasks.values()) {
      const r = reported(t);
      if (matchesTask(r, f)) out.push(r);
    }
    return out;
  };
  // A batch is listed once processed here and settled by the log, like the outcome of its tasks.
  const settledBatch = (uid: number) => {
    const b = ctx.queue.batches.get(uid);
    return b && ctx.queue.isSettled(uid) ? b : undefined;
  };
  const tasksOf = (ids: number[]) => () => ids.map((u) => ctx.queue.get(u)).filter((t): t is TaskRecord => !!t).map(reported);
  // A key limited to some indexes sees only their tasks (and those of no index), as the reference filters them.
  const taskVisibility = (req: FastifyRequest): ((t: TaskRecord | undefined) => boolean) | null => {
    const visible = indexVisibility(req);
    return visible && ((t) => !!t && (t.indexUid === null || visible(t.indexUid)));
  };
  const batchVisible = (req: FastifyRequest, b: { taskUids: number[] }): boolean => {
    const visible = taskVisibility(req);
    return !visible || b.taskUids.some((u) => visible(ctx.queue.get(u)));
  };

  route(app, {
    method: 'GET',
    url: '/tasks',
    summary: 'List tasks, newest first, with filters',
    tags: ['Tasks'],
    action: 'tasks.get',
    query: listQuery,
    status: 200,
    handler: async (req, _reply, { query }) => {
      const pages = paging(query);
      const f = taskFilterOf(query);
      // Asked by uid for a task this node has not seen yet: as for a single task, catch up first.
      if (f.uids?.some((u) => u >= ctx.queue.nextTaskUid)) await ctx.replicator.catchUp(CATCH_UP_MS);
      const { page, total, from, next } = paginate(filtered(f).filter(taskVisibility(req) ?? (() => true)), (t) => t.uid, pages);
      return { results: page.map(taskView), total, limit: pages.limit, from, next };
    },
  });

  /** A task uid from the path, parsed as the reference does; a task of another key's indexes is not found. */
  const visibleTask = async (req: FastifyRequest): Promise<TaskRecord> => {
    const raw = (req.params as { taskUid: string }).taskUid;
    if (!/^\d+$/.test(raw) || Number(raw) > 0xffffffff) {
      throw new ApiError('invalid_task_uids', `Invalid value in parameter \`taskUid\`: could not parse \`${raw}\` as a positive integer`);
    }
    const uid = Number(raw);
    // Enqueued through another node a moment ago: the log entry may not be applied here yet.
    if (uid >= ctx.queue.nextTaskUid) await ctx.replicator.catchUp(CATCH_UP_MS);
    const t = ctx.queue.get(uid);
    if (!t || taskVisibility(req)?.(t) === false) throw new ApiError('task_not_found', `Task \`${raw}\` not found.`);
    return t;
  };

  route(app, {
    method: 'GET',
    url: '/tasks/:taskUid',
    summary: 'Get one task',
    tags: ['Tasks'],
    action: 'tasks.get',
    status: 200,
    responseSchema: { $ref: '#/components/schemas/Task' },
    handler: async (req) => taskView(reported(await visibleTask(req))),
  });

  route(app, {
    method: 'GET',
    url: '/tasks/:taskUid/documents',
    summary: 'The documents a document addition or update task received, one JSON object per line (kept as long as the task)',
    tags: ['Tasks'],
    action: 'tasks.get',
    status: 200,
    responseMediaType: 'application/x-ndjson',
    errors: ['feature_not_enabled', 'invalid_task_uids', 'task_not_found', 'task_file_not_found'],
    handler: async (req, reply) => {
      ctx.features.check('getTaskDocumentsRoute', 'Getting the documents of an enqueued task');
      const t = await visibleTask(req);
      const payload = t.params.op === 'documents' ? await ctx.engine.store.get(PAYLOADS.key(t.uid)) : null;
      if (!payload) {
        throw new ApiError(
          'task_file_not_found',
          `Task \`${t.uid}\` does not contain any documents. Only \`documentAdditionOrUpdate\` tasks contain documents`,
        );
      }
      const docs = decodePayload(payload, payloadHasExactIntegers(t.params));
      reply.header('content-type', 'application/x-ndjson');
      return reply.send(Readable.from(ndjsonChunks(docs)));
    },
  });

  const filterAction = (op: 'cancel' | 'deleteTasks') => async (req: FastifyRequest, _reply: unknown, { query: q }: { query: { customMetadata?: string | undefined } }) => {
    // A filter given as `*` restricts nothing, but says what to cancel or delete: present is enough.
    const given = queryRecord(req);
    if (!FILTER_PARAMS.some((p) => given[p] !== undefined)) {
      const what = op === 'cancel' ? 'cancel' : 'delete';
      throw new ApiError(
        'missing_task_filters',
        `Query parameters to filter the tasks to ${what} are missing. Available query parameters are: ${FILTER_PARAMS.map((p) => `\`${p}\``).join(', ')}.`,
      );
    }
    const query = originalFilter(req);
    const keyIndexes = requestGrant(req).keyIndexes;
    const details =
      op === 'cancel'
        ? { matchedTasks: null, canceledTasks: null, originalFilter: query }
        : { matchedTasks: null, deletedTasks: null, originalFilter: query };
    return enqueueTask(ctx, {
      type: op === 'cancel' ? 'taskCancelation' : 'taskDeletion',
      indexUid: null,
      details,
      // A key limited to some indexes cancels or deletes only their tasks, as it only sees those.
      params: { op, query, ...(keyIndexes ? { indexPatterns: keyIndexes } : {}) },
    }, q);
  };

  route(app, {
    method: 'POST',
    url: '/tasks/cancel',
    summary: 'Cancel the enqueued tasks matching the filters (a task already processing runs to its end)',
    tags: ['Tasks'],
    action: 'tasks.cancel',
    query: filterQuery,
    status: 200,
    responseSchema: { $ref: '#/components/schemas/SummarizedTask' },
    handler: filterAction('cancel'),
  });

  route(app, {
    method: 'DELETE',
    url: '/tasks',
    summary: 'Delete finished tasks matching the filters',
    tags: ['Tasks'],
    action: 'tasks.delete',
    query: filterQuery,
    status: 200,
    responseSchema: { $ref: '#/components/schemas/SummarizedTask' },
    handler: filterAction('deleteTasks'),
  });

  route(app, {
    method: 'GET',
    url: '/batches',
    summary: 'List batches, newest first, with the task filters',
    tags: ['Batches'],
    action: 'tasks.get',
    query: listQuery,
    status: 200,
    handler: async (req, _reply, { query }) => {
      const pages = paging(query);
      const { uids, ...taskFilter } = taskFilterOf(query);
      const hasTaskFilter = Object.keys(taskFilter).length > 0;
      const batches = [...ctx.queue.batches.values()].filter((b) => {
        if (!ctx.queue.isSettled(b.uid)) return false;
        if (uids && !uids.includes(b.uid)) return false;
        if (!batchVisible(req, b)) return false;
        if (!hasTaskFilter) return true;
        return b.taskUids.some((u) => {
          const t = ctx.queue.get(u);
          return t !== undefined && matchesTask(reported(t), taskFilter);
        });
      });
      const { page, total, from, next } = paginate(batches, (b) => b.uid, pages);
      return { results: page.map((b) => batchView(b, tasksOf(b.taskUids))), total, limit: pages.limit, from, next };
    },
  });

  route(app, {
    method: 'GET',
    url: '/batches/:batchUid',
    summary: 'Get one batch',
    tags: ['Batches'],
    action: 'tasks.get',
    status: 200,
    handler: async (req) => {
      const raw = (req.params as { batchUid: string }).batchUid;
      if (!/^\d+$/.test(raw)) {
        throw new ApiError('invalid_batch_uids', `Invalid value in parameter \`batchUid\`: could not parse \`${raw}\` as a positive integer`);
      }
      const uid = Number(raw);
      if (uid >= ctx.queue.nextBatchUid) await ctx.replicator.catchUp(CATCH_UP_MS);
      const b = settledBatch(uid);
      if (!b || !batchVisible(req, b)) throw new ApiError('batch_not_found', `Batch \`${raw}\` not found.`);
      return batchView(b, tasksOf(b.taskUids));
    },
  });
}
