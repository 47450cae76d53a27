import type { FastifyInstance, FastifyRequest } from 'fastify';
import { indexVisibility } from '../../auth/request-auth.js';
import { ApiError } from '../../errors/api-error.js';
import { requestGrant } from '../../auth/request-auth.js';
import { batchView } from '../../tasks/batch.js';
import { FILTER_PARAMS, LIST_PARAMS, matchesTask, parseTaskFilter, type TaskFilter } from '../../tasks/task-filter.js';
import { taskSummary, taskView, type TaskRecord } from '../../tasks/task.js';
import type { AppContext } from '../context.js';
import { queryRecord, route } from '../route.js';
import { s, type FieldDef } from '../schema.js';

function describeParams(params: readonly string[]): Record<string, FieldDef> {
  const out: Record<string, FieldDef> = {};
  for (const p of params) out[p] = s.field(s.string(), 'bad_request');
  return out;
}

/**
 * A task or batch uid this node has not seen yet may exist on the leader (a client enqueues
 * through one node and polls another): catch up with the leader's commit, this long at most,
 * before answering not found.
 */
const CATCH_UP_MS = 2_000;

const listQueryDoc = s.object(describeParams(LIST_PARAMS));
const filterQueryDoc = s.object(describeParams([...FILTER_PARAMS, 'customMetadata']));

function rejectUnknown(q: Record<string, string>, allowed: readonly string[]): void {
  for (const k of Object.keys(q)) {
    if (!allowed.includes(k)) {
      throw new ApiError('bad_request', `Unknown parameter \`${k}\`: expected one of ${allowed.map((a) => `\`${a}\``).join(', ')}`);
    }
  }
}

function parsePaging(q: Record<string, string>, codes: { limit: 'invalid_task_limit'; from: 'invalid_task_from' }) {
  const int = (name: 'limit' | 'from') => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number(v) > 0xffffffff) {
      throw new ApiError(codes[name], `Invalid value in parameter \`${name}\`: could not parse \`${v}\` as a positive integer`);
    }
    return Number(v);
  };
  let reverse = false;
  if (q['reverse'] !== undefined) {
    if (q['reverse'] !== 'true' && q['reverse'] !== 'false') {
      throw new ApiError(
        'invalid_task_reverse',
        `Invalid value in parameter \`reverse\`: could not parse \`${q['reverse']}\` as a boolean, expected either \`true\` or \`false\``,
      );
    }
    reverse = q['reverse'] === 'true';
  }
  return { limit: int('limit') ?? 20, from: int('from'), reverse };
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
    query: listQueryDoc,
    status: 200,
    handler: async (req) => {
      const q = queryRecord(req);
      rejectUnknown(q, LIST_PARAMS);
      const paging = parsePaging(q, { limit: 'invalid_task_limit', from: 'invalid_task_from' });
      const f = parseTaskFilter(q);
      // Asked by uid for a task this node has not seen yet: as for a single task, catch up first.
      if (f.uids?.some((u) => u >= ctx.queue.nextTaskUid)) await ctx.replicator.catchUp(CATCH_UP_MS);
      const { page, total, from, next } = paginate(filtered(f).filter(taskVisibility(req) ?? (() => true)), (t) => t.uid, paging);
      return { results: page.map(taskView), total, limit: paging.limit, from, next };
    },
  });

  route(app, {
    method: 'GET',
    url: '/tasks/:taskUid',
    summary: 'Get one task',
    tags: ['Tasks'],
    action: 'tasks.get',
    status: 200,
    responseSchema: { $ref: '#/components/schemas/Task' },
    handler: async (req) => {
      const raw = (req.params as { taskUid: string }).taskUid;
      if (!/^\d+$/.test(raw) || Number(raw) > 0xffffffff) {
        throw new ApiError('invalid_task_uids', `Invalid value in parameter \`taskUid\`: could not parse \`${raw}\` as a positive integer`);
      }
      const uid = Number(raw);
      // Enqueued through another node a moment ago: the log entry may not be applied here yet.
      if (uid >= ctx.queue.nextTaskUid) await ctx.replicator.catchUp(CATCH_UP_MS);
      const t = ctx.queue.get(uid);
      if (!t || taskVisibility(req)?.(t) === false) throw new ApiError('task_not_found', `Task \`${raw}\` not found.`);
      return taskView(reported(t));
    },
  });

  const filterAction = (op: 'cancel' | 'deleteTasks') => async (req: FastifyRequest) => {
    const q = queryRecord(req);
    rejectUnknown(q, [...FILTER_PARAMS, 'customMetadata']);
    parseTaskFilter(q);
    if (!FILTER_PARAMS.some((p) => q[p] !== undefined)) {
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
    const task = await ctx.enqueue({
      type: op === 'cancel' ? 'taskCancelation' : 'taskDeletion',
      indexUid: null,
      details,
      // A key limited to some indexes cancels or deletes only their tasks, as it only sees those.
      params: { op, query, ...(keyIndexes ? { indexPatterns: keyIndexes } : {}) },
      ...(q['customMetadata'] !== undefined ? { customMetadata: q['customMetadata'] } : {}),
    });
    return taskSummary(task);
  };

  route(app, {
    method: 'POST',
    url: '/tasks/cancel',
    summary: 'Cancel the enqueued tasks matching the filters (a task already processing runs to its end)',
    tags: ['Tasks'],
    action: 'tasks.cancel',
    query: filterQueryDoc,
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
    query: filterQueryDoc,
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
    query: listQueryDoc,
    status: 200,
    handler: async (req) => {
      const q = queryRecord(req);
      rejectUnknown(q, LIST_PARAMS);
      const paging = parsePaging(q, { limit: 'invalid_task_limit', from: 'invalid_task_from' });
      const { uids, ...taskFilter } = parseTaskFilter(q, true);
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
      const { page, total, from, next } = paginate(batches, (b) => b.uid, paging);
      return { results: page.map((b) => batchView(b, tasksOf(b.taskUids))), total, limit: paging.limit, from, next };
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
