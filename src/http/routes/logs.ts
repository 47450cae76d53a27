import { PassThrough } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { LogTargetError, LogTargets, type LogListener } from '../../util/log-hub.js';
import type { AppContext } from '../context.js';
import { route, sendOpenStream } from '../route.js';
import { s, valueError, type Ctx } from '../schema.js';

const targetSchema = s.custom(
  (v, ctx: Ctx) => {
    const text = s.string().parse(v, ctx);
    try {
      return LogTargets.parse(text);
    } catch (e) {
      if (e instanceof LogTargetError) throw valueError(ctx, e.message);
      throw e;
    }
  },
  { type: 'string', description: 'Comma-separated `target=level` directives or a bare level, e.g. `info` or `trine::http=debug,trine=warn`' },
);

const streamBody = s.object({
  target: s.field(targetSchema, 'bad_request'),
  mode: s.field(s.enum(['human', 'json', 'profile'] as const), 'bad_request'),
  profileMemory: s.field(s.boolean(), 'bad_request'),
});

const stderrBody = s.object({ target: s.field(targetSchema, 'bad_request') });

const MODE_NAMES = { human: 'Human', json: 'Json', profile: 'Profile' } as const;

export function logRoutes(app: FastifyInstance, ctx: AppContext): void {
  const check = () => ctx.features.check('logsRoute', 'Modifying logs through the `/logs/*` routes');

  route(app, {
    method: 'POST',
    url: '/logs/stream',
    summary: "Stream this node's log lines as they are written, filtered by `target`, as text (`human`) or JSON lines (`json`); one listener at a time",
    tags: ['Logs'],
    action: 'metrics.get',
    body: streamBody,
    status: 200,
    responseMediaType: 'text/plain',
    streaming: true,
    errors: ['feature_not_enabled', 'bad_request'],
    handler: async (_req, reply, { body }) => {
      const mode = body.mode ?? 'human';
      if (body.profileMemory && mode !== 'profile') {
        throw valueError({ path: '', code: 'bad_request', mode: 'json' }, `\`profile_memory\` can only be used while profiling code and is not compatible with the ${MODE_NAMES[mode]} mode.`);
      }
      check();
      if (mode === 'profile') {
        throw new ApiError('bad_request', 'The `profile` mode (a Firefox profiler trace) is not available in Trine: use `human` or `json`.');
      }
      const out = new PassThrough();
      const listener: LogListener = {
        targets: body.target ?? LogTargets.level('info'),
        mode,
        write: (text) => {
          if (!out.writableEnded) out.write(text);
        },
        end: () => out.end(),
      };
      if (!ctx.logs.attach(listener)) throw new ApiError('bad_request', 'The `/logs/stream` route is currently in use by someone else.');
      // Ended by `DELETE /logs/stream` (which calls `end`), or by the client going away.
      reply.raw.once('close', () => ctx.logs.detach(listener));
      return sendOpenStream(reply, out, mode === 'json' ? 'application/x-ndjson' : 'text/plain; charset=utf-8');
    },
  });

  route(app, {
    method: 'DELETE',
    url: '/logs/stream',
    summary: 'End the log stream, whoever holds it',
    tags: ['Logs'],
    action: 'metrics.get',
    status: 204,
    errors: ['feature_not_enabled'],
    handler: async (_req, reply) => {
      check();
      ctx.logs.detach();
      return reply.status(204).send();
    },
  });

  route(app, {
    method: 'POST',
    url: '/logs/stderr',
    summary: "Change which of this node's log lines go to its standard output (`target`, as for the stream)",
    tags: ['Logs'],
    action: 'metrics.get',
    body: stderrBody,
    status: 204,
    errors: ['feature_not_enabled', 'bad_request'],
    handler: async (_req, reply, { body }) => {
      check();
      ctx.logs.setConsole(body.target ?? LogTargets.level('info'));
      return reply.status(204).send();
    },
  });
}
