import {
  at,
  expectBool,
  expectEnum,
  expectFields,
  expectNumber,
  expectObject,
  expectString,
  expectStringMap,
  expectUint,
  invalidValue,
  isPlainObject,
  missingField,
  sortedKeys,
  unknownValue,
  type VCtx,
} from './validate-core.js';

/** Embedder sources under the spec's names, in the reference's order. */
export const SOURCES = ['hostedA', 'hubModel', 'localRunner', 'userProvided', 'rest', 'composite'] as const;
export type EmbedderSource = (typeof SOURCES)[number];

/** The reference's names for the three branded sources, accepted as aliases. */
const ALIASES: Record<string, EmbedderSource> = { openAi: 'hostedA', huggingFace: 'hubModel', ollama: 'localRunner' };

export const POOLINGS = ['useModel', 'forceMean', 'forceCls'] as const;

/** The fields of an embedder object, in the order it is stored and shown. */
export const EMBEDDER_KEYS = [
  'source',
  'model',
  'revision',
  'pooling',
  'apiKey',
  'dimensions',
  'binaryQuantized',
  'documentTemplate',
  'documentTemplateMaxBytes',
  'url',
  'indexingFragments',
  'searchFragments',
  'request',
  'response',
  'headers',
  'searchEmbedder',
  'indexingEmbedder',
  'distribution',
] as const;
export type EmbedderKey = (typeof EMBEDDER_KEYS)[number];

/** Fields a nested (composite) embedder accepts when parsed; some are refused afterwards. */
const SUB_KEYS = [
  'source',
  'model',
  'revision',
  'pooling',
  'apiKey',
  'dimensions',
  'documentTemplate',
  'documentTemplateMaxBytes',
  'url',
  'indexingFragments',
  'searchFragments',
  'request',
  'response',
  'headers',
  'distribution',
  'binaryQuantized',
  'searchEmbedder',
  'indexingEmbedder',
] as const;

/** Order in which fields are checked against a source and listed in messages. */
export const META_FIELDS = [
  'source',
  'model',
  'revision',
  'pooling',
  'apiKey',
  'dimensions',
  'documentTemplate',
  'documentTemplateMaxBytes',
  'url',
  'indexingFragments',
  'searchFragments',
  'request',
  'response',
  'headers',
  'searchEmbedder',
  'indexingEmbedder',
  'distribution',
  'binaryQuantized',
] as const;
export type MetaField = (typeof META_FIELDS)[number];

export type Nesting = 'none' | 'search' | 'indexing';
export type FieldStatus = 'mandatory' | 'allowed' | 'disallowed';

/**
 * Which fields each source takes, from the spec's embedder table; where the spec says nothing
 * (`model` for `localRunner`, `request`/`response` for `rest`) the reference's rule is used.
 */
const BY_SOURCE: Record<EmbedderSource, Partial<Record<MetaField, FieldStatus>>> = {
  hostedA: { source: 'allowed', model: 'allowed', apiKey: 'allowed', documentTemplate: 'allowed', documentTemplateMaxBytes: 'allowed', dimensions: 'allowed', url: 'allowed' },
  hubModel: { source: 'allowed', model: 'allowed', revision: 'allowed', pooling: 'allowed', documentTemplate: 'allowed', documentTemplateMaxBytes: 'allowed', dimensions: 'allowed' },
  localRunner: { source: 'allowed', model: 'mandatory', documentTemplate: 'allowed', documentTemplateMaxBytes: 'allowed', url: 'allowed', apiKey: 'allowed', dimensions: 'allowed' },
  // `dimensions` stays accepted (not mandatory) for user-provided vectors: clients send it to fix the vector size.
  userProvided: { source: 'allowed', dimensions: 'allowed' },
  rest: {
    source: 'allowed',
    url: 'mandatory',
    request: 'mandatory',
    response: 'mandatory',
    apiKey: 'allowed',
    dimensions: 'allowed',
    documentTemplate: 'allowed',
    documentTemplateMaxBytes: 'allowed',
    headers: 'allowed',
    indexingFragments: 'allowed',
    searchFragments: 'allowed',
  },
  composite: { source: 'allowed', searchEmbedder: 'mandatory', indexingEmbedder: 'mandatory' },
};

export function fieldStatus(source: EmbedderSource, field: MetaField, nesting: Nesting): FieldStatus {
  if (field === 'distribution' || field === 'binaryQuantized') return nesting === 'none' ? 'allowed' : 'disallowed';
  if ((field === 'documentTemplate' || field === 'documentTemplateMaxBytes') && nesting === 'search') return 'disallowed';
  if (source === 'rest' && field === 'indexingFragments' && nesting === 'search') return 'disallowed';
  if (source === 'rest' && field === 'searchFragments' && nesting === 'indexing') return 'disallowed';
  return BY_SOURCE[source][field] ?? 'disallowed';
}

export function parseSource(v: unknown, ctx: VCtx): EmbedderSource {
  const s = expectString(v, ctx);
  const canonical = (SOURCES as readonly string[]).includes(s) ? (s as EmbedderSource) : ALIASES[s];
  if (!canonical) throw unknownValue(ctx, s, SOURCES);
  return canonical;
}

function parseFragments(v: unknown, ctx: VCtx): Record<string, { value: unknown } | null> {
  const obj = expectObject(v, ctx);
  const out: Record<string, { value: unknown } | null> = {};
  for (const [name, f] of Object.entries(obj)) {
    const c = at(ctx, name);
    if (f === null) {
      out[name] = null;
      continue;
    }
    const frag = expectFields(f, c, ['value']);
    if (!('value' in frag)) throw missingField(c, 'value');
    out[name] = { value: frag['value'] };
  }
  return sortedKeys(out);
}

function parseDistribution(v: unknown, ctx: VCtx): { mean: number; sigma: number } {
  const obj = expectFields(v, ctx, ['mean', 'sigma']);
  if (!('mean' in obj)) throw missingField(ctx, 'mean');
  if (!('sigma' in obj)) throw missingField(ctx, 'sigma');
  const mean = expectNumber(obj['mean'], at(ctx, 'mean'));
  const sigma = expectNumber(obj['sigma'], at(ctx, 'sigma'));
  if (mean < 0 || mean > 1) throw invalidValue(ctx, `the distribution mean must be in the range [0, 1], got ${mean}`);
  if (sigma <= 0 || sigma > 1) throw invalidValue(ctx, `the distribution sigma must be in the range ]0, 1], got ${sigma}`);
  return { mean, sigma };
}

/** Parses one field's non-null value. */
function parseField(key: EmbedderKey, v: unknown, ctx: VCtx, nested: boolean): unknown {
  switch (key) {
    case 'source':
      return parseSource(v, ctx);
    case 'model':
    case 'revision':
    case 'apiKey':
    case 'documentTemplate':
    case 'url':
      return expectString(v, ctx);
    case 'pooling':
      return expectEnum(v, ctx, POOLINGS);
    case 'dimensions':
    case 'documentTemplateMaxBytes':
      return expectUint(v, ctx);
    case 'binaryQuantized':
      return expectBool(v, ctx);
    case 'indexingFragments':
    case 'searchFragments':
      return parseFragments(v, ctx);
    case 'request':
    case 'response':
      return v;
    case 'headers':
      return expectStringMap(v, ctx);
    case 'searchEmbedder':
    case 'indexingEmbedder':
      // Inside a nested embedder these are only kept so that they can be refused by name.
      return nested ? v : parseEmbedderObject(v, ctx, true);
    case 'distribution':
      return parseDistribution(v, ctx);
  }
}

/**
 * Checks the shape and value types of an embedder object (no per-source rules yet). `null`
 * fields are kept: in an update they reset the field.
 */
export function parseEmbedderObject(v: unknown, ctx: VCtx, nested = false): Record<string, unknown> {
  const obj = expectFields(v, ctx, nested ? SUB_KEYS : EMBEDDER_KEYS);
  const parsed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(obj)) {
    parsed[key] = value === null ? null : parseField(key as EmbedderKey, value, at(ctx, key), nested);
  }
  return orderEmbedder(parsed);
}

/** The embedder's fields in their stored order. */
export function orderEmbedder(e: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of EMBEDDER_KEYS) if (k in e) out[k] = e[k];
  for (const k of Object.keys(e)) if (!(k in out)) out[k] = e[k];
  return out;
}

/** The reference's masking of secrets: a short prefix is kept, the rest becomes `X`s. */
export function hideSecret(secret: string): string {
  const chars = [...secret];
  const bytes = Buffer.byteLength(secret);
  if (bytes < 10) return 'XXX...';
  if (bytes < 20) return chars.slice(0, 2).join('') + 'XXXX...';
  if (bytes < 30) return chars.slice(0, 3).join('') + 'XXXXX...';
  return chars.slice(0, 5).join('') + 'XXXXXX...';
}

/** An embedder as shown: `apiKey`, its own and its nested embedders', masked. */
export function redactEmbedder(e: unknown): unknown {
  if (!isPlainObject(e)) return e;
  const out: Record<string, unknown> = { ...e };
  if (typeof out['apiKey'] === 'string') out['apiKey'] = hideSecret(out['apiKey']);
  for (const k of ['searchEmbedder', 'indexingEmbedder']) if (isPlainObject(out[k])) out[k] = redactEmbedder(out[k]);
  return out;
}
