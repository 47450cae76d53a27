import { ApiError, type ErrorCode } from '../errors/api-error.js';
import { TASK_STATUSES, TASK_TYPES, type TaskRecord, type TaskStatus, type TaskType } from './task.js';
import { isValidIndexUid } from '../engine/indexes/index-uid.js';

/** The filters shared by `GET /tasks`, `GET /batches`, `POST /tasks/cancel` and `DELETE /tasks`. */
export interface TaskFilter {
  uids?: number[];
  batchUids?: number[];
  canceledBy?: number[];
  types?: TaskType[];
  statuses?: TaskStatus[];
  indexUids?: string[];
  afterEnqueuedAt?: number;
  beforeEnqueuedAt?: number;
  afterStartedAt?: number;
  beforeStartedAt?: number;
  afterFinishedAt?: number;
  beforeFinishedAt?: number;
}

export const FILTER_PARAMS = [
  'uids',
  'batchUids',
  'canceledBy',
  'types',
  'statuses',
  'indexUids',
  'afterEnqueuedAt',
  'beforeEnqueuedAt',
  'afterStartedAt',
  'beforeStartedAt',
  'afterFinishedAt',
  'beforeFinishedAt',
] as const;


const DATE_CODES: Record<string, ErrorCode> = {
  afterEnqueuedAt: 'invalid_task_after_enqueued_at',
  beforeEnqueuedAt: 'invalid_task_before_enqueued_at',
  afterStartedAt: 'invalid_task_after_started_at',
  beforeStartedAt: 'invalid_task_before_started_at',
  afterFinishedAt: 'invalid_task_after_finished_at',
  beforeFinishedAt: 'invalid_task_before_finished_at',
};

function splitList(v: string): string[] | null {
  const parts = v.split(',').map((p) => p.trim());
  if (parts.includes('*')) return null; // `*` means no restriction
  return parts;
}

function parseUidList(name: string, v: string, code: ErrorCode): number[] | undefined {
  const parts = splitList(v);
  if (parts === null) return undefined;
  return parts.map((p, i) => {
    if (!/^\d+$/.test(p) || Number(p) > 0xffffffff) {
      throw new ApiError(code, `Invalid value in parameter \`${name}[${i}]\`: could not parse \`${p}\` as a positive integer`);
    }
    return Number(p);
  });
}

/** A date bound; `*` is no bound. */
function parseDate(name: string, v: string): number | undefined {
  if (v.trim() === '*') return undefined;
  const code = DATE_CODES[name]!;
  const bare = /^\d{4}-\d{2}-\d{2}$/.test(v);
  const ms = bare ? Date.parse(v + 'T00:00:00Z') : Date.parse(v);
  const rfc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i.test(v);
  if ((!bare && !rfc) || Number.isNaN(ms)) {
    throw new ApiError(
      code,
      `Invalid value in parameter \`${name}\`: \`${v}\` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.`,
    );
  }
  // A bare date given to an `after*` bound means "after that whole day".
  if (bare && name.startsWith('after')) return ms + 86_400_000 - 1;
  return ms;
}

function parseList<T>(v: string, each: (p: string, i: number) => T): T[] | undefined {
  const parts = splitList(v);
  return parts === null ? undefined : parts.map(each);
}

export type FilterParam = (typeof FILTER_PARAMS)[number];

/**
 * One filter parameter's value as the filter holds it (undefined for `*`, which restricts
 * nothing), or the reference's error for it.
 */
export function parseFilterParam(name: FilterParam, v: string): unknown {
  switch (name) {
    case 'uids':
      return parseUidList('uids', v, 'invalid_task_uids');
    case 'batchUids':
      return parseUidList('batchUids', v, 'invalid_batch_uids');
    case 'canceledBy':
      return parseUidList('canceledBy', v, 'invalid_task_canceled_by');
    case 'types':
      return parseList(v, (p, i) => {
        const t = TASK_TYPES.find((x) => x.toLowerCase() === p.toLowerCase());
        if (t) return t;
        throw new ApiError(
          'invalid_task_types',
          `Invalid value in parameter \`types[${i}]\`: \`${p}\` is not a valid task type. Available types are ${TASK_TYPES.map((x) => `\`${x}\``).join(', ')}.`,
        );
      });
    case 'statuses':
      return parseList(v, (p, i) => {
        const st = TASK_STATUSES.find((x) => x === p.toLowerCase());
        if (st) return st;
        throw new ApiError(
          'invalid_task_statuses',
          `Invalid value in parameter \`statuses[${i}]\`: \`${p}\` is not a valid task status. Available statuses are ${TASK_STATUSES.map((x) => `\`${x}\``).join(', ')}.`,
        );
      });
    case 'indexUids':
      return parseList(v, (p, i) => {
        if (isValidIndexUid(p)) return p;
        throw new ApiError(
          'invalid_index_uid',
          `Invalid value in parameter \`indexUids[${i}]\`: \`${p}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`,
        );
      });
    default:
      return parseDate(name, v);
  }
}

/** Parses filter parameters from a query object; unknown parameters are the caller's concern. */
export function parseTaskFilter(q: Record<string, string | undefined>): TaskFilter {
  const f: Record<string, unknown> = {};
  for (const name of FILTER_PARAMS) {
    const raw = q[name];
    if (raw === undefined) continue;
    const value = parseFilterParam(name, raw);
    if (value !== undefined) f[name] = value;
  }
  return f as TaskFilter;
}

function inRange(v: number | null, after?: number, before?: number): boolean {
  if (after === undefined && before === undefined) return true;
  if (v === null) return false;
  if (after !== undefined && !(v > after)) return false;
  if (before !== undefined && !(v < before)) return false;
  return true;
}

const asSets = new WeakMap<readonly unknown[], ReadonlySet<unknown>>();

/**
 * A filter's list as a set, built once per list: a filter may name 100,000 uids and be matched
 * against every task of a million, so a lookup must not walk the list.
 */
function has<T>(list: readonly T[], v: T): boolean {
  let set = asSets.get(list) as ReadonlySet<T> | undefined;
  if (!set) {
    set = new Set(list);
    asSets.set(list, set);
  }
  return set.has(v);
}

export function matchesTask(t: TaskRecord, f: TaskFilter): boolean {
  if (f.uids && !has(f.uids, t.uid)) return false;
  if (f.batchUids && (t.batchUid === null || !has(f.batchUids, t.batchUid))) return false;
  if (f.canceledBy && (t.canceledBy === null || !has(f.canceledBy, t.canceledBy))) return false;
  if (f.types && !has(f.types, t.type)) return false;
  if (f.statuses && !has(f.statuses, t.status)) return false;
  if (f.indexUids && (t.indexUid === null || !has(f.indexUids, t.indexUid))) return false;
  if (!inRange(t.enqueuedAt, f.afterEnqueuedAt, f.beforeEnqueuedAt)) return false;
  if (!inRange(t.startedAt, f.afterStartedAt, f.beforeStartedAt)) return false;
  if (!inRange(t.finishedAt, f.afterFinishedAt, f.beforeFinishedAt)) return false;
  return true;
}

/**
 * The part of a filter that every node of a cluster answers the same way at a given log
 * position: what a task was registered with and the batch the log gave it. Statuses,
 * `canceledBy` and the started/finished dates change as each node processes its batches,
 * at its own pace, so a cancelation or deletion checks those when it runs, where every node
 * has processed exactly the batches before it.
 */
export function registrationFilter(f: TaskFilter): TaskFilter {
  const { statuses: _s, canceledBy: _c, afterStartedAt: _as, beforeStartedAt: _bs, afterFinishedAt: _af, beforeFinishedAt: _bf, ...rest } = f;
  return rest;
}
