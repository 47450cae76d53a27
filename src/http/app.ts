import Fastify, { LogController, type FastifyInstance, type FastifyError } from 'fastify';
import compress from '@fastify/compress';
import { authHook, logSafeRequest } from '../auth/request-auth.js';
import { ApiError, errorBody } from '../errors/api-error.js';
import { instrumentHttp } from '../metrics/sources.js';
import { runWithLogger } from '../util/log-context.js';
import { uuidv7 } from '../util/uuid.js';
import { payloadTooLarge } from './body.js';
import type { AppContext } from './context.js';
import { registerRoutes } from './routes/index.js';

const PINO_LEVEL: Record<string, string> = {
  off: 'silent',
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
};

/** Maps Fastify's own errors (raised before a handler runs) to the error table. */
function fromFastifyError(err: FastifyError, limit: number, contentType: string | undefined): ApiError | null {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return contentType === undefined || contentType.trim() === ''
        ? new ApiError('missing_content_type', 'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`')
        : new ApiError('invalid_content_type', `The Content-Type \`${contentType}\` is invalid. Accepted values for the Content-Type header are: \`application/json\``);
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return payloadTooLarge(limit);
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError('bad_request', 'The Content-Length header does not match the body.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError('missing_payload', 'A json payload is missing.');
    case 'FST_ERR_BAD_URL':
      return new ApiError('bad_request', 'The request URL is malformed.');
    default:
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new ApiError('bad_request', err.message);
      return null;
  }
}

export interface AppOptions {
  /** Where log lines go instead of standard output (tests read them). */
  logStream?: { write(line: string): void };
}

export async function buildApp(ctx: AppContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  const limit = ctx.options.httpPayloadSizeLimit;
  const app = Fastify({
    logger: {
      level: PINO_LEVEL[ctx.options.logLevel] ?? 'info',
      ...(opts.logStream ? { stream: opts.logStream } : {}),
      // Keys and tokens never reach the logs: not in a logged URL, nor in headers if any are logged.
      serializers: { req: logSafeRequest },
      redact: { paths: ['req.headers.authorization', 'headers.authorization'], censor: '[redacted]' },
    },
    bodyLimit: limit,
    genReqId: () => uuidv7(),
    logController: new LogController({
      requestIdLogLabel: 'requestId',
      disableRequestLogging: ctx.options.logLevel !== 'debug' && ctx.options.logLevel !== 'trace',
    }),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
  });

  // Code below the routes (replication, engine) logs with the request's child logger, so every
  // line of a request carries its requestId. Body parsing runs in the socket's async context, so
  // the logger is entered again before validation, as @fastify/request-context does.
  app.addHook('onRequest', (req, _reply, done) => runWithLogger(req.log, done));
  app.addHook('preValidation', (req, _reply, done) => runWithLogger(req.log, done));
  instrumentHttp(app, ctx.metrics);

  // Bodies are read raw; each route decides which formats it accepts and parses them itself,
  // so that every failure carries the reference's error code.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  // Responses only: request bodies are decompressed by `body.ts`, which holds them to the payload limit.
  await app.register(compress, { globalDecompression: false, encodings: ['br', 'gzip', 'deflate'], threshold: 1024 });

  // CORS as the reference does it: any origin, requested headers echoed, preflight unauthenticated.
  app.addHook('onRequest', async (req, reply) => {
    reply.header('Access-Control-Allow-Origin', '*');
    reply.header('Access-Control-Expose-Headers', '*');
    if (req.method === 'OPTIONS') {
      const reqHeaders = req.headers['access-control-request-headers'];
      reply.header('Access-Control-Allow-Methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
      reply.header('Access-Control-Allow-Headers', reqHeaders ?? '*');
      reply.header('Access-Control-Max-Age', '86400');
      reply.header('Vary', 'Origin, Access-Control-Request-Headers');
      return reply.status(204).send();
    }
    return undefined;
  });

  // Every route but `/` and `/health` checks the bearer token against the action it declares,
  // before its body is read.
  app.addHook('onRequest', authHook(ctx.keys));

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const api = err instanceof ApiError ? err : fromFastifyError(err, limit, req.headers['content-type']);
    if (api) {
      if (api.code === 'too_many_search_requests' || api.status === 503) reply.header('Retry-After', '10');
      return reply.status(api.status).send(api.toJSON());
    }
    req.log.error({ err }, 'unexpected error');
    return reply.status(500).send(errorBody('internal', err.message));
  });

  // The reference answers unknown routes with an empty 404.
  app.setNotFoundHandler((_req, reply) => reply.status(404).send());

  await registerRoutes(app, ctx);
  return app;
}
