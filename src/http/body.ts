import { brotliDecompressSync, gunzipSync, inflateSync, type ZlibOptions } from 'node:zlib';
import type { FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { formatByteSize } from '../config/byte-size.js';
import { depthMessage, jsonShape } from '../util/json-depth.js';
import { jsonSyntaxError } from '../util/json-syntax.js';
import { parseJson } from '../util/exact-json.js';

export type BodyFormat = 'json' | 'ndjson' | 'csv';

const MIME: Record<BodyFormat, string> = {
  json: 'application/json',
  ndjson: 'application/x-ndjson',
  csv: 'text/csv',
};

export function payloadTooLarge(limit: number): ApiError {
  return new ApiError(
    'payload_too_large',
    `The provided payload reached the size limit. The maximum accepted payload size is ${formatByteSize(limit)}.`,
  );
}

function acceptedList(accept: readonly BodyFormat[]): string {
  return accept.map((f) => `\`${MIME[f]}\``).join(', ');
}

/** The format named by the Content-Type header, checked against what the route accepts. */
export function bodyFormat(req: FastifyRequest, accept: readonly BodyFormat[]): BodyFormat {
  const header = req.headers['content-type'];
  if (header === undefined || header.trim() === '') {
    throw new ApiError(
      'missing_content_type',
      `A Content-Type header is missing. Accepted values for the Content-Type header are: ${acceptedList(accept)}`,
    );
  }
  const essence = header.split(';')[0]!.trim().toLowerCase();
  const format = accept.find((f) => MIME[f] === essence);
  if (!format) {
    throw new ApiError(
      'invalid_content_type',
      `The Content-Type \`${header}\` is invalid. Accepted values for the Content-Type header are: ${acceptedList(accept)}`,
    );
  }
  return format;
}

/** The request body, decompressed per Content-Encoding and held to the payload size limit. */
export function rawBody(req: FastifyRequest, limit: number): Buffer {
  return decodedBody(bodyBytes(req), contentEncoding(req), limit);
}

/** The request body as received (still compressed, if it was). */
export function bodyBytes(req: FastifyRequest): Buffer {
  return Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
}

export function contentEncoding(req: FastifyRequest): string {
  return String(req.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
}

/** A body decompressed per its Content-Encoding and held to `limit` (no request needed: worker threads call it too). */
export function decodedBody(buf: Buffer, encoding: string, limit: number): Buffer {
  // Fastify holds every body to the largest limit; a route may accept less (JSON bodies).
  if (buf.length > limit) throw payloadTooLarge(limit);
  if (encoding === 'identity' || encoding === '' || buf.length === 0) return buf;
  const opts: ZlibOptions = { maxOutputLength: limit + 1 };
  let out: Buffer;
  try {
    if (encoding === 'gzip' || encoding === 'x-gzip') out = gunzipSync(buf, opts);
    else if (encoding === 'deflate') out = inflateSync(buf, opts);
    else if (encoding === 'br') out = brotliDecompressSync(buf, { maxOutputLength: limit + 1 });
    else {
      throw new ApiError(
        'unsupported_media_type',
        `The Content-Encoding \`${encoding}\` is not supported. Supported encodings are \`gzip\`, \`deflate\`, \`br\` and \`identity\`.`,
      );
    }
  } catch (e) {
    if (e instanceof ApiError) throw e;
    if ((e as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw payloadTooLarge(limit);
    throw new ApiError(
      'malformed_payload',
      `The payload could not be decompressed as \`${encoding}\`: ${(e as Error).message}.`,
    );
  }
  if (out.length > limit) throw payloadTooLarge(limit);
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A JSON body: `application/json`, present, well-formed. */
export function jsonBody(req: FastifyRequest, limit: number): unknown {
  return jsonBodyAndText(req, limit).value;
}

/**
 * A JSON body and the text it was parsed from (for errors that point into it). With
 * `exactIntegers`, integers past 2^53 read as bigints (see exact-json.ts).
 */
export function jsonBodyAndText(req: FastifyRequest, limit: number, exactIntegers = false): { value: unknown; text: string } {
  bodyFormat(req, ['json']);
  const buf = rawBody(req, limit);
  let text: string;
  try {
    text = utf8.decode(buf);
  } catch {
    throw new ApiError('malformed_payload', 'The json payload provided is malformed. `The payload is not valid UTF-8`.');
  }
  if (text.trim() === '') throw new ApiError('missing_payload', 'A json payload is missing.');
  const { tooDeep, longNumbers } = jsonShape(text);
  if (tooDeep) throw new ApiError('malformed_payload', `The json payload provided is malformed. \`${depthMessage(tooDeep)}\`.`);
  try {
    return { value: exactIntegers && longNumbers ? parseJson(text) : JSON.parse(text), text };
  } catch (e) {
    throw new ApiError('malformed_payload', `The json payload provided is malformed. \`${jsonSyntaxError(text) ?? (e as Error).message}\`.`);
  }
}
