// How a document is stored: its JSON text, big integers written as their digits, so that what
// was sent comes back to the digit (see exact-json.ts). Documents stored before big integers
// were kept read the same: they are plain JSON.

import { parseJson, stringifyJsonNoting } from '../../util/exact-json.js';
import type { Doc } from './primary-key.js';

/** The stored text of a document, and whether it holds big integers (its index notes it: `IndexMeta.exactIntegers`). */
export function encodeDoc(doc: Doc): { text: string; exactIntegers: boolean } {
  const { text, bigIntegers } = stringifyJsonNoting(doc);
  return { text, exactIntegers: bigIntegers };
}

/**
 * A stored document. `exactIntegers` false (an index that never stored a big integer) reads
 * it as plain JSON, sparing every read the search for long numbers.
 */
export function decodeDoc(bytes: Buffer, exactIntegers: boolean): Doc {
  const text = bytes.toString();
  return (exactIntegers ? parseJson(text) : JSON.parse(text)) as Doc;
}

/**
 * A task's payload as it travels in the log and waits for its batch: the documents as one JSON
 * array, and whether it holds big integers (the task says so, see `decodePayload`).
 */
export function encodePayload(docs: readonly Doc[]): { bytes: Buffer; exactIntegers: boolean } {
  const { text, bigIntegers } = stringifyJsonNoting(docs);
  return { bytes: Buffer.from(text), exactIntegers: bigIntegers };
}

/**
 * The documents of a payload. Parsing is deterministic: every node reads the same documents
 * from the same bytes and the same task. A task that does not say its payload holds big
 * integers is read as plain JSON: that spares the search for them, and a payload logged before
 * they were kept (its long numbers rounded) reads as it did then, on every node.
 */
export function decodePayload(bytes: Buffer, exactIntegers: boolean): Doc[] {
  const text = bytes.toString();
  return (exactIntegers ? parseJson(text) : JSON.parse(text)) as Doc[];
}

/** Whether a task's payload is to be read with its big integers (see `decodePayload`). */
export function payloadHasExactIntegers(params: { op: string; exactIntegers?: boolean }): boolean {
  return params.op === 'documents' && params.exactIntegers === true;
}
