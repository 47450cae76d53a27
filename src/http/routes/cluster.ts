import type { FastifyInstance, FastifyRequest } from 'fastify';
import { recheckRevoked } from '../../auth/request-auth.js';
import { ApiError } from '../../errors/api-error.js';
import { isFinished } from '../../tasks/task.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';

/** Read-your-writes across nodes: answer only once this node has processed the given task. */
export const WAIT_FOR_TASK_HEADER = 'trine-wait-for-task';
/** Overrides --read-consistency for one request: `consistent` or `stale`. */
export const READ_CONSISTENCY_HEADER = 'trine-read-consistency';
/** How long to wait for it, in milliseconds (default and cap below). */
export const WAIT_TIMEOUT_HEADER = 'trine-wait-timeout';
const DEFAULT_WAIT_MS = 5_000;
const MAX_WAIT_MS = 60_000;

const addNodeBody = s.object({
  id: s.required(
    s.string((v, c) => {
      if (!/^[A-Za-z0-9_-]+$/.test(v)) throw new ApiError(c.code, `Invalid value at \`.id\`: \`${v}\` may only hold A-Z a-z 0-9 _ -.`);
    }),
    'bad_request',
  ),
  raftAddr: s.required(
    s.string((v, c) => {
      if (!/^.+:\d+$/.test(v)) throw new ApiError(c.code, `Invalid value at \`.raftAddr\`: expected host:port, got \`${v}\`.`);
    }),
    'bad_request',
  ),
});

const transferBody = s.object({ to: s.field(s.string(), 'bad_request') });

/** Reads that show no replicated state: they never wait to be consistent. */
const LOCAL_READS: ReadonlySet<string> = new Set(['/', '/health', '/version', '/metrics', '/openapi.json', '/cluster', '/cluster/health']);
/** Routes that read although they are POSTs (a query in the body). */
const READ_POSTS: ReadonlySet<string> = new Set([
  '/indexes/:indexUid/search',
  '/indexes/:indexUid/facet-search',
  '/indexes/:indexUid/similar',
  '/indexes/:indexUid/documents/fetch',
  '/multi-search',
]);

/** Whether a request reads replicated state (documents, settings, tasks, keys...). */
function readsReplicatedState(req: FastifyRequest): boolean {
  const url = req.routeOptions.url;
  if (url === undefined) return false;
  if (req.method === 'GET' || req.method === 'HEAD') return !LOCAL_READS.has(url);
  return req.method === 'POST' && READ_POSTS.has(url);
}

function headerValue(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[v.length - 1] : v;
}

function parseWaitHeaders(req: FastifyRequest): { uid: number; timeoutMs: number } | null {
  const raw = headerValue(req, WAIT_FOR_TASK_HEADER);
  if (raw === undefined) return null;
  if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(Number(raw))) {
    throw new ApiError('invalid_header_value', `The \`Trine-Wait-For-Task\` header must be a task uid (a positive integer), not \`${raw}\`.`);
  }
  const rawTimeout = headerValue(req, WAIT_TIMEOUT_HEADER);
  let timeoutMs = DEFAULT_WAIT_MS;
  if (rawTimeout !== undefined) {
    if (!/^\s*\d+\s*$/.test(rawTimeout)) {
      throw new ApiError('invalid_header_value', `The \`Trine-Wait-Timeout\` header must be a number of milliseconds, not \`${rawTimeout}\`.`);
    }
    timeoutMs = Math.min(Number(rawTimeout), MAX_WAIT_MS);
  }
  return { uid: Number(raw), timeoutMs };
}

/**
 * Waits until this node has registered task `uid` (applied the log entry that created it) and
 * processed it: a final status (or deleted since, which only finished tasks can be), and its
 * batch no longer in progress. A batch's statuses change before its writes are published, so
 * a final status alone does not yet mean that a read sees the task's effect.
 */
async function waitProcessed(ctx: AppContext, uid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  if (ctx.queue.nextTaskUid <= uid) {
    // A client learns a uid from a 202, sent once its entry is committed: after catching up with
    // the leader's commit, a uid still unknown here names no task at all.
    if (!(await ctx.replicator.catchUp(timeoutMs))) return false;
    if (ctx.queue.nextTaskUid <= uid) throw new ApiError('task_not_found', `Task \`${uid}\` not found.`);
  }
  // Finished here, its batch's writes published, and its outcome settled by the log (as reported).
  const processed = () => {
    const t = ctx.queue.get(uid);
    const inProgress = ctx.executor.current?.taskUids.includes(uid) ?? false;
    return (!t || isFinished(ctx.queue.reported(t).status)) && !inProgress;
  };
  return ctx.replicator.waitUntil(processed, Math.max(1, deadline - Date.now()));
}

export function clusterRoutes(app: FastifyInstance, ctx: AppContext): void {

  // Read your writes on any node: a read first reflects every write the cluster reported done.
  // After authentication (an onRequest hook), so that only allowed requests may wait.
  app.addHook('preHandler', async (req) => {
    if (!readsReplicatedState(req)) return;
    const asked = headerValue(req, READ_CONSISTENCY_HEADER);
    if (asked !== undefined && asked !== 'consistent' && asked !== 'stale') {
      throw new ApiError('invalid_header_value', `The \`Trine-Read-Consistency\` header must be \`consistent\` or \`stale\`, not \`${asked}\`.`);
    }
    await ctx.reads.ready(asked);
    await recheckRevoked(req, ctx.keys);
  });

  app.addHook('preHandler', async (req) => {
    const wait = parseWaitHeaders(req);
    if (!wait) return;
    if (await waitProcessed(ctx, wait.uid, wait.timeoutMs)) return;
    throw new ApiError(
      'cluster_unavailable',
      `Node \`${ctx.options.nodeId}\` has not processed task ${wait.uid} within ${wait.timeoutMs} ms (its next task uid is ${ctx.queue.nextTaskUid}). It lags or the task does not exist yet; retry, or read from another node.`,
    );
  });

  route(app, {
    method: 'GET',
    url: '/cluster/health',
    summary: 'Whether a load balancer should send this node requests: 503 while it cannot reach a quorum or lags beyond --health-max-lag-entries / --health-max-lag (public)',
    tags: ['Cluster'],
    status: 200,
    response: '{status: "available", nodeId, role, leader, lag: {entries, ms}}',
    errors: ['node_not_ready'],
    handler: async () => {
      const r = ctx.replicator.readiness();
      if (!r.ready) throw new ApiError('node_not_ready', `${r.reason[0]!.toUpperCase()}${r.reason.slice(1)}.`);
      const self = ctx.replicator.status().self;
      return { status: 'available', nodeId: ctx.options.nodeId, role: self.role, leader: self.leader, lag: r.lag };
    },
  });

  route(app, {
    method: 'GET',
    url: '/cluster',
    summary: 'Every member of the cluster: role, term, commit and applied index, lag, reachability',
    tags: ['Cluster'],
    action: 'network.get',
    status: 200,
    response: '{nodeId, leader, term, members: [{id, voter, raftAddr, httpAddr, role, term, commitIndex, appliedIndex, lag, reachable}]}',
    handler: async () => ctx.replicator.clusterView(),
  });

  route(app, {
    method: 'POST',
    url: '/cluster/nodes',
    summary: 'Add a node: a learner first, promoted to voter once it has caught up',
    tags: ['Cluster'],
    action: 'network.update',
    body: addNodeBody,
    status: 200,
    errors: ['bad_request', 'no_leader'],
    handler: async (_req, _reply, { body }) => {
      await ctx.replicator.addNode(body.id, body.raftAddr);
      return ctx.replicator.clusterView();
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/cluster/nodes/:nodeId',
    summary: 'Remove a node from the cluster (the leader hands leadership over first if it is the one)',
    tags: ['Cluster'],
    action: 'network.update',
    status: 200,
    errors: ['bad_request', 'no_leader'],
    handler: async (req) => {
      const { nodeId } = req.params as { nodeId: string };
      await ctx.replicator.removeNode(nodeId);
      return ctx.replicator.clusterView();
    },
  });

  route(app, {
    method: 'POST',
    url: '/cluster/transfer-leadership',
    summary: 'Hand leadership to `to`, or to the most caught-up voter when `to` is absent',
    tags: ['Cluster'],
    action: 'network.update',
    body: transferBody,
    emptyBodyIs: {},
    status: 200,
    errors: ['bad_request', 'no_leader'],
    handler: async (_req, _reply, { body }) => {
      const leader = await ctx.replicator.transferLeadership(body.to ?? null);
      return { leader };
    },
  });
}
