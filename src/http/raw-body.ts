// Request bodies read into one buffer as they arrive.
//
// Fastify's own reader keeps the chunks and copies them into one buffer at the end: for an
// import's 18 MB body, a copy onto fresh memory (the first write to a page costs milliseconds
// per MiB on some virtual machines) that held the serving thread 47-98 ms in profiles of the
// `scale` bench. With a Content-Length, the buffer is allocated up front and each chunk is
// copied in as it comes; without one (chunked transfer encoding), the chunks are joined at the
// end a MiB per event-loop turn. The errors are Fastify's, so that framework-errors.ts maps
// them as before.

import type { FastifyRequest } from 'fastify';
import fastify from 'fastify';
import type { Readable } from 'node:stream';
import { Yielder } from '../util/yielder.js';

const { FST_ERR_CTP_BODY_TOO_LARGE, FST_ERR_CTP_INVALID_CONTENT_LENGTH } = fastify.errorCodes;

/** Bytes joined between two looks at the clock. */
const JOIN_STEP = 1 << 20;

type Done = (err: Error | null, body?: Buffer) => void;

/** A content-type parser taking the raw stream: the body as one Buffer that owns its memory. */
export function readRawBody(req: FastifyRequest, payload: Readable & { receivedEncodedLength?: number }, done: Done): void {
  const limit = req.routeOptions.bodyLimit;
  const header = req.headers['content-length'];
  const declared = header === undefined ? NaN : Number(header);
  if (declared > limit) {
    done(new FST_ERR_CTP_BODY_TOO_LARGE());
    return;
  }
  // A Content-Length body read as sent (no stream decoding it on the way) is copied into place
  // as it comes. The memory is only touched as the bytes arrive.
  const into = payload === req.raw && Number.isInteger(declared) && declared > 0 ? Buffer.allocUnsafeSlow(declared) : null;
  const chunks: Buffer[] = [];
  let received = 0;
  let finished = false;

  const finish = (err: Error | null, body?: Buffer) => {
    if (finished) return;
    finished = true;
    payload.removeListener('data', onData);
    payload.removeListener('end', onEnd);
    payload.removeListener('error', onError);
    done(err, body);
  };

  function onData(chunk: Buffer | string): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const at = received;
    received += b.length;
    // What a stream decoding the body on its way lets through must stay under the limit too.
    if (received > limit || (payload.receivedEncodedLength ?? 0) > limit) {
      finish(new FST_ERR_CTP_BODY_TOO_LARGE());
      return;
    }
    if (into) {
      if (received > into.length) finish(new FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      else b.copy(into, at);
    } else {
      // A copy: the chunk may be a view over the socket's read buffer.
      chunks.push(Buffer.from(b));
    }
  }

  function onError(err: Error & { statusCode?: number }): void {
    if (!(typeof err.statusCode === 'number' && err.statusCode >= 400)) err.statusCode = 400;
    finish(err);
  }

  function onEnd(): void {
    if (!Number.isNaN(declared) && (payload.receivedEncodedLength || received) !== declared) {
      finish(new FST_ERR_CTP_INVALID_CONTENT_LENGTH());
      return;
    }
    if (into) finish(null, into);
    else if (chunks.length <= 1) finish(null, chunks[0] ?? Buffer.alloc(0));
    else join(chunks, received).then((body) => finish(null, body), (e: Error) => finish(e));
  }

  payload.on('data', onData);
  payload.on('end', onEnd);
  payload.on('error', onError);
  payload.resume();
}

async function join(chunks: Buffer[], length: number): Promise<Buffer> {
  const out = Buffer.allocUnsafeSlow(length);
  const turns = new Yielder();
  let at = 0;
  let sinceLook = 0;
  for (const c of chunks) {
    c.copy(out, at);
    at += c.length;
    sinceLook += c.length;
    if (sinceLook >= JOIN_STEP) {
      sinceLook = 0;
      await turns.maybe();
    }
  }
  return out;
}
