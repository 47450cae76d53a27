// Writes in a sharded network. The network's leader takes every write to the indexes: it
// enqueues the task here, through this cluster's log like any write, then sends the same request
// (method, path, query, body as received) to every other remote of the network with that
// remote's write key, marked with the headers below. Each instance keeps, when it applies the
// task, the documents of the shards it holds (see `engine/network/shards.ts`), so a document
// ends on the remotes of its shard; settings and deletions reach every remote. A write sent to
// an instance that is not the leader is refused with `not_leader`, unless the leader sent it.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, errorBody } from '../errors/api-error.js';
import type { RemoteTaskView, TaskNetwork } from '../tasks/task.js';
import type { Network, Remote } from '../engine/network/network.js';
import { isSharded } from '../engine/network/shards.js';

/** The remote that sent a write on, and its task for it. */
export const ORIGIN_REMOTE_HEADER = 'meili-proxy-origin-remote';
export const ORIGIN_TASK_UID_HEADER = 'meili-proxy-origin-taskuid';
/** The version of the leader's network when it sent the write (the reference also reads it `X-`prefixed). */
export const ORIGIN_NETWORK_VERSION_HEADER = 'meili-proxy-origin-network-version';
/**
 * Documents (or the settings of their index) that another remote sends because a network
 * topology change gave them to this one carry the reference's import headers (also read
 * `X-`prefixed): the sending remote, the index and the number of documents. The origin headers
 * name the change, and its network version must be the one in effect here.
 */
export const IMPORT_REMOTE_HEADER = 'meili-proxy-import-remote';
export const IMPORT_INDEX_HEADER = 'meili-proxy-import-index';
export const IMPORT_DOCS_HEADER = 'meili-proxy-import-docs';

/** How long a remote may take to accept a write, per attempt; attempts after the first. */
const WRITE_TIMEOUT_MS = 30_000;
const RETRIES = 3;

export interface WriteProxyContext {
  network(): Network;
  enabled(): boolean;
  /** Records a task's place in the network in its task record (through the log). */
  record(taskUid: number, network: TaskNetwork): Promise<void>;
  log: { warn(obj: unknown, msg?: string): void };
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** A request that creates a task on the indexes (the routes answering 202 under `/indexes` and `/swap-indexes`). */
function isIndexWrite(req: FastifyRequest): boolean {
  const config = req.routeOptions.config as { status?: number } | undefined;
  if (config?.status !== 202) return false;
  const url = req.routeOptions.url ?? '';
  return url.startsWith('/indexes') || url === '/swap-indexes';
}

/** The outcome of sending a write on to one remote: the task it enqueued there, or why not. */
export type RemoteTask = RemoteTaskView;

async function sendOnce(remote: Remote, req: FastifyRequest, self: string, taskUid: number, version: string): Promise<{ retry: boolean; result: RemoteTask }> {
  const headers: Record<string, string> = {
    [ORIGIN_REMOTE_HEADER]: encodeURIComponent(self),
    [ORIGIN_TASK_UID_HEADER]: String(taskUid),
    [ORIGIN_NETWORK_VERSION_HEADER]: version,
  };
  for (const h of ['content-type', 'content-encoding']) {
    const v = header(req, h);
    if (v !== undefined) headers[h] = v;
  }
  if (remote.writeApiKey !== null) headers['authorization'] = `Bearer ${remote.writeApiKey}`;
  const body = Buffer.isBuffer(req.body) && req.body.length > 0 ? req.body : undefined;
  try {
    const r = await fetch(`${remote.url.replace(/\/+$/, '')}${req.url}`, { method: req.method, headers, body, signal: AbortSignal.timeout(WRITE_TIMEOUT_MS) });
    const text = await r.text();
    if (r.ok) {
      const uid = (JSON.parse(text) as { taskUid?: unknown }).taskUid;
      if (typeof uid === 'number') return { retry: false, result: { taskUid: uid, error: null } };
      return { retry: true, result: { error: errorBody('remote_bad_response', `could not parse response from the remote host as a task: ${text}`) } };
    }
    if (r.status === 401 || r.status === 403) {
      return {
        retry: false,
        result: { error: errorBody('remote_invalid_api_key', 'could not authenticate against the remote host\n  - hint: check that the remote instance was registered with a valid API key having the `documents.add` action') },
      };
    }
    return { retry: r.status >= 500, result: { error: errorBody(r.status >= 500 ? 'remote_remote_error' : 'remote_bad_request', `remote host responded with code ${r.status}:\n  - response from remote: ${text}`) } };
  } catch (e) {
    const err = e as Error;
    if (err.name === 'TimeoutError') return { retry: false, result: { error: errorBody('remote_timeout', 'remote host did not answer before the deadline') } };
    const cause = err.cause instanceof Error ? err.cause.message : err.message;
    return { retry: true, result: { error: errorBody('remote_could_not_send_request', `error sending request: ${cause}`) } };
  }
}

async function sendTo(remote: Remote, req: FastifyRequest, self: string, taskUid: number, version: string): Promise<RemoteTask> {
  for (let i = 0; ; i++) {
    const { retry, result } = await sendOnce(remote, req, self, taskUid, version);
    if (!retry || i >= RETRIES) return result;
    await new Promise((r) => setTimeout(r, 50 * 2 ** i));
  }
}

/** Sends the write `req` (task `taskUid` here) to every other remote of the network. */
export async function forwardWrite(network: Network, req: FastifyRequest, taskUid: number): Promise<Record<string, RemoteTask>> {
  const self = network.self!;
  const names = Object.keys(network.remotes).filter((n) => n !== self).sort();
  const results = await Promise.all(names.map((n) => sendTo(network.remotes[n]!, req, self, taskUid, network.version)));
  return Object.fromEntries(names.map((n, i) => [n, results[i]!]));
}

/**
 * A network change made on the leader, sent on to every other remote of the new network (and
 * to those it removes, so that they leave it): the leader, the remotes (removed ones as
 * `null`) and the shards; each remote keeps its own `self`.
 */
export async function forwardNetwork(before: Network, after: Network, taskUid: number): Promise<Record<string, RemoteTask>> {
  const self = after.self!;
  const remotes: Record<string, Remote | null> = { ...after.remotes };
  for (const name of Object.keys(before.remotes)) if (!(name in after.remotes)) remotes[name] = null;
  const shards: Record<string, { remotes: string[] } | null> = { ...after.shards };
  for (const name of Object.keys(before.shards)) if (!(name in after.shards)) shards[name] = null;
  const body = JSON.stringify({ leader: after.leader, remotes, shards });
  const targets = new Map<string, Remote>();
  for (const [name, r] of [...Object.entries(before.remotes), ...Object.entries(after.remotes)]) if (name !== self) targets.set(name, r);
  const names = [...targets.keys()].sort();
  const results = await Promise.all(
    names.map(async (name) => {
      const remote = targets.get(name)!;
      const headers: Record<string, string> = { 'content-type': 'application/json', [ORIGIN_REMOTE_HEADER]: encodeURIComponent(self), [ORIGIN_TASK_UID_HEADER]: String(taskUid) };
      if (remote.writeApiKey !== null) headers['authorization'] = `Bearer ${remote.writeApiKey}`;
      const fake = { method: 'PATCH', url: '/network', headers, body: Buffer.from(body) } as unknown as FastifyRequest;
      return sendTo(remote, fake, self, taskUid, after.version);
    }),
  );
  return Object.fromEntries(names.map((n, i) => [n, results[i]!]));
}

/** A write's origin, when another remote sent it on (its name, task uid and network version in the headers). */
export function originOf(req: FastifyRequest, network: Network): Extract<TaskNetwork, { origin: unknown }> | null {
  const name = header(req, ORIGIN_REMOTE_HEADER);
  const uid = Number(header(req, ORIGIN_TASK_UID_HEADER));
  if (name === undefined || !Number.isInteger(uid) || uid < 0) return null;
  const version = header(req, ORIGIN_NETWORK_VERSION_HEADER) ?? header(req, `x-${ORIGIN_NETWORK_VERSION_HEADER}`) ?? network.version;
  return { origin: { remoteName: safeDecode(name), taskUid: uid, networkVersion: version } };
}

/** A header of the reference's protocol, as sent, or with the `X-` prefix it also reads. */
function either(req: FastifyRequest, name: string): string | undefined {
  return header(req, name) ?? header(req, `x-${name}`);
}

function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name);
  } catch {
    return name;
  }
}

function taskUidOf(payload: unknown): number | null {
  try {
    const uid = (JSON.parse(String(payload)) as { taskUid?: unknown }).taskUid;
    return typeof uid === 'number' ? uid : null;
  } catch {
    return null;
  }
}

/** The leader's check and forwarding, on every route that creates a task on the indexes. */
export function writeProxyHooks(app: FastifyInstance, ctx: WriteProxyContext): void {
  app.addHook('preHandler', async (req) => {
    if (!isIndexWrite(req) || !ctx.enabled()) return;
    const network = ctx.network();
    if (either(req, IMPORT_REMOTE_HEADER) !== undefined) {
      // Documents of a topology change: kept by the network they were sent under, so that
      // network must be the one this instance applies writes with.
      const origin = originOf(req, network);
      if (origin === null || !('origin' in origin)) throw new ApiError('bad_request', `\`${IMPORT_REMOTE_HEADER}\` needs the \`${ORIGIN_REMOTE_HEADER}\` and \`${ORIGIN_TASK_UID_HEADER}\` headers.`);
      const version = origin.origin.networkVersion;
      if (version !== network.version) {
        throw new ApiError(
          'network_version_mismatch',
          `This instance's network is at version \`${network.version}\`, and the documents were sent for version \`${version}\`: send them again once this instance has applied that network change.`,
        );
      }
      return;
    }
    if (!isSharded(network) || header(req, ORIGIN_REMOTE_HEADER) !== undefined || network.self === network.leader) return;
    throw new ApiError(
      'not_leader',
      `This instance is not the leader of the network: only \`${network.leader}\` accepts writes to the indexes${network.self === null ? '' : ` (this instance is \`${network.self}\`)`}. Send the write to the leader, which sends it on to every remote.`,
    );
  });

  app.addHook('onSend', async (req, reply, payload) => {
    if (reply.statusCode !== 202 || !isIndexWrite(req) || !ctx.enabled()) return payload;
    const origin = originOf(req, ctx.network());
    if (origin !== null && 'origin' in origin) {
      // Sent by the leader: the task keeps the leader's task it came from; moved documents
      // keep which remote sent them, for which change.
      const uid = taskUidOf(payload);
      const from = either(req, IMPORT_REMOTE_HEADER);
      const count = Number(either(req, IMPORT_DOCS_HEADER) ?? 0);
      const index = either(req, IMPORT_INDEX_HEADER);
      const indexName = index !== undefined ? safeDecode(index) : ((req.params as { indexUid?: string } | undefined)?.indexUid ?? null);
      const network: TaskNetwork =
        from !== undefined ? { importFrom: { remoteName: safeDecode(from), indexName, documentCount: Number.isSafeInteger(count) && count >= 0 ? count : 0 }, networkChange: origin.origin } : origin;
      if (uid !== null) await ctx.record(uid, network);
      return payload;
    }
    const network = ctx.network();
    if (!isSharded(network) || network.self !== network.leader) return payload;
    let summary: Record<string, unknown>;
    try {
      summary = JSON.parse(String(payload)) as Record<string, unknown>;
    } catch {
      return payload;
    }
    const remoteTasks = await forwardWrite(network, req, summary['taskUid'] as number);
    for (const [name, r] of Object.entries(remoteTasks)) {
      if (r.error) ctx.log.warn({ remote: name, error: r.error }, 'a write could not be sent on to a remote of the network');
    }
    // Which task each remote made of the write, or why it made none: answered, and kept in the task.
    const taskNetwork = { remoteTasks, networkVersion: network.version };
    await ctx.record(summary['taskUid'] as number, taskNetwork);
    return JSON.stringify({ ...summary, network: taskNetwork });
  });
}
