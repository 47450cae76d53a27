import { ApiError } from '../../errors/api-error.js';
import type { Doc } from './primary-key.js';
import { parseCsv } from './parse-csv.js';
import { depthMessage, jsonShape } from '../../util/json-depth.js';
import { jsonSyntaxError } from '../../util/json-syntax.js';
import { parseJson } from '../../util/exact-json.js';

export type PayloadFormat = 'json' | 'ndjson' | 'csv';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function malformed(format: PayloadFormat, detail: string): ApiError {
  return new ApiError('malformed_payload', `The \`${format}\` payload provided is malformed. \`${detail}\`.`);
}

/** A JSON or NDJSON payload the parser refused, as the reference words it. */
function undeserializable(format: PayloadFormat, detail: string): ApiError {
  return malformed(format, `Couldn't serialize document value: ${detail}`);
}

function decode(format: PayloadFormat, body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw malformed(format, 'The payload is not valid UTF-8');
  }
}

/**
 * NDJSON positions count from each line, as the reference's parser reads one line at a time.
 * Integers of the u64/i64 range that a double cannot hold come out as bigints (see exact-json.ts);
 * `exact` false says the text surely holds none (see `jsonShape`).
 */
function parseJsonText(format: PayloadFormat, text: string, exact = true): unknown {
  let value: unknown;
  try {
    value = exact ? parseJson(text) : JSON.parse(text);
  } catch (e) {
    throw undeserializable(format, jsonSyntaxError(text) ?? (e as Error).message);
  }
  // JSON.parse reads a number beyond a double's range as Infinity (stored as null); the
  // reference refuses it. Only a long exponent or a 309-digit number can be one.
  if (MAYBE_OUT_OF_RANGE.test(text)) {
    const error = jsonSyntaxError(text);
    if (error !== null) throw undeserializable(format, error);
  }
  return value;
}

const MAYBE_OUT_OF_RANGE = /[eE][+]?\d{3}|\d{309}/;

function asDocument(format: PayloadFormat, v: unknown): Doc {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw undeserializable(format, 'data are neither an object nor a list of objects');
  }
  return v as Doc;
}

/**
 * Parses a documents payload at enqueue time, so a malformed one is refused with a 400 before
 * anything is written. JSON takes an array of objects or one object; NDJSON an object a line.
 */
export function parseDocumentsPayload(format: PayloadFormat, body: Buffer, csvDelimiter = ','): Doc[] {
  const text = decode(format, body);
  // An empty body is a mistake, not an empty list (`[]` is how to send no document).
  if (text.trim() === '') throw new ApiError('missing_payload', `A ${format} payload is missing.`);
  if (format === 'csv') {
    try {
      return parseCsv(text, csvDelimiter);
    } catch (e) {
      throw malformed('csv', (e as Error).message);
    }
  }
  // Everything downstream (flattening, formatting, storing) walks documents recursively.
  const { tooDeep, longNumbers: exact } = jsonShape(text, undefined, format === 'ndjson');
  if (tooDeep) throw undeserializable(format, depthMessage(tooDeep));
  if (format === 'json') {
    const v = parseJsonText(format, text, exact);
    if (Array.isArray(v)) return v.map((d) => asDocument(format, d));
    return [asDocument(format, v)];
  }
  const docs: Doc[] = [];
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    if (line.trim() !== '') docs.push(asDocument(format, parseJsonText(format, line, exact)));
    start = end + 1;
  }
  return docs;
}
