import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { mergeNetwork, NetworkStore, type NetworkOp, type NetworkPatch } from '../../engine/network/network.js';
import { uuidv7 } from '../../util/uuid.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { enqueueTask, writeQuery } from './params.js';
import { forwardNetwork, originOf, ORIGIN_NETWORK_VERSION_HEADER, ORIGIN_REMOTE_HEADER } from '../../network/write-proxy.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const key = s.string().nullable();
const names = s.array(s.string()).nullable();

const remoteBody = s.object(
  {
    url: s.field(key, 'invalid_network_url'),
    searchApiKey: s.field(key, 'invalid_network_search_api_key'),
    writeApiKey: s.field(key, 'invalid_network_write_api_key'),
  },
  { unknownCode: 'invalid_network_remotes' },
);

const shardBody = s.object(
  {
    remotes: s.field(names, 'invalid_network_remotes'),
    addRemotes: s.field(names, 'invalid_network_remotes'),
    removeRemotes: s.field(names, 'invalid_network_remotes'),
  },
  { unknownCode: 'invalid_network_shards' },
);

const networkBody = s.object({
  self: s.field(key, 'invalid_network_self'),
  leader: s.field(key, 'invalid_network_leader'),
  remotes: s.field(s.record(remoteBody.nullable()).nullable(), 'invalid_network_remotes'),
  shards: s.field(s.record(shardBody.nullable()).nullable(), 'invalid_network_shards'),
  // Reserved for the instances of a network talking to each other.
  previousRemotes: s.field(s.any(), 'unexpected_network_previous_remotes'),
  previousShards: s.field(s.any(), 'unexpected_network_previous_remotes'),
});

const remoteSchema = {
  type: 'object',
  properties: { url: { type: 'string' }, searchApiKey: { type: ['string', 'null'] }, writeApiKey: { type: ['string', 'null'] } },
};

const networkSchema = {
  type: 'object',
  properties: {
    self: { type: ['string', 'null'] },
    remotes: { type: 'object', additionalProperties: remoteSchema },
    shards: { type: 'object', additionalProperties: { type: 'object', properties: { remotes: { type: 'array', items: { type: 'string' } } } } },
    leader: { type: ['string', 'null'] },
    version: { type: 'string', format: 'uuid' },
  },
};

export function networkRoutes(app: FastifyInstance, ctx: AppContext): void {
  const check = () => ctx.features.check('network', 'Using the /network route');

  route(app, {
    method: 'GET',
    url: '/network',
    summary: 'The network of instances this one knows: its own name (`self`), the remotes, the shards and the leader',
    tags: ['Network'],
    action: 'network.get',
    status: 200,
    responseSchema: networkSchema,
    errors: ['feature_not_enabled'],
    handler: async () => {
      check();
      return ctx.engine.network.get();
    },
  });

  route(app, {
    method: 'PATCH',
    url: '/network',
    summary:
      'Change the network: `self`, `remotes` (`{url, searchApiKey, writeApiKey}` each; `null` removes one), `shards` (`{remotes, addRemotes, removeRemotes}`), `leader`. Applied at once (200) without a leader; with one, by a `networkTopologyChange` task (202)',
    tags: ['Network'],
    action: 'network.update',
    body: networkBody,
    query: writeQuery,
    status: 200,
    responseSchema: networkSchema,
    errors: [
      'feature_not_enabled',
      'bad_request',
      'invalid_network_self',
      'invalid_network_leader',
      'invalid_network_remotes',
      'invalid_network_shards',
      'invalid_network_url',
      'invalid_network_search_api_key',
      'invalid_network_write_api_key',
      'missing_network_url',
      'not_leader',
      'unexpected_network_previous_remotes',
      'unprocessed_network_task',
    ],
    handler: async (req, reply, { body, query }) => {
      check();
      for (const reserved of ['previousRemotes', 'previousShards'] as const) {
        if (body[reserved] !== undefined) {
          throw new ApiError('unexpected_network_previous_remotes', `The reserved field \`${reserved}\` was used. Remove this field.`);
        }
      }
      const { previousRemotes: _r, previousShards: _s, ...patch } = body as NetworkPatch & { previousRemotes?: unknown; previousShards?: unknown };
      const before = ctx.engine.network.get();
      const origin = req.headers[ORIGIN_REMOTE_HEADER];
      const sender = typeof origin === 'string' ? decodeURIComponent(origin) : null;
      const fromLeader = sender !== null && sender === (patch.leader === undefined ? before.leader : patch.leader);
      // Decided here, once, and carried in the log entry. A change the leader sent on keeps the
      // leader's version, so that every remote names it alike (moved documents are checked by it).
      const sent = req.headers[ORIGIN_NETWORK_VERSION_HEADER];
      const version = fromLeader && typeof sent === 'string' && UUID.test(sent) ? sent.toLowerCase() : uuidv7();
      const merged = mergeNetwork(before, patch, version, fromLeader);
      if (merged.leader === null) {
        const op: NetworkOp = { op: 'patch', patch, version };
        return ctx.configure(NetworkStore.COMMAND, op);
      }
      // With a leader, the change is a task, ordered with the writes around it; one at a time.
      const pending = [...ctx.queue.tasks.values()].find((t) => t.type === 'networkTopologyChange' && (t.status === 'enqueued' || t.status === 'processing'));
      if (pending) {
        throw new ApiError(
          'unprocessed_network_task',
          `A network topology change is already waiting to be processed (task ${pending.uid}). Cancel it or let it finish before sending another network change.`,
        );
      }
      const summary = await enqueueTask(ctx, {
        type: 'networkTopologyChange',
        indexUid: null,
        details: { movedDocuments: 0, message: 'Waiting for tasks enqueued before the network change to finish processing' },
        params: { op: 'network', network: merged },
      }, query);
      // The leader sends the change on to the other remotes (each keeps its own `self`).
      if (sender === null && merged.self === merged.leader) {
        const remoteTasks = await forwardNetwork(before, merged, summary['taskUid'] as number);
        const taskNetwork = { remoteTasks, networkVersion: merged.version };
        await ctx.recordTaskNetwork(summary['taskUid'] as number, taskNetwork);
        return reply.status(202).send({ ...summary, network: taskNetwork });
      }
      const from = sender === null ? null : originOf(req, merged);
      if (from !== null) await ctx.recordTaskNetwork(summary['taskUid'] as number, from);
      return reply.status(202).send(summary);
    },
  });
}
