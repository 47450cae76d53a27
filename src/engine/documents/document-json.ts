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
 * array, one document a line (JSON text holds no raw newline, so a line is exactly one document:
 * `decodePayloadInTurns` reads them one by one), and whether it holds big integers (the task
 * says so, see `decodePayload`).
 */
export function encodePayload(docs: readonly Doc[]): { bytes: Buffer; exactIntegers: boolean } {
  const lines = new Array<string>(docs.length);
  let exactIntegers = false;
  for (let i = 0; i < docs.length; i++) {
    const { text, bigIntegers } = stringifyJsonNoting(docs[i]);
    lines[i] = text;
    if (bigIntegers) exactIntegers = true;
  }
  return { bytes: Buffer.from(lines.length ? `[\n${lines.join(',\n')}\n]` : '[]'), exactIntegers };
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

/**
 * `decodePayload` a document at a time, calling `turn` now and then: a payload of 50,000
 * documents takes the better part of a second to parse, which the thread serving searches
 * must not spend in one go. A payload logged before documents went one a line is parsed whole.
 */
export async function decodePayloadInTurns(bytes: Buffer, exactIntegers: boolean, turn: () => Promise<void>): Promise<Doc[]> {
  if (bytes.length < 2 || bytes[0] !== 0x5b /* [ */ || bytes[1] !== 0x0a) return decodePayload(bytes, exactIntegers);
  const parse = (exactIntegers ? parseJson : JSON.parse) as (text: string) => Doc;
  const docs: Doc[] = [];
  // Between "[\n" and "\n]": documents, each but the last followed by ",\n".
  for (let pos = 2; ; ) {
    const end = bytes.indexOf(0x0a, pos);
    if (end < 0) break;
    docs.push(parse(bytes.toString('utf8', pos, bytes[end - 1] === 0x2c /* , */ ? end - 1 : end)));
    pos = end + 1;
    if ((docs.length & 127) === 0) await turn();
  }
  return docs;
}

/** Whether a task's payload is to be read with its big integers (see `decodePayload`). */
export function payloadHasExactIntegers(params: { op: string; exactIntegers?: boolean }): boolean {
  return params.op === 'documents' && params.exactIntegers === true;
}
