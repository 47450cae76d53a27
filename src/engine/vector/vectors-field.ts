// A document's `_vectors` field: per embedder, embeddings the user provides (an array, an
// array of arrays, or `{embeddings, regenerate}`), `null` to opt out, or nothing.

import { ApiError } from '../../errors/api-error.js';
import type { Doc } from '../documents/primary-key.js';
import { stringifyJson } from '../../util/exact-json.js';

export const MAX_VECTORS_PER_DOCUMENT = 256;

/** What a document says about one embedder. */
export type VectorsEntry =
  | { kind: 'absent' }
  /** `embeddings: null` when the object form gave none (only `regenerate`). */
  | { kind: 'given'; embeddings: Float32Array[] | null; regenerate: boolean };

function kind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (typeof v === 'number') return Number.isInteger(v) ? (v >= 0 ? 'a positive integer' : 'a negative integer') : 'a number';
  if (typeof v === 'bigint') return v >= 0n ? 'a positive integer' : 'a negative integer';
  if (typeof v === 'object') return 'an object';
  return `a ${typeof v}`;
}

function shown(v: unknown): string {
  return v === null ? '' : `: \`${stringifyJson(v)}\``;
}

function typeError(id: string, path: string, expected: string, found: unknown): ApiError {
  return badConfig(id, `Invalid value type at \`${path}\`: expected ${expected}, but found ${kind(found)}${shown(found)}`);
}

function badConfig(id: string, message: string): ApiError {
  return new ApiError('invalid_vectors_type', `Bad embedder configuration in the document with id: \`${id}\`. ${message}`);
}

/** A bigint is an integer a double cannot hold exactly (see exact-json.ts): a number all the same. */
const isNumber = (x: unknown): x is number | bigint => typeof x === 'number' || typeof x === 'bigint';

/** One vector or a list of them; an empty array is no vector. */
function parseEmbeddings(v: unknown, id: string, path: string): Float32Array[] {
  if (!Array.isArray(v)) throw typeError(id, path, 'null or an array', v);
  if (v.length === 0) return [];
  const first = v[0];
  if (isNumber(first)) {
    v.forEach((x, i) => {
      if (!isNumber(x)) throw typeError(id, `${path}[${i}]`, 'a number', x);
    });
    return [Float32Array.from(v as (number | bigint)[], Number)];
  }
  if (!Array.isArray(first)) throw typeError(id, `${path}[0]`, 'a number or an array', first);
  return v.map((inner, i) => {
    if (!Array.isArray(inner)) throw typeError(id, `${path}[${i}]`, 'an array', inner);
    inner.forEach((x, j) => {
      if (!isNumber(x)) throw typeError(id, `${path}[${i}][${j}]`, 'a number', x);
    });
    return Float32Array.from(inner as (number | bigint)[], Number);
  });
}

/** The `_vectors` object of a document, or null when it has none. */
export function vectorsObject(doc: Doc, id: string): Record<string, unknown> | null {
  const v = doc['_vectors'];
  if (v === undefined || v === null) return null;
  if (typeof v !== 'object' || Array.isArray(v)) {
    throw new ApiError(
      'invalid_vectors_type',
      `The \`_vectors\` field in the document with id: \`${id}\` is not an object. Was expecting an object with a key for each embedder with manually provided vectors, but instead got \`${stringifyJson(v)}\``,
    );
  }
  return v as Record<string, unknown>;
}

/** What `_vectors.<embedder>` of a document says. */
export function parseVectorsEntry(vectors: Record<string, unknown> | null, embedder: string, id: string): VectorsEntry {
  if (!vectors || !(embedder in vectors)) return { kind: 'absent' };
  const v = vectors[embedder];
  const path = `._vectors.${embedder}`;
  if (v === null) return { kind: 'given', embeddings: [], regenerate: false };
  if (Array.isArray(v)) return { kind: 'given', embeddings: parseEmbeddings(v, id, path), regenerate: false };
  if (typeof v !== 'object') {
    const k = typeof v === 'boolean' ? 'boolean' : typeof v === 'bigint' ? 'integer' : typeof v === 'number' ? (Number.isInteger(v) ? 'integer' : 'number') : 'string';
    return badRaw(id, `Expected \`${path}\` to be an array of floats, an array of arrays of floats, or an object with at least the field \`regenerate\`, but got the ${k} \`${typeof v === 'string' ? v : stringifyJson(v)}\``);
  }
  const obj = v as Record<string, unknown>;
  for (const k of Object.keys(obj)) {
    if (k !== 'regenerate' && k !== 'embeddings') {
      return badRaw(id, `Unexpected field \`${path}.${k}\`\n  - note: the allowed fields are \`regenerate\` and \`embeddings\``);
    }
  }
  if (!('regenerate' in obj)) {
    return badRaw(id, `Missing field \`${path}.regenerate\`\n  - note: \`${path}\` must be an array of floats, an array of arrays of floats, or an object with field \`regenerate\``);
  }
  const regenerate = obj['regenerate'];
  if (typeof regenerate !== 'boolean') {
    const what = typeof regenerate === 'string' ? `string ${stringifyJson(regenerate)}` : `${kind(regenerate).replace(/^an? /, '')} \`${stringifyJson(regenerate)}\``;
    return badRaw(id, `Could not parse \`${path}.regenerate\`: invalid type: ${what}, expected a boolean`);
  }
  const e = obj['embeddings'];
  const embeddings = e === undefined || e === null ? null : parseEmbeddings(e, id, `${path}.embeddings`);
  return { kind: 'given', embeddings, regenerate };
}

function badRaw(id: string, message: string): never {
  throw badConfig(id, message);
}

/** Embeddings must have the embedder's dimensions, and there are at most 256 of them. */
export function checkDimensions(embeddings: readonly Float32Array[], dims: number | undefined, embedder: string, id: string): void {
  if (embeddings.length > MAX_VECTORS_PER_DOCUMENT) {
    throw new ApiError('too_many_vectors', `Too many vectors for document with id ${id}: found ${embeddings.length}, but limited to ${MAX_VECTORS_PER_DOCUMENT}.`);
  }
  if (dims === undefined) return;
  embeddings.forEach((v, i) => {
    if (v.length !== dims) {
      throw new ApiError(
        'invalid_vector_dimensions',
        `Invalid vector dimensions in document with id \`${id}\` in \`._vectors.${embedder}\`.\n  - note: embedding #${i} has dimensions ${v.length}\n  - note: embedder \`${embedder}\` requires ${dims}`,
      );
    }
  });
}
