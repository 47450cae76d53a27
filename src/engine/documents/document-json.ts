// How a document is stored: its JSON text, big integers written as their digits, so that what
// was sent comes back to the digit (see exact-json.ts). Documents stored before big integers
// were kept read the same: they are plain JSON.

import { parseJson, stringifyJson } from '../../util/exact-json.js';
import type { Doc } from './primary-key.js';

export function encodeDoc(doc: Doc): string {
  return stringifyJson(doc);
}

export function decodeDoc(bytes: Buffer): Doc {
  return parseJson(bytes.toString()) as Doc;
}

/** A task's payload as it travels in the log and waits for its batch: the documents as one JSON array. */
export function encodePayload(docs: readonly Doc[]): Buffer {
  return Buffer.from(stringifyJson(docs));
}

/** Parsing is deterministic: every node reads the same documents from the same bytes. */
export function decodePayload(bytes: Buffer): Doc[] {
  return parseJson(bytes.toString()) as Doc[];
}
