import { ApiError } from '../../errors/api-error.js';
import { stringifyJson } from '../../util/exact-json.js';

export type Doc = Record<string, unknown>;

/** The first document's top-level keys whose lowercase name ends with `id`; exactly one must match. */
export function inferPrimaryKey(first: Doc | undefined): string {
  const candidates = first ? Object.keys(first).filter((k) => k.toLowerCase().endsWith('id')).sort() : [];
  if (candidates.length === 1) return candidates[0]!;
  // A field named exactly `id` wins over the others ending with it (`product_id`, `uid`).
  if (candidates.includes('id')) return 'id';
  if (candidates.length === 0) {
    throw new ApiError(
      'index_primary_key_no_candidate_found',
      'The primary key inference failed as the engine did not find any field ending with `id` in its name. Please specify the primary key manually using the `primaryKey` query parameter.',
    );
  }
  throw new ApiError(
    'index_primary_key_multiple_candidates_found',
    `The primary key inference failed as the engine found ${candidates.length} fields ending with \`id\` in their names: '${candidates[0]}' and '${candidates[1]}'. Please specify the primary key manually using the \`primaryKey\` query parameter.`,
  );
}

function invalidId(value: unknown): ApiError {
  const shown = typeof value === 'string' ? `"${value}"` : stringifyJson(value);
  return new ApiError(
    'invalid_document_id',
    `Document identifier \`${shown}\` is invalid. A document identifier can be of type integer or string, only composed of alphanumeric characters (a-z A-Z 0-9), hyphens (-) and underscores (_), and can not be more than 511 bytes.`,
  );
}

/**
 * Normalizes a document id value to its string form, or throws `invalid_document_id`. An
 * integer id is its decimal digits: up to the u64 maximum and down to the i64 minimum, those
 * past a double's exact range arrive as bigints (see exact-json.ts) and keep every digit.
 */
export function normalizeDocumentId(value: unknown): string {
  if (typeof value === 'number') {
    // Past 2^53 a number is a double the parser rounded (beyond u64 and i64): not an integer id.
    if (!Number.isSafeInteger(value)) throw invalidId(value);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'string') {
    if (value.length === 0 || Buffer.byteLength(value) > 511 || !/^[A-Za-z0-9_-]+$/.test(value)) throw invalidId(value);
    return value;
  }
  throw invalidId(value);
}

/** Values found at a dotted path, descending into objects (and arrays of objects). */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  const out: unknown[] = [];
  const walk = (v: unknown, rest: string): void => {
    if (rest === '') {
      out.push(v);
      return;
    }
    if (Array.isArray(v)) {
      for (const item of v) walk(item, rest);
      return;
    }
    if (v === null || typeof v !== 'object') return;
    // Keys may themselves contain dots, so match keys against the path rather than splitting it.
    for (const [key, child] of Object.entries(v as Doc)) {
      if (rest === key) walk(child, '');
      else if (rest.startsWith(key + '.')) walk(child, rest.slice(key.length + 1));
    }
  };
  walk(doc, path);
  return out;
}

/** The document's id under `primaryKey` (dot notation allowed). */
export function extractDocumentId(doc: Doc, primaryKey: string): string {
  const values = primaryKey.includes('.') ? valuesAtPath(doc, primaryKey) : primaryKey in doc ? [doc[primaryKey]] : [];
  if (values.length === 0) {
    let shown = stringifyJson(doc);
    if (shown.length > 200) shown = shown.slice(0, 100) + '…' + shown.slice(-100);
    throw new ApiError('missing_document_id', `Document doesn't have a \`${primaryKey}\` attribute: \`${shown}\`.`);
  }
  if (values.length > 1) {
    throw new ApiError(
      'invalid_document_id',
      `Too many document ids were found at \`${primaryKey}\`: the primary key must designate a single value.`,
    );
  }
  return normalizeDocumentId(values[0]);
}
