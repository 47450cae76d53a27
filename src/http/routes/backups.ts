import type { FastifyInstance } from 'fastify';
import { snapshotTask } from '../../backup/runner.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { enqueueTask } from './params.js';

/** `customMetadata` of a backup task (no index: a bad value is a plain `bad_request`). */
const backupQuery = s.object({ customMetadata: s.field(s.string(), 'bad_request') });

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
    query: backupQuery,
    status: 202,
    response: 'The summarized dumpCreation task; the dump is written to `<dump-dir>/<dumpUid>.dump`',
    handler: async (_req, _reply, { query }) => enqueueTask(ctx, { type: 'dumpCreation', indexUid: null, details: { dumpUid: null }, params: { op: 'dump' } }, query),
  });

  route(app, {
    method: 'POST',
    url: '/snapshots',
    summary: 'Write a snapshot: a consistent copy of the database, to start a node from',
    tags: ['Backups'],
    action: 'snapshots.create',
    query: backupQuery,
    status: 202,
    response: 'The summarized snapshotCreation task; the snapshot is written to `<snapshot-dir>/<db name>.snapshot`',
    handler: async (_req, _reply, { query }) => enqueueTask(ctx, snapshotTask(), query),
  });
}
