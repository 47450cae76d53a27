// `POST /export`: sends indexes (their primary key, settings and documents) to another
// instance, as the reference does. Done by this cluster's Raft leader between the task's two
// batches (see `task-continuations.ts`): an index matched by a pattern is created on the
// remote when it lacks it (with this one's settings), its settings are replaced there only with
// `overrideSettings`, and its documents (those the pattern's filter keeps) go in gzipped NDJSON
// payloads of at most `payloadSize` bytes. Sending the same documents again changes nothing,
// so a new leader simply starts over.

import { gzipSync } from 'node:zlib';
import { ApiError, errorBody, type ErrorBody } from '../errors/api-error.js';
import type { ResumeOutcome } from '../engine/apply/types.js';
import type { IndexOperation } from '../engine/apply/types.js';
import { patternMatches } from '../engine/indexes/index-uid.js';
import { filterDocids } from '../engine/facets/index.js';
import { engineFilterOptions } from '../engine/search/answer-query.js';
import type { IndexHandle } from '../engine/indexes/index-handle.js';
import type { TaskRecord } from '../tasks/task.js';
import { errorOf, RemoteFailure, type RemoteTarget } from './remote-writer.js';
import { documentsOf, sentDocument, sentSettings } from './sent-document.js';
import type { WorkerContext } from './task-continuations.js';

export type ExportParams = Extract<IndexOperation, { op: 'export' }>;

/** The reference's default payload size. */
export const DEFAULT_PAYLOAD_BYTES = 20 * 1024 * 1024;

/** The remote's own error when it answered with one, as the reference reports it. */
function exportError(f: RemoteFailure): ErrorBody {
  if (f.error) return f.error;
  if (f.status === null) return errorBody(f.timedOut ? 'remote_timeout' : 'remote_could_not_send_request', f.message);
  if (f.status === 401 || f.status === 403) return errorBody('remote_invalid_api_key', f.message);
  return errorBody(f.status >= 500 ? 'remote_remote_error' : 'remote_bad_response', f.message);
}

export async function exportIndexes(ctx: WorkerContext, t: TaskRecord): Promise<ResumeOutcome> {
  const p = t.params as ExportParams;
  const remote: RemoteTarget = { name: p.url, url: p.url, apiKey: p.apiKey };
  const patterns = Object.keys(p.indexes).sort();
  const exported: Record<string, unknown> = {};
  const details = () => ({ ...t.details, indexes: exported });
  try {
    for (const h of ctx.engine.listIndexes()) {
      const pattern = patterns.find((pat) => patternMatches(pat, h.uid));
      if (pattern === undefined) continue;
      const { filter, overrideSettings } = p.indexes[pattern]!;
      const matched = await exportIndex(ctx, remote, h, filter, overrideSettings, p.payloadSize ?? DEFAULT_PAYLOAD_BYTES);
      exported[h.uid] = { filter, overrideSettings, matchedDocuments: matched };
    }
    return { sent: true, error: null, details: details() };
  } catch (e) {
    if (e instanceof RemoteFailure) return { sent: false, error: exportError(e), details: details() };
    if (e instanceof ApiError) return { sent: false, error: e.toJSON(), details: details() };
    throw e;
  }
}

async function exportIndex(ctx: WorkerContext, remote: RemoteTarget, h: IndexHandle, filter: unknown, overrideSettings: boolean, limit: number): Promise<number> {
  const { writer, engine } = ctx;
  const json = { 'content-type': 'application/json' };
  const path = `/indexes/${encodeURIComponent(h.uid)}`;
  const found = await writer.fetch(remote, path, { method: 'GET' });
  if (found.status !== 200 && found.status !== 404) throw new RemoteFailure(remote.name, found.status, errorOf(found.text), `remote \`${remote.name}\` answered ${found.status} about index \`${h.uid}\`: ${found.text}`);
  const exists = found.status === 200;
  const primaryKey = h.meta.primaryKey;
  if (!exists) await writer.write(remote, 'POST', '/indexes', JSON.stringify({ uid: h.uid, primaryKey }), json);
  else if (overrideSettings && primaryKey !== null) await writer.write(remote, 'PATCH', path, JSON.stringify({ primaryKey }), json);
  if (!exists || overrideSettings) await writer.write(remote, 'PATCH', `${path}/settings`, JSON.stringify(sentSettings(h.meta.settings)), json);

  const kept = filter === null ? null : filterDocids(h, filter, { code: 'invalid_export_index_filter', ...engineFilterOptions(engine, { containsFilter: true, foreignKeys: true }) });
  const docids = kept !== null ? [...kept] : [...h.ext.values()].sort((a, b) => a - b);
  const ndjson = { 'content-type': 'application/x-ndjson', 'content-encoding': 'gzip' };
  let lines: string[] = [];
  let bytes = 0;
  const flush = async () => {
    if (lines.length === 0) return;
    await writer.write(remote, 'POST', `${path}/documents`, gzipSync(lines.join('\n')), ndjson);
    lines = [];
    bytes = 0;
  };
  for await (const doc of documentsOf(engine, h, docids)) {
    const line = await sentDocument(h, doc);
    const size = Buffer.byteLength(line) + 1;
    // At least one document per payload, however large.
    if (lines.length > 0 && bytes + size > limit) await flush();
    lines.push(line);
    bytes += size;
  }
  await flush();
  return docids.length;
}
