// The part of a network topology change that happens outside the log: this cluster's Raft
// leader sends the documents that other remotes now own (see `engine/network/topology-change.ts`)
// to those remotes, as document additions marked as imports of this change, and waits until
// each remote has applied them. Then it proposes the batch that deletes them here and ends the
// task; if a remote cannot take them, the task fails and every document stays where it was.
// A new leader starts the sending again (an addition of the same documents changes nothing).

import type { Engine } from '../engine/engine.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { TaskRecord } from '../tasks/task.js';
import type { BatchRecord } from '../tasks/batch.js';
import type { MoveOutcome } from '../engine/apply/types.js';
import { ApiError, errorBody, type ErrorBody } from '../errors/api-error.js';
import { moveTargets, type MoveContinuation } from '../engine/network/topology-change.js';
import type { Network, Remote } from '../engine/network/network.js';
import { extractDocumentId } from '../engine/documents/primary-key.js';
import { defaultSettings, settingsView } from '../engine/settings/settings.js';
import { stringifyJson } from '../util/exact-json.js';
import { IMPORT_HEADER, IMPORT_REMOTE_HEADER, ORIGIN_NETWORK_VERSION_HEADER, ORIGIN_REMOTE_HEADER, ORIGIN_TASK_UID_HEADER } from './write-proxy.js';

/** A chunk of an import: this many documents, or this many bytes of NDJSON, whichever comes first. */
const CHUNK_DOCUMENTS = 1000;
const CHUNK_BYTES = 4 * 1024 * 1024;
const REQUEST_TIMEOUT_MS = 30_000;
/** Attempts at a remote that does not answer, or answers with a server error. */
const ATTEMPTS = 5;

export interface MoverOptions {
  engine: Engine;
  queue: TaskQueue;
  isLeader(): boolean;
  /**
   * Proposes the batch that ends the task: `sent` when every document this instance gives away
   * is held by its new owners (they are deleted here then), `error` when something failed.
   */
  resume(taskUid: number, outcome: MoveOutcome): Promise<void>;
  log: { warn(obj: unknown, msg?: string): void; info(obj: unknown, msg?: string): void };
  /** How long a remote may keep refusing an import because it has not applied the change yet, or keep its import unfinished (default 5 min). */
  giveUpMs?: number;
}

/** This node stopped leading: the new leader does the move. */
class Abandoned extends Error {}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export class DocumentMover {
  private running: number | null = null;
  private closed = false;

  constructor(private readonly o: MoverOptions) {}

  close(): void {
    this.closed = true;
  }

  /** A batch was processed: it may have left a topology change processing. */
  batchProcessed(b: BatchRecord): void {
    for (const uid of b.taskUids) {
      const t = this.o.queue.tasks.get(uid);
      if (t && this.waiting(t)) return this.start(t);
    }
  }

  /** This node may lead now: a change left processing by an earlier leader is this one's to finish. */
  roleChanged(): void {
    if (!this.o.isLeader() || this.running !== null) return;
    for (const t of this.o.queue.tasks.values()) if (this.waiting(t)) return this.start(t);
  }

  private waiting(t: TaskRecord): boolean {
    if (t.type !== 'networkTopologyChange' || t.status !== 'processing' || t.continuation === undefined) return false;
    return !this.o.queue.pending.some((p) => p.taskUids.includes(t.uid));
  }

  private start(t: TaskRecord): void {
    if (this.closed || this.running !== null || !this.o.isLeader()) return;
    this.running = t.uid;
    void this.move(t).finally(() => {
      this.running = null;
    });
  }

  private async move(t: TaskRecord): Promise<void> {
    const outcome: MoveOutcome = { sent: false, error: null };
    try {
      await this.send(t, () => (outcome.sent = true));
    } catch (e) {
      if (e instanceof Abandoned || this.closed) return;
      outcome.error = e instanceof ApiError ? e.toJSON() : errorBody('internal', e instanceof Error ? e.message : String(e));
      this.o.log.warn({ taskUid: t.uid, sent: outcome.sent, error: outcome.error }, 'a network topology change could not be completed');
    }
    try {
      await this.o.resume(t.uid, outcome);
    } catch (e) {
      // Not leading any more: the next leader sends again and ends the task.
      this.o.log.warn({ taskUid: t.uid, err: e }, 'could not end a network topology change');
    }
  }

  private async send(t: TaskRecord, allSent: () => void): Promise<void> {
    const { engine } = this.o;
    const network = engine.network.get();
    const targets = moveTargets((t.continuation as MoveContinuation).previous, network);
    const self = network.self;
    // The change as the leader of the network numbered it: what the receivers note their imports came from.
    const noted = this.o.queue.tasks.get(t.uid)?.network;
    const origin = noted && 'origin' in noted ? noted.origin : { remoteName: self ?? '', taskUid: t.uid, networkVersion: network.version };
    const deadline = Date.now() + (this.o.giveUpMs ?? 300_000);
    const imports: { remote: string; taskUid: number }[] = [];
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
          const remote = this.remote(network, name);
          if (!ready.has(name)) {
            ready.add(name);
            const created = await this.ensureIndex(remote, name, h.uid, h.meta.settings, origin, network.version, deadline);
            if (created !== null) imports.push({ remote: name, taskUid: created });
          }
          const path = `/indexes/${encodeURIComponent(h.uid)}/documents?primaryKey=${encodeURIComponent(pk)}`;
          const uid = await this.post(remote, name, 'POST', path, c.lines.join('\n'), 'application/x-ndjson', c.lines.length, origin, network.version, deadline);
          imports.push({ remote: name, taskUid: uid });
        };
        for await (const [, doc] of engine.allDocuments(h)) {
          const to = targets(extractDocumentId(doc, pk));
          if (to.length === 0) continue;
          const line = stringifyJson(doc);
          for (const name of to) {
            let c = chunks.get(name);
            if (!c) chunks.set(name, (c = { lines: [], bytes: 0 }));
            c.lines.push(line);
            c.bytes += line.length + 1;
            if (c.lines.length >= CHUNK_DOCUMENTS || c.bytes >= CHUNK_BYTES) await flush(name);
          }
        }
        for (const name of [...chunks.keys()]) await flush(name);
      }
    }
    for (const i of imports) await this.waitForTask(this.remote(network, i.remote), i.remote, i.taskUid, deadline, 'the import of the moved documents');
    allSent();
    // The leader of the network ends its change once every remote has ended its own. Which task
    // each remote made of it is recorded through the log once they all answered.
    if (network.leader !== null && network.leader === self) {
      let recorded = this.o.queue.tasks.get(t.uid)?.network;
      for (let wait = 20; !recorded && Date.now() < deadline; wait = Math.min(wait * 2, 500)) {
        if (!this.o.isLeader() || this.closed) throw new Abandoned();
        await sleep(wait);
        recorded = this.o.queue.tasks.get(t.uid)?.network;
      }
      const remoteTasks = recorded && 'remoteTasks' in recorded ? recorded.remoteTasks : {};
      for (const [name, r] of Object.entries(remoteTasks)) {
        // A removed remote was sent the change too, and hands its documents on before it ends.
        const remote = network.remotes[name] ?? (t.continuation as MoveContinuation).previous.remotes[name];
        if (!remote || !('taskUid' in r)) continue;
        await this.waitForTask(remote, name, r.taskUid, deadline, 'its own network topology change');
      }
    }
  }

  private remote(network: Network, name: string): Remote {
    const r = network.remotes[name];
    if (!r) throw new ApiError('remote_bad_request', `remote \`${name}\` owns a shard but is not in the network's remotes`);
    return r;
  }

  private headers(remote: Remote, origin: { remoteName: string; taskUid: number }, version: string, count: number, contentType?: string): Record<string, string> {
    const h: Record<string, string> = {
      [ORIGIN_REMOTE_HEADER]: encodeURIComponent(origin.remoteName),
      [ORIGIN_TASK_UID_HEADER]: String(origin.taskUid),
      [ORIGIN_NETWORK_VERSION_HEADER]: version,
      [IMPORT_HEADER]: String(count),
    };
    const self = this.o.engine.network.get().self;
    if (self !== null) h[IMPORT_REMOTE_HEADER] = encodeURIComponent(self);
    if (contentType) h['content-type'] = contentType;
    if (remote.writeApiKey !== null) h['authorization'] = `Bearer ${remote.writeApiKey}`;
    return h;
  }

  private url(remote: Remote, path: string): string {
    return `${remote.url.replace(/\/+$/, '')}${path}`;
  }

  /** A missing index is created on the remote with this index's settings first; the task that does it, or null. */
  private async ensureIndex(remote: Remote, name: string, uid: string, settings: Parameters<typeof settingsView>[0], origin: { remoteName: string; taskUid: number }, version: string, deadline: number): Promise<number | null> {
    const r = await this.fetch(remote, name, this.url(remote, `/indexes/${encodeURIComponent(uid)}`), { method: 'GET', headers: this.headers(remote, origin, version, 0) });
    if (r.status !== 404) return null;
    // Only the settings changed from the defaults: those left alone may be behind a switch the remote has off (`chat`).
    const view = settingsView(settings);
    const defaults = settingsView(defaultSettings());
    const changed = Object.fromEntries(Object.entries(view).filter(([k, v]) => JSON.stringify(v) !== JSON.stringify(defaults[k])));
    return this.post(remote, name, 'PATCH', `/indexes/${encodeURIComponent(uid)}/settings`, JSON.stringify(changed), 'application/json', 0, origin, version, deadline);
  }

  /** One request, tried again while the remote is unreachable or failing; a leader that stops leading gives up. */
  private async fetch(remote: Remote, name: string, url: string, init: RequestInit): Promise<Response> {
    for (let i = 0; ; i++) {
      if (!this.o.isLeader() || this.closed) throw new Abandoned();
      try {
        const r = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        if (r.status < 500 || i + 1 >= ATTEMPTS) return r;
        await r.text();
      } catch (e) {
        if (i + 1 >= ATTEMPTS) {
          const err = e as Error;
          if (err.name === 'TimeoutError') throw new ApiError('remote_timeout', `remote \`${name}\` did not answer before the deadline`);
          const cause = err.cause instanceof Error ? err.cause.message : err.message;
          throw new ApiError('remote_could_not_send_request', `could not send the moved documents to remote \`${name}\`: ${cause}`);
        }
      }
      await sleep(100 * 2 ** i);
    }
  }

  /** Sends a write and answers the task it made on the remote; waits while the remote has not applied this network version yet. */
  private async post(remote: Remote, name: string, method: string, path: string, body: string, contentType: string, count: number, origin: { remoteName: string; taskUid: number }, version: string, deadline: number): Promise<number> {
    for (let wait = 100; ; wait = Math.min(wait * 2, 2_000)) {
      const r = await this.fetch(remote, name, this.url(remote, path), { method, headers: this.headers(remote, origin, version, count, contentType), body });
      const text = await r.text();
      if (r.ok) {
        const uid = (JSON.parse(text) as { taskUid?: unknown }).taskUid;
        if (typeof uid === 'number') return uid;
        throw new ApiError('remote_bad_response', `could not parse the answer of remote \`${name}\` as a task: ${text}`);
      }
      if (r.status === 412 && Date.now() < deadline) {
        await sleep(wait);
        continue;
      }
      if (r.status === 401 || r.status === 403) {
        throw new ApiError('remote_invalid_api_key', `remote \`${name}\` refused the write API key it was registered with (it needs the \`documents.add\` and \`settings.update\` actions): ${text}`);
      }
      throw new ApiError(r.status >= 500 ? 'remote_remote_error' : 'remote_bad_request', `remote \`${name}\` answered ${r.status} to the moved documents: ${text}`);
    }
  }

  /** Waits until a task on a remote has ended; a key that may not read tasks counts the task as accepted. */
  private async waitForTask(remote: Remote, name: string, uid: number, deadline: number, what: string): Promise<void> {
    for (let wait = 50; ; wait = Math.min(wait * 2, 1_000)) {
      const r = await this.fetch(remote, name, this.url(remote, `/tasks/${uid}`), { method: 'GET', headers: remote.writeApiKey !== null ? { authorization: `Bearer ${remote.writeApiKey}` } : {} });
      const text = await r.text();
      if (r.status === 401 || r.status === 403) return;
      if (!r.ok) throw new ApiError('remote_bad_response', `remote \`${name}\` answered ${r.status} about task ${uid} (${what}): ${text}`);
      const task = JSON.parse(text) as { status?: string; error?: { message?: string } | null };
      if (task.status === 'succeeded') return;
      if (task.status === 'failed' || task.status === 'canceled') {
        throw new ApiError('remote_remote_error', `task ${uid} on remote \`${name}\` (${what}) ${task.status}${task.error?.message ? `: ${task.error.message}` : ''}`);
      }
      if (Date.now() >= deadline) throw new ApiError('remote_timeout', `task ${uid} on remote \`${name}\` (${what}) had not ended in time`);
      await sleep(wait);
    }
  }
}
