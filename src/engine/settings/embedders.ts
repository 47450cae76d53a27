import { Liquid } from 'liquidjs';
import { ApiError } from '../../errors/api-error.js';
import {
  EMBEDDER_KEYS,
  META_FIELDS,
  SOURCES,
  fieldStatus,
  orderEmbedder,
  parseEmbedderObject,
  type EmbedderSource,
  type MetaField,
  type Nesting,
} from './embedder-fields.js';
import { at, expectObject, isPlainObject, sortedKeys, type VCtx } from './validate-core.js';

export const MAX_EMBEDDERS = 256;

type Embedder = Record<string, unknown>;

const liquid = new Liquid();

function embedderError(message: string): ApiError {
  return new ApiError('invalid_settings_embedders', message);
}

/** Errors the reference raises while building the embedder rather than while reading settings. */
function embeddingError(message: string): ApiError {
  return new ApiError('vector_embedding_error', `Error while generating embeddings: user error: ${message}`);
}

function nameIn(name: string, nesting: Nesting): string {
  return nesting === 'search' ? `${name}.searchEmbedder` : nesting === 'indexing' ? `${name}.indexingEmbedder` : name;
}

const inContext = (n: Nesting) => (n === 'search' ? ' for the search embedder' : n === 'indexing' ? ' for the indexing embedder' : '');
const quoted = (xs: readonly string[]) => xs.map((x) => `\`${x}\``).join(', ');

function unavailableField(name: string, source: EmbedderSource, field: MetaField, nesting: Nesting): ApiError {
  const sources = SOURCES.filter((s) => fieldStatus(s, field, nesting) !== 'disallowed');
  const fields = META_FIELDS.filter((f) => fieldStatus(source, f, nesting) !== 'disallowed');
  let msg = `\`.embedders.${nameIn(name, nesting)}\`: Field \`${field}\` unavailable for source \`${source}\`${inContext(nesting)}.`;
  if (sources.length > 0) msg += `\n  - note: \`${field}\` is available for sources: ${quoted(sources)}`;
  msg += `\n  - note: available fields for source \`${source}\`${inContext(nesting)}: ${quoted(fields)}`;
  if (nesting !== 'none' && fieldStatus(source, field, 'none') !== 'disallowed') {
    msg += `\n  - note: \`${field}\` is available when source \`${source}\` is not${inContext(nesting)}`;
  }
  return embedderError(msg);
}

/** Each field against the source's table: present where refused, or absent where mandatory. */
function checkFields(name: string, source: EmbedderSource, e: Embedder, nesting: Nesting): void {
  for (const field of META_FIELDS) {
    if (field === 'source') continue;
    const status = fieldStatus(source, field, nesting);
    const present = field in e; // a `null` (reset) of a refused field is refused too
    if (status === 'disallowed' && present) throw unavailableField(name, source, field, nesting);
    if (status === 'mandatory' && (e[field] === undefined || e[field] === null)) {
      throw embedderError(`\`.embedders.${name}\`: Missing field \`${field}\` (note: this field is mandatory for source \`${source}\`)`);
    }
  }
}

function checkTemplate(name: string, e: Embedder): void {
  if (e['documentTemplateMaxBytes'] === 0) {
    throw embedderError(`\`.embedders.${name}.documentTemplateMaxBytes\`: \`documentTemplateMaxBytes\` cannot be zero`);
  }
  const template = e['documentTemplate'];
  if (typeof template !== 'string') return;
  try {
    liquid.parse(template);
  } catch (err) {
    const why = (err as Error).message.split('\n')[0];
    throw embedderError(`\`.embedders.${name}.documentTemplate\`: Invalid template: ${why}.`);
  }
}

function checkUrl(name: string, source: EmbedderSource | undefined, url: unknown): void {
  if (typeof url !== 'string') return;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    const why = /^[A-Za-z][A-Za-z0-9+.-]*:/.test(url) ? 'invalid URL' : 'relative URL without a base';
    throw embedderError(`\`.embedders.${name}.url\`: could not parse \`${url}\`: ${why}`);
  }
  if (source === 'localRunner' && !/\/api\/embed(dings)?$/.test(parsed.pathname)) {
    throw embeddingError(
      `unsupported URL for source \`localRunner\`.\n  - For \`localRunner\` sources, the URL must end with \`/api/embed\` or \`/api/embeddings\`\n  - Got \`${url}\``,
    );
  }
}

const liveFragments = (v: unknown) => (isPlainObject(v) ? Object.keys(v).filter((k) => v[k] !== null) : []);

/** Fragments replace the document template; a multimodal embedder needs both kinds of fragment. */
function checkFragments(e: Embedder, complete: boolean): void {
  const indexing = liveFragments(e['indexingFragments']);
  const search = liveFragments(e['searchFragments']);
  if (complete && (indexing.length === 0) !== (search.length === 0)) {
    const [empty, declared, list] = indexing.length === 0 ? ['indexingFragments', 'searchFragments', search] : ['searchFragments', 'indexingFragments', indexing];
    const shown = list.slice(0, 3).join(', ') + (list.length > 3 ? ', ...' : '');
    throw embeddingError(
      `inconsistent fragments: \`${empty}\` is empty, but \`${declared}\` declares ${list.length} fragments: ${shown}\n` +
        ` - Hint: declare at least one fragment in \`${empty}\` or remove fragments from \`${declared}\` by setting them to \`null\``,
    );
  }
  if ((indexing.length > 0 || search.length > 0) && typeof e['documentTemplate'] === 'string') {
    throw embeddingError(
      `cannot pass both fragments and a document template.\n  - Note: ${indexing.length} fragments declared in \`indexingFragments\` and ${search.length} fragments declared in \`search_fragments_len\`.\n  - Hint: remove the declared fragments or remove the \`documentTemplate\``,
    );
  }
}

function containsString(v: unknown, needle: string): boolean {
  if (v === needle) return true;
  if (Array.isArray(v)) return v.some((x) => containsString(x, needle));
  if (isPlainObject(v)) return Object.values(v).some((x) => containsString(x, needle));
  return false;
}

/** A `rest` embedder's request must say where the text goes, its response where the embedding is. */
function checkRestTemplates(e: Embedder): void {
  const usesFragments = liveFragments(e['indexingFragments']).length > 0 || liveFragments(e['searchFragments']).length > 0;
  if (e['request'] !== undefined && e['request'] !== null && !usesFragments && !containsString(e['request'], '{{text}}')) {
    throw embeddingError('in `request`: "{{text}}" not found');
  }
  if (e['response'] !== undefined && e['response'] !== null && !containsString(e['response'], '{{embedding}}')) {
    throw embeddingError('in `response`: "{{embedding}}" not found');
  }
}

const HOSTED_MODELS: Record<string, { dimensions: number; override: boolean }> = {
  'text-embedding-ada-002': { dimensions: 1536, override: false },
  'text-embedding-3-small': { dimensions: 1536, override: true },
  'text-embedding-3-large': { dimensions: 3072, override: true },
};

function checkHostedModel(name: string, e: Embedder): void {
  const model = e['model'];
  if (typeof model !== 'string') return;
  const known = HOSTED_MODELS[model];
  if (!known) {
    throw embedderError(`\`.embedders.${name}.model\`: Invalid model \`${model}\` for source \`hostedA\`. Supported models: ${JSON.stringify(Object.keys(HOSTED_MODELS)).replaceAll(',', ', ')}`);
  }
  const dims = e['dimensions'];
  if (typeof dims !== 'number') return;
  if (!known.override && dims !== known.dimensions) {
    throw embedderError(`\`.embedders.${name}.dimensions\`: Model \`${model}\` does not support overriding its native dimensions of ${known.dimensions}. Found ${dims}`);
  }
  if (dims > known.dimensions) {
    throw embedderError(`\`.embedders.${name}.dimensions\`: Model \`${model}\` does not support overriding its dimensions to a value higher than ${known.dimensions}. Found ${dims}`);
  }
}

function checkNested(name: string, e: Embedder, nesting: Nesting): void {
  const source = e['source'];
  if (typeof source !== 'string') {
    throw embedderError(`\`.embedders.${nameIn(name, nesting)}\`: Missing field \`source\`.\n  - note: this field is mandatory for nested embedders`);
  }
  if (source === 'composite' || source === 'userProvided') {
    throw embedderError(`\`.embedders.${nameIn(name, nesting)}.source\`: Source \`${source}\` is not available in a nested embedder`);
  }
  checkTemplate(name, e);
  checkFields(name, source as EmbedderSource, e, nesting);
  if (source === 'hostedA') checkHostedModel(name, e);
}

/** Composite halves must embed the same way: whatever both name of these must agree. */
function checkCompositeHalves(name: string, e: Embedder): void {
  const s = e['searchEmbedder'] as Embedder;
  const i = e['indexingEmbedder'] as Embedder;
  for (const f of ['model', 'dimensions', 'pooling']) {
    if (s[f] !== undefined && i[f] !== undefined && s[f] !== i[f]) {
      throw embedderError(`\`.embedders.${name}\`: \`searchEmbedder\` and \`indexingEmbedder\` must have the same \`${f}\`, found \`${String(s[f])}\` and \`${String(i[f])}\``);
    }
  }
}

/**
 * The reference's embedder checks, in its order. `complete` says `e` is a whole embedder (the
 * result of a merge, or an update naming its source) rather than a partial update of one.
 */
export function checkEmbedder(name: string, e: Embedder, complete: boolean): void {
  const source = typeof e['source'] === 'string' ? (e['source'] as EmbedderSource) : undefined;
  checkTemplate(name, e);
  if (e['dimensions'] === 0) throw embedderError(`\`.embedders.${name}.dimensions\`: \`dimensions\` cannot be zero`);
  checkUrl(name, source, e['url']);
  checkFragments(e, complete && source !== undefined);
  checkRestTemplates(e);
  if (source === undefined) {
    if (complete) throw embedderError(`\`.embedders.${name}\`: Missing field \`source\`.\n  - note: this field is mandatory`);
    return;
  }
  checkFields(name, source, e, 'none');
  if (source === 'hostedA') checkHostedModel(name, e);
  if (source === 'composite') {
    checkNested(name, e['searchEmbedder'] as Embedder, 'search');
    checkNested(name, e['indexingEmbedder'] as Embedder, 'indexing');
    checkCompositeHalves(name, e);
  }
}

/** Parses the value of the `embedders` setting: names to embedder objects, or `null` to remove one. */
export function parseEmbedders(v: unknown, ctx: VCtx): Record<string, Embedder | null> {
  const obj = expectObject(v, ctx);
  const out: Record<string, Embedder | null> = {};
  for (const [name, raw] of Object.entries(obj)) out[name] = raw === null ? null : parseEmbedderObject(raw, at(ctx, name));
  const count = Object.values(out).filter((e) => e !== null).length;
  if (count > MAX_EMBEDDERS) throw embedderError(`Too many embedders in the configuration. Found ${count}, but limited to ${MAX_EMBEDDERS}.`);
  return sortedKeys(out);
}

/** Fields kept when an embedder changes source; the rest belonged to the old source. */
const KEPT_ON_SOURCE_CHANGE = ['apiKey', 'documentTemplate', 'documentTemplateMaxBytes', 'distribution', 'binaryQuantized'];

function mergeFields(base: Embedder, patch: Embedder): Embedder {
  const out: Embedder = { ...base };
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else if ((k === 'indexingFragments' || k === 'searchFragments') && isPlainObject(out[k])) {
      const merged = mergeFields(out[k] as Embedder, v as Embedder);
      if (Object.keys(merged).length > 0) out[k] = sortedKeys(merged);
      else delete out[k];
    } else if (k === 'indexingEmbedder' && isPlainObject(out[k])) out[k] = orderEmbedder(mergeFields(out[k] as Embedder, v as Embedder));
    else out[k] = structuredClone(v);
  }
  return out;
}

/** An update of one embedder applied to its current value (absent for a new one), then checked whole. */
export function mergeEmbedder(name: string, current: Embedder | undefined, patch: Embedder): Embedder {
  if (current?.['binaryQuantized'] === true && patch['binaryQuantized'] === false) {
    throw embedderError(
      `\`.embedders.${name}.binaryQuantized\`: Cannot disable the binary quantization.\n - Note: Binary quantization is a lossy operation that cannot be reverted.\n - Hint: Add a new embedder that is non-quantized and regenerate the vectors.`,
    );
  }
  let base: Embedder = current ?? {};
  const newSource = patch['source'];
  if (current && typeof newSource === 'string' && newSource !== current['source']) {
    const kept = newSource === 'userProvided' || newSource === 'composite' ? ['apiKey', 'distribution', 'binaryQuantized'] : KEPT_ON_SOURCE_CHANGE;
    base = Object.fromEntries(Object.entries(current).filter(([k]) => kept.includes(k)));
  }
  const merged = orderEmbedder(mergeFields(base, patch));
  checkEmbedder(name, merged, true);
  return merged;
}

/** Applies an `embedders` update to the current embedders. */
export function applyEmbedders(current: Record<string, Embedder>, patch: Record<string, Embedder | null>): Record<string, Embedder> {
  const out: Record<string, Embedder> = { ...current };
  for (const [name, e] of Object.entries(patch)) {
    if (e === null) delete out[name];
    else out[name] = mergeEmbedder(name, current[name], e);
  }
  const count = Object.keys(out).length;
  if (count > MAX_EMBEDDERS) throw embedderError(`Too many embedders in the configuration. Found ${count}, but limited to ${MAX_EMBEDDERS}.`);
  return sortedKeys(out);
}

/** Experimental features an embedders update relies on, with the reference's wording of the action. */
export function embedderFeatureUses(patch: Record<string, Embedder | null>): { feature: 'compositeEmbedders' | 'multimodal'; action: string }[] {
  const uses: { feature: 'compositeEmbedders' | 'multimodal'; action: string }[] = [];
  for (const e of Object.values(patch)) {
    if (!e) continue;
    if (e['source'] === 'composite') uses.push({ feature: 'compositeEmbedders', action: 'using `"composite"` as source' });
    if (e['searchEmbedder'] !== undefined && e['searchEmbedder'] !== null) uses.push({ feature: 'compositeEmbedders', action: 'setting `searchEmbedder`' });
    if (e['indexingEmbedder'] !== undefined && e['indexingEmbedder'] !== null) uses.push({ feature: 'compositeEmbedders', action: 'setting `indexingEmbedder`' });
    if (e['indexingFragments'] !== undefined && e['indexingFragments'] !== null) uses.push({ feature: 'multimodal', action: 'setting `indexingFragments`' });
    if (e['searchFragments'] !== undefined && e['searchFragments'] !== null) uses.push({ feature: 'multimodal', action: 'setting `searchFragments`' });
  }
  return uses;
}

export { EMBEDDER_KEYS };
