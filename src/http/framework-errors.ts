// Errors raised before any route runs: by Fastify (bad URL encoding, body too large, a body
// that does not match its Content-Length) and by Node's HTTP parser (headers too large, bad
// framing, unknown methods, a request not received in time). They get the same error shape
// as every other answer, `{message, code, type, link}`, with a code from the one table.

import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { payloadTooLarge } from './body.js';

/** At most this much of a URL or header value is quoted back in an error message. */
const QUOTE_LIMIT = 200;

function quote(s: string): string {
  return s.length > QUOTE_LIMIT ? `${s.slice(0, QUOTE_LIMIT)}…` : s;
}

/** Maps one of Fastify's own errors to the error table; null for those that are not the client's fault. */
export function fromFastifyError(err: FastifyError, limit: number, req: FastifyRequest): ApiError | null {
  const contentType = req.headers['content-type'];
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
      return new ApiError(
        'bad_request',
        `The request path \`${quote(req.raw.url ?? '')}\` is malformed: a \`%\` must be followed by two hexadecimal digits, and the bytes they encode must be valid UTF-8.`,
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new ApiError('bad_request', `A segment of the request path \`${quote(req.raw.url ?? '')}\` is too long.`);
    default:
      if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new ApiError('bad_request', err.message);
      return null;
  }
}

/** Sends an error with the headers every answer carries (routes get CORS from a hook that has not run here). */
export function sendApiError(reply: FastifyReply, api: ApiError): FastifyReply {
  reply.header('Access-Control-Allow-Origin', '*');
  if (api.code === 'too_many_search_requests' || api.status === 503) reply.header('Retry-After', '10');
  return reply.status(api.status).send(api.toJSON());
}

/**
 * What to answer a request that Node's HTTP parser refused, or null when nobody is left to
 * answer (the client reset the connection).
 */
export function clientErrorAnswer(err: NodeJS.ErrnoException & { reason?: string }): ApiError | null {
  switch (err.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return new ApiError(
        'request_header_fields_too_large',
        `The request line and headers take more than ${maxHeaderSize} bytes. Send long parameters in a POST body (search, documents/fetch) and keep headers and cookies short.`,
      );
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ApiError('request_timeout', 'The request was not received in time: its headers or its body stopped arriving.');
    default: {
      const reason = (err.reason ?? err.message ?? '').replace(/\.$/, '');
      return new ApiError('bad_request', `The request is not valid HTTP/1.1${reason ? `: ${reason}` : ''}.`);
    }
  }
}

/** Writes an error straight to a socket that has no request object, then closes it. */
export function writeSocketError(socket: Socket, api: ApiError): void {
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (!socket.writable || pending?.headersSent) {
    socket.destroy();
    return;
  }
  const body = JSON.stringify(api.toJSON());
  socket.end(
    `HTTP/1.1 ${api.status} ${STATUS_CODES[api.status] ?? ''}\r\n` +
      'Content-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      'Access-Control-Allow-Origin: *\r\n' +
      'Connection: close\r\n\r\n' +
      body,
  );
}

/** A `Transfer-Encoding` other than plain `chunked`: Node would pass the coded bytes on as the body. */
export function unsupportedTransferEncoding(req: FastifyRequest): ApiError | null {
  const te = req.headers['transfer-encoding'];
  if (te === undefined || te.trim().toLowerCase() === 'chunked') return null;
  return new ApiError(
    'bad_request',
    `The Transfer-Encoding \`${quote(te)}\` is not supported: only \`chunked\` is. Send a compressed body with \`Content-Encoding\` (\`gzip\`, \`deflate\` or \`br\`) instead.`,
  );
}
