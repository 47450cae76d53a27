// What a documents route makes of its body before enqueueing: decompressed, parsed (a malformed
// payload is refused with a 400 before anything is written) and encoded as the task's payload.

import { encodePayload } from '../../engine/documents/document-json.js';
import { parseDocumentsPayload, type PayloadFormat } from '../../engine/documents/parse-payload.js';
import { decodedBody } from '../body.js';

export interface PayloadRequest {
  format: PayloadFormat;
  /** The body as received, still compressed if it was. */
  body: Uint8Array;
  encoding: string;
  limit: number;
  csvDelimiter: string;
}

export interface PreparedPayload {
  documents: number;
  bytes: Buffer;
  exactIntegers: boolean;
}

export function preparePayload(r: PayloadRequest): PreparedPayload {
  const body = Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength);
  const docs = parseDocumentsPayload(r.format, decodedBody(body, r.encoding, r.limit), r.csvDelimiter);
  const { bytes, exactIntegers } = encodePayload(docs);
  return { documents: docs.length, bytes, exactIntegers };
}

/** Bytes that own their whole memory, so that they can be handed to another thread without a copy. */
export function ownMemory(b: Uint8Array): Uint8Array {
  return b.byteOffset === 0 && b.byteLength === b.buffer.byteLength && b.buffer instanceof ArrayBuffer ? b : new Uint8Array(b);
}
