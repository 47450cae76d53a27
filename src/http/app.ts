import { maxHeaderSize, type IncomingMessage, type ServerResponse } from 'node:http';
import { constants as zlibConstants } from 'node:zlib';
import type { Socket } from 'node:net';
import Fastify, { LogController, type FastifyInstance, type FastifyError } from 'fastify';
import compress from '@fastify/compress';
import { authHook, logSafeRequest } from '../auth/request-auth.js';
import { ApiError, errorBody } from '../errors/api-error.js';
import { instrumentHttp } from '../metrics/sources.js';
import { runWithLogger } from '../util/request-context.js';
import { uuidv7 } from '../util/uuid.js';
import { clientErrorAnswer, fromFastifyError, sendApiError, unsupportedTransferEncoding, writeSocketError } from './framework-errors.js';
import type { AppContext } from './context.js';
import { registerRoutes } from './routes/index.js';
import { writeProxyHooks } from '../network/write-proxy.js';
import { httpsServerOptions, keepTlsSessions, refuseUnverifiedClientCertificates } from './https.js';
import type { Server as HttpsServer } from 'node:https';
import type { SecureServerOptions } from 'node:http2';
import { stringifyJson } from '../util/exact-json.js';
import { readRawBody } from './raw-body.js';

/** Largest response compressed synchronously (about 1 ms of gzip); larger ones stream. */
const SYNC_COMPRESS_BYTES = 128 * 1024;
/**
 * Compression levels for answers. A page of ten long hits (15 KiB of JSON) takes 0.32 ms at
 * gzip's default level 6 and 0.19 ms at level 2, for 5% more bytes; brotli 0.31 ms at the
 * plugin's quality 4 and 0.18 ms at 3, for 2% more: a search answered in 2-3 ms spends a
 * tenth of it compressing at the defaults, and on a network of 100 Mbit/s the extra bytes
 * cost less than the time saved.
 */
const GZIP_LEVEL = 2;
const BROTLI_QUALITY = 3;

const PINO_LEVEL: Record<string, string> = {
  off: 'silent',
  error: 'error',
  warn: 'warn',
  info: 'info',
  debug: 'debug',
  trace: 'trace',
};

export interface AppOptions {
  /** Where log lines go instead of standard output (tests read them). */
  logStream?: { write(line: string): void };
  /** TLS settings already read from `--ssl-*` files (read before anything else starts). */
  https?: SecureServerOptions;
}

export async function buildApp(ctx: AppContext, opts: AppOptions = {}): Promise<FastifyInstance> {
  const limit = ctx.options.httpPayloadSizeLimit;
  const ssl = ctx.options.ssl;
  const https = opts.https ?? (ssl ? httpsServerOptions(ssl) : null);
  const app = Fastify({
    ...(https ? { https } : {}),
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
    // A path segment is bounded by the header size limit; the routes validate it with their own
    // errors (an index uid longer than 512 bytes is `invalid_index_uid`).
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: maxHeaderSize },
    // Errors before any route runs carry the same shape as the others (see framework-errors.ts).
    frameworkErrors: (err, req, reply) => {
      const api = fromFastifyError(err, limit, req) ?? new ApiError('bad_request', err.message);
      return sendApiError(reply, api);
    },
    clientErrorHandler: (err, socket) => {
      const api = clientErrorAnswer(err);
      if (api) writeSocketError(socket, api);
      else socket.destroy();
    },
  });
  if (ssl?.resumption) keepTlsSessions(app.server as unknown as HttpsServer);
  if (ssl?.authPath && !ssl.requireAuth) refuseUnverifiedClientCertificates(app.server as unknown as HttpsServer);
  // Node answers an `Expect` other than `100-continue` with a bare 417 unless asked to decide.
  app.server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) => {
    const api = new ApiError('expectation_failed', `The Expect header \`${String(req.headers.expect).slice(0, 200)}\` is not supported: only \`100-continue\` is.`);
    res.writeHead(api.status, { 'Content-Type': 'application/json', 'Access-Control-Allow-Origin': '*', Connection: 'close' });
    res.end(JSON.stringify(api.toJSON()));
  });
  // A CONNECT has no route here: answered like any unknown route, instead of a silent close.
  app.server.on('connect', (_req, socket: Socket) => {
    socket.end('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n');
  });

  // Code below the routes (replication, engine) logs with the request's child logger, so every
  // line of a request carries its requestId. Body parsing runs in the socket's async context, so
  // the logger is entered again before validation, as @fastify/request-context does.
  app.addHook('onRequest', (req, _reply, done) => runWithLogger(req.log, done));
  app.addHook('onRequest', async (req) => {
    const api = unsupportedTransferEncoding(req);
    if (api) throw api;
  });
  app.addHook('preValidation', (req, _reply, done) => runWithLogger(req.log, done));
  instrumentHttp(app, ctx.metrics);
  // Before compression, which would turn the task summary it extends into a stream.
  writeProxyHooks(app, {
    network: () => ctx.engine.network.get(),
    enabled: () => ctx.features.isEnabled('network'),
    record: (uid, network) => ctx.recordTaskNetwork(uid, network),
    log: app.log,
  });

  // Bodies are read raw; each route decides which formats it accepts and parses them itself,
  // so that every failure carries the reference's error code.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', readRawBody);

  // Documents may hold integers past 2^53 (bigints, see exact-json.ts): they go out as the digits received.
  app.setReplySerializer((payload) => stringifyJson(payload));

  // Responses only: request bodies are decompressed by `body.ts`, which holds them to the payload limit.
  // Answers up to SYNC_COMPRESS_BYTES are compressed in one call rather than through a stream
  // on the thread pool (the plugin's default stops at 8 KiB on two cores): ten long hits weigh
  // 10 to 60 KiB, and the stream's pipeline and thread hops cost them 1 to 2 ms each.
  await app.register(compress, {
    globalDecompression: false,
    encodings: ['br', 'gzip', 'deflate'],
    threshold: 1024,
    syncThreshold: SYNC_COMPRESS_BYTES,
    zlibOptions: { level: GZIP_LEVEL },
    brotliOptions: { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY } },
  });

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
  // before its body is read. A token this node does not know is looked at again once the node
  // reflects what the cluster acknowledged (a key just created through another node).
  app.addHook('onRequest', authHook(ctx.keys, () => ctx.reads.ready()));

  app.setErrorHandler((err: FastifyError | ApiError, req, reply) => {
    const api = err instanceof ApiError ? err : fromFastifyError(err, limit, req);
    if (api) return sendApiError(reply, api);
    req.log.error({ err }, 'unexpected error');
    return reply.status(500).send(errorBody('internal', err.message));
  });

  // The reference answers unknown routes with an empty 404.
  app.setNotFoundHandler((_req, reply) => reply.status(404).send());

  await registerRoutes(app, ctx);
  return app;
}
