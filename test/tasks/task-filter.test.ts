import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { matchesTask, parseTaskFilter, registrationFilter } from '../../src/tasks/task-filter.js';
import type { TaskRecord } from '../../src/tasks/task.js';

// The task filters of GET /tasks, /batches, POST /tasks/cancel and DELETE /tasks: how a
// query string is read, what it refuses, and which tasks it matches.

const T0 = Date.parse('2026-01-10T12:00:00Z');

function task(uid: number, over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    uid,
    batchUid: uid,
    indexUid: 'movies',
    status: 'succeeded',
    type: 'documentAdditionOrUpdate',
    canceledBy: null,
    details: null,
    error: null,
    enqueuedAt: T0 + uid * 60_000,
    startedAt: T0 + uid * 60_000 + 1000,
    finishedAt: T0 + uid * 60_000 + 2000,
    params: { op: 'documents', method: 'replace', primaryKey: null },
    ...over,
  } as TaskRecord;
}

const tasks = [
  task(0),
  task(1, { indexUid: 'books', type: 'settingsUpdate' }),
  task(2, { status: 'failed' }),
  task(3, { status: 'canceled', canceledBy: 5, batchUid: null, startedAt: null }),
  task(4, { status: 'enqueued', batchUid: null, startedAt: null, finishedAt: null }),
  task(5, { indexUid: null, type: 'taskCancelation' }),
];

const matching = (q: Record<string, string>) => tasks.filter((t) => matchesTask(t, parseTaskFilter(q))).map((t) => t.uid);

describe('task filters', () => {
  const cases: [string, Record<string, string>, number[]][] = [
    ['no filter keeps every task', {}, [0, 1, 2, 3, 4, 5]],
    ['uids', { uids: '0,2,9' }, [0, 2]],
    ['`*` restricts nothing', { uids: '*', statuses: '*', types: '*', indexUids: '*' }, [0, 1, 2, 3, 4, 5]],
    ['`*` is no bound for every date', { afterEnqueuedAt: '*', beforeEnqueuedAt: '*', afterStartedAt: '*', beforeStartedAt: '*', afterFinishedAt: '*', beforeFinishedAt: '*' }, [0, 1, 2, 3, 4, 5]],
    ['statuses, any case', { statuses: 'FAILED,canceled' }, [2, 3]],
    ['types, any case', { types: 'settingsupdate' }, [1]],
    ['indexUids leave out tasks of no index', { indexUids: 'movies' }, [0, 2, 3, 4]],
    ['batchUids leave out tasks without a batch', { batchUids: '0,3,4' }, [0]],
    ['batchUids', { batchUids: '1,2' }, [1, 2]],
    ['canceledBy', { canceledBy: '5' }, [3]],
    ['afterEnqueuedAt is exclusive', { afterEnqueuedAt: new Date(T0 + 2 * 60_000).toISOString() }, [3, 4, 5]],
    ['beforeEnqueuedAt is exclusive', { beforeEnqueuedAt: new Date(T0 + 2 * 60_000).toISOString() }, [0, 1]],
    ['a bare date after means after that whole day', { afterEnqueuedAt: '2026-01-09' }, [0, 1, 2, 3, 4, 5]],
    ['a bare date after the day of every task', { afterEnqueuedAt: '2026-01-10' }, []],
    ['started dates leave out tasks never started', { afterStartedAt: '2026-01-01' }, [0, 1, 2, 5]],
    ['finished dates leave out tasks not finished', { beforeFinishedAt: '2027-01-01' }, [0, 1, 2, 3, 5]],
    ['filters combine with AND', { statuses: 'succeeded', indexUids: 'movies,books' }, [0, 1]],
  ];
  for (const [name, q, uids] of cases) {
    it(name, () => {
      expect(matching(q)).toEqual(uids);
    });
  }

  const errors: [Record<string, string>, string, string][] = [
    [{ uids: 'one' }, 'invalid_task_uids', 'Invalid value in parameter `uids[0]`: could not parse `one` as a positive integer'],
    [{ uids: '1,' }, 'invalid_task_uids', 'Invalid value in parameter `uids[1]`: could not parse `` as a positive integer'],
    [{ uids: '4294967296' }, 'invalid_task_uids', 'Invalid value in parameter `uids[0]`: could not parse `4294967296` as a positive integer'],
    [{ batchUids: '-1' }, 'invalid_batch_uids', 'Invalid value in parameter `batchUids[0]`: could not parse `-1` as a positive integer'],
    [{ canceledBy: '2,1.5' }, 'invalid_task_canceled_by', 'Invalid value in parameter `canceledBy[1]`: could not parse `1.5` as a positive integer'],
    [{ statuses: 'done' }, 'invalid_task_statuses', 'Invalid value in parameter `statuses[0]`: `done` is not a valid task status. Available statuses are `enqueued`, `processing`, `succeeded`, `failed`, `canceled`.'],
    [{ indexUids: 'a b' }, 'invalid_index_uid', 'Invalid value in parameter `indexUids[0]`: `a b` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.'],
    [{ afterEnqueuedAt: 'yesterday' }, 'invalid_task_after_enqueued_at', 'Invalid value in parameter `afterEnqueuedAt`: `yesterday` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.'],
    [{ beforeFinishedAt: '2026-13-01' }, 'invalid_task_before_finished_at', 'Invalid value in parameter `beforeFinishedAt`: `2026-13-01` is an invalid date-time. It should follow the YYYY-MM-DD or RFC 3339 date-time format.'],
  ];
  for (const [q, code, message] of errors) {
    it(`refuses ${JSON.stringify(q)}`, () => {
      let err: unknown;
      try {
        parseTaskFilter(q);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ApiError);
      expect({ code: (err as ApiError).code, message: (err as ApiError).message }).toEqual({ code, message });
    });
  }

  it('types refuses an unknown type, listing the known ones', () => {
    expect(() => parseTaskFilter({ types: 'reindex' })).toThrow(/^Invalid value in parameter `types\[0\]`: `reindex` is not a valid task type\. Available types are `documentAdditionOrUpdate`, /);
  });

  it('keeps, at registration, only what every node answers the same way at a log position', () => {
    const f = parseTaskFilter({ uids: '1', statuses: 'failed', canceledBy: '5', afterStartedAt: '2026-01-01', beforeFinishedAt: '2027-01-01', types: 'settingsUpdate' });
    expect(registrationFilter(f)).toEqual({ uids: [1], types: ['settingsUpdate'] });
  });
});
