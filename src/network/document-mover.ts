// The part of a network topology change that happens outside the log: this cluster's Raft
// leader sends the documents that other remotes now own (see `engine/network/topology-change.ts`)
// to those remotes, as document additions marked as imports of this change, and waits until
// each remote has applied them. The batch that ends the task then deletes them here; if a
// remote cannot take them, the task fails and every document stays where it was. A new
// leader sends them again (an addition of the same documents changes nothing).

import { ApiError } from '../errors/api-error.js';
import { moveTargets, type MoveContinuation } from '../engine/network/topology-change.js';
import type { Network } from '../engine/network/network.js';
import { extractDocumentId } from '../engine/documents/primary-key.js';
import type { IndexSettings } from '../engine/settings/settings.js';
import type { ResumeOutcome } from '../engine/apply/types.js';
import { documentsOf, sentDocument, sentSettings } from './sent-document.js';
import type { TaskRecord } from '../tasks/task.js';
import { IMPORT_DOCS_HEADER, IMPORT_INDEX_HEADER, IMPORT_REMOTE_HEADER, ORIGIN_NETWORK_VERSION_HEADER, ORIGIN_REMOTE_HEADER, ORIGIN_TASK_UID_HEADER } from './write-proxy.js';
import { RemoteFailure, type RemoteTarget } from './remote-writer.js';
import type { WorkerContext } from './task-continuations.js';

/** A chunk of an import: this many documents, or this many bytes of NDJSON, whichever comes first. */
const CHUNK_DOCUMENTS = 1000;
const CHUNK_BYTES = 4 * 1024 * 1024;

type Origin = { remoteName: string; taskUid: number };

/** A remote's failure as the task reports it. */
function moveError(f: RemoteFailure): ApiError {
  if (f.status === null) return new ApiError(f.timedOut ? 'remote_timeout' : f.error ? 'remote_remote_error' : 'remote_could_not_send_request', f.message);
  if (f.status === 401 || f.status === 403) {
    return new ApiError('remote_invalid_api_key', `remote \`${f.remote}\` refused the write API key it was registered with (it needs the \`documents.add\` and \`settings.update\` actions): ${f.message}`);
  }
  return new ApiError(f.status >= 500 ? 'remote_remote_error' : 'remote_bad_request', f.message);
}

function target(network: Network, previous: Network, name: string): RemoteTarget {
  // A removed remote was sent the change too, and is still reached at its last address.
  const r = network.remotes[name] ?? previous.remotes[name];
  if (!r) throw new ApiError('remote_bad_request', `remote \`${name}\` owns a shard but is not in the network's remotes`);
  return { name, url: r.url, apiKey: r.writeApiKey };
}

export async function moveDocuments(ctx: WorkerContext, t: TaskRecord): Promise<ResumeOutcome> {
  let sent = false;
  try {
    await send(ctx, t, () => (sent = true));
    return { sent, error: null };
  } catch (e) {
    if (!(e instanceof RemoteFailure || e instanceof ApiError)) throw e;
    return { sent, error: (e instanceof RemoteFailure ? moveError(e) : e).toJSON() };
  }
}

async function send(ctx: WorkerContext, t: TaskRecord, allSent: () => void): Promise<void> {
  const { engine, writer } = ctx;
  const network = engine.network.get();
  const previous = (t.continuation as MoveContinuation).previous;
  const targets = moveTargets(previous, network);
  const self = network.self;
  // The change as the leader of the network numbered it: what the receivers note their imports came from.
  const noted = ctx.queue.tasks.get(t.uid)?.network;
  const origin: Origin = noted && 'origin' in noted ? noted.origin : { remoteName: self ?? '', taskUid: t.uid };
  const headers = (index: string, count: number, contentType: string): Record<string, string> => ({
    'content-type': contentType,
    [ORIGIN_REMOTE_HEADER]: encodeURIComponent(origin.remoteName),
    [ORIGIN_TASK_UID_HEADER]: String(origin.taskUid),
    [ORIGIN_NETWORK_VERSION_HEADER]: network.version,
    [IMPORT_REMOTE_HEADER]: encodeURIComponent(self ?? ''),
    [IMPORT_INDEX_HEADER]: encodeURIComponent(index),
    [IMPORT_DOCS_HEADER]: String(count),
  });
  const imports: { remote: RemoteTarget; taskUid: number }[] = [];
  if (targets !== null && self !== null) {
    for (const h of engine.listIndexes()) {
      const pk = h.meta.primaryKey;
      if (pk === null) continue;
      const chunks = new Map<string, { lines: string[]; bytes: number }>();
      const ready = new Set<string>();
      const flush = async (name: string) => {
        const c = chunks.get(name);
        if (!c || c.lines.length === 0) return;
        chunks.delete(name);
        const remote = target(network, previous, name);
        if (!ready.has(name)) {
          ready.add(name);
          const created = await ensureIndex(ctx, remote, h.uid, h.meta.settings, headers(h.uid, 0, 'application/json'));
          if (created !== null) imports.push({ remote, taskUid: created });
        }
        const path = `/indexes/${encodeURIComponent(h.uid)}/documents?primaryKey=${encodeURIComponent(pk)}`;
        const uid = await writer.write(remote, 'POST', path, c.lines.join('\n'), headers(h.uid, c.lines.length, 'application/x-ndjson'), { waitWhile412: true });
        imports.push({ remote, taskUid: uid });
      };
      // Only the documents that go somewhere are read.
      const going = new Map<string, string[]>();
      const docids: number[] = [];
      for (const [id, docid] of h.ext) {
        const to = targets(id);
        if (to.length === 0) continue;
        going.set(id, to);
        docids.push(docid);
      }
      docids.sort((a, b) => a - b);
      for await (const doc of documentsOf(engine, h, docids)) {
        const line = await sentDocument(h, doc);
        const size = Buffer.byteLength(line) + 1;
        for (const name of going.get(extractDocumentId(doc, pk)) ?? []) {
          let c = chunks.get(name);
          if (!c) chunks.set(name, (c = { lines: [], bytes: 0 }));
          c.lines.push(line);
          c.bytes += size;
          if (c.lines.length >= CHUNK_DOCUMENTS || c.bytes >= CHUNK_BYTES) await flush(name);
        }
      }
      for (const name of [...chunks.keys()]) await flush(name);
    }
  }
  for (const i of imports) await writer.waitForTask(i.remote, i.taskUid, 'the import of the moved documents');
  allSent();
  // The leader of the network ends its change once every remote has ended its own. Which task
  // each remote made of it is recorded through the log once they all answered.
  if (network.leader !== null && network.leader === self) {
    let recorded = ctx.queue.tasks.get(t.uid)?.network;
    const until = Date.now() + ctx.shortWaitMs;
    for (let wait = 20; !recorded && Date.now() < until; wait = Math.min(wait * 2, 500)) {
      await ctx.pause(wait);
      recorded = ctx.queue.tasks.get(t.uid)?.network;
    }
    const remoteTasks = recorded && 'remoteTasks' in recorded ? recorded.remoteTasks : {};
    for (const [name, r] of Object.entries(remoteTasks)) {
      if (!('taskUid' in r) || !(network.remotes[name] ?? previous.remotes[name])) continue;
      await writer.waitForTask(target(network, previous, name), r.taskUid, 'its own network topology change');
    }
  }
}

/** A missing index is created on the remote with this index's settings first; the task that does it, or null. */
async function ensureIndex(ctx: WorkerContext, remote: RemoteTarget, uid: string, settings: IndexSettings, headers: Record<string, string>): Promise<number | null> {
  const r = await ctx.writer.fetch(remote, `/indexes/${encodeURIComponent(uid)}`, { method: 'GET' });
  if (r.status !== 404) return null;
  return ctx.writer.write(remote, 'PATCH', `/indexes/${encodeURIComponent(uid)}/settings`, JSON.stringify(sentSettings(settings)), headers, { waitWhile412: true });
}
