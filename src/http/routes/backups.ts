import type { FastifyInstance } from 'fastify';
import { snapshotTask } from '../../backup/runner.js';
import { taskSummary } from '../../tasks/task.js';
import type { AppContext } from '../context.js';
import { queryRecord, route } from '../route.js';
import { customMetadata, writeQuery } from './params.js';

/**
 * `POST /dumps` and `POST /snapshots`: both enqueue a task that every node processes,
 * writing its own copy into its `--dump-dir` / `--snapshot-dir` (see `src/backup/`).
 */
export function backupRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/dumps',
    summary: 'Write a dump: a portable, versioned archive of indexes, settings, documents, tasks and keys',
    tags: ['Backups'],
    action: 'dumps.create',
    query: writeQuery,
    status: 202,
    response: 'The summarized dumpCreation task; the dump is written to `<dump-dir>/<dumpUid>.dump`',
    handler: async (req) => {
      const q = writeQuery.validate(queryRecord(req), 'query');
      const task = await ctx.enqueue({
        type: 'dumpCreation',
        indexUid: null,
        details: { dumpUid: null },
        params: { op: 'dump' },
        ...customMetadata(q),
      });
      return taskSummary(task);
    },
  });

  route(app, {
    method: 'POST',
    url: '/snapshots',
    summary: 'Write a snapshot: a consistent copy of the database, to start a node from',
    tags: ['Backups'],
    action: 'snapshots.create',
    query: writeQuery,
    status: 202,
    response: 'The summarized snapshotCreation task; the snapshot is written to `<snapshot-dir>/<db name>.snapshot`',
    handler: async (req) => {
      const q = writeQuery.validate(queryRecord(req), 'query');
      const task = await ctx.enqueue({ ...snapshotTask(), ...customMetadata(q) });
      return taskSummary(task);
    },
  });
}
