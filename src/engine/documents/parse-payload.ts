import { ApiError } from '../../errors/api-error.js';
import type { Doc } from './primary-key.js';
import { parseCsv } from './parse-csv.js';
import { depthMessage, jsonDepthExceeded } from '../../util/json-depth.js';

export type PayloadFormat = 'json' | 'ndjson' | 'csv';

const utf8 = new TextDecoder('utf-8', { fatal: true });

function malformed(format: PayloadFormat, detail: string): ApiError {
  let d = detail;
  if (d.length > 300) d = d.slice(0, 150) + '…' + d.slice(-150);
  return new ApiError('malformed_payload', `The \`${format}\` payload provided is malformed. \`${d}\`.`);
}

function decode(format: PayloadFormat, body: Buffer): string {
  try {
    return utf8.decode(body);
  } catch {
    throw malformed(format, 'The payload is not valid UTF-8');
  }
}

function parseJsonText(format: PayloadFormat, text: string, where = ''): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw malformed(format, `${where}${(e as Error).message}`);
  }
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a sequence';
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  return `${typeof v} \`${JSON.stringify(v)}\``;
}

function asDocument(format: PayloadFormat, v: unknown): Doc {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) {
    throw malformed(format, `Couldn't serialize document value: invalid type: ${describe(v)}, expected a map`);
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
  const tooDeep = jsonDepthExceeded(text, undefined, format === 'ndjson');
  if (tooDeep) throw malformed(format, depthMessage(tooDeep));
  if (format === 'json') {
    const v = parseJsonText(format, text);
    if (Array.isArray(v)) return v.map((d) => asDocument(format, d));
    return [asDocument(format, v)];
  }
  const docs: Doc[] = [];
  let line = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    line++;
    const raw = text.slice(start, end).trim();
    if (raw !== '') docs.push(asDocument(format, parseJsonText(format, raw, `line ${line}: `)));
    start = end + 1;
  }
  return docs;
}
