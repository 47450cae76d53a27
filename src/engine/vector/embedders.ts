// Runtime embedders built from the stored `embedders` setting, one per source. Indexing
// and search may use different halves (`composite`); everything else embeds the same way
// for both.

import type { Distribution } from './distance.js';
import { DocumentTemplate } from './document-template.js';
import { EmbedError } from './embed-error.js';
import { fragmentsOf, type Fragments } from './fragments.js';
import { HttpEmbedder, type Flavour } from './http-embedder.js';
import { EMBEDDING, FRAGMENT, REPEAT, TEXT } from './json-template.js';
import type { EmbedderEnvironment } from './embedder-environment.js';
import { hubModelEmbedder } from './hub-model/hub-embedder.js';

type Config = Record<string, unknown>;

/** The part of an embedder that turns texts into vectors. */
export interface TextEmbedder {
  /** Known once configured or once a first embedding came back. */
  readonly dimensions: number | undefined;
  /** Texts; for an embedder with fragments, the JSON of rendered fragments (`fragmentText`). */
  embed(texts: readonly string[], deadline?: number): Promise<Float32Array[]>;
}

export interface RuntimeEmbedder {
  name: string;
  source: string;
  /** `null` for `userProvided` (vectors only come with documents and queries) and for embedders with fragments. */
  template: DocumentTemplate | null;
  /** Multimodal: documents and queries are embedded through these instead of a template. */
  fragments: Fragments | null;
  indexing: TextEmbedder | null;
  search: TextEmbedder | null;
  /** Dimensions fixed by the configuration, if any. */
  configuredDimensions: number | undefined;
  distribution: Distribution | null;
  quantized: boolean;
  /** What the stored generated embeddings depend on besides the text: when it changes, all are made again. */
  fingerprint: string;
}

const HOSTED_URL = 'https://api.openai.com/v1/embeddings';
const HOSTED_MODELS: Record<string, { dims: number; override: boolean; distribution: Distribution }> = {
  'text-embedding-ada-002': { dims: 1536, override: false, distribution: { mean: 0.9, sigma: 0.08 } },
  'text-embedding-3-small': { dims: 1536, override: true, distribution: { mean: 0.75, sigma: 0.1 } },
  'text-embedding-3-large': { dims: 3072, override: true, distribution: { mean: 0.7, sigma: 0.1 } },
};

/** The hosted API's key when the embedder names none. */
function hostedApiKey(): string | undefined {
  return process.env['TRINE_HOSTED_A_API_KEY'] || process.env['OPENAI_API_KEY'] || undefined;
}

function localRunnerUrl(): string {
  return process.env['TRINE_LOCAL_RUNNER_URL'] ?? 'http://localhost:11434/api/embeddings';
}

const str = (c: Config, k: string) => (typeof c[k] === 'string' ? (c[k] as string) : undefined);
const num = (c: Config, k: string) => (typeof c[k] === 'number' ? (c[k] as number) : undefined);

function http(env: EmbedderEnvironment, flavour: Flavour, url: string, request: unknown, response: unknown, c: Config, dimensions: number | undefined, apiKey = str(c, 'apiKey')): HttpEmbedder {
  const headers = c['headers'] as Record<string, string> | undefined;
  const placeholder = fragmentsOf(c) ? FRAGMENT : TEXT;
  return new HttpEmbedder({ flavour, url, request, response, apiKey, headers, dimensions, placeholder, tuning: env.http });
}

function hostedModel(c: Config) {
  const model = str(c, 'model') ?? 'text-embedding-3-small';
  return { model, info: HOSTED_MODELS[model] ?? HOSTED_MODELS['text-embedding-3-small']! };
}

/** The text embedder of one (non-composite) configuration. */
function textEmbedder(c: Config, env: EmbedderEnvironment): TextEmbedder | null {
  switch (c['source']) {
    case 'userProvided':
      return null;
    case 'rest':
      return http(env, 'rest', str(c, 'url')!, c['request'], c['response'], c, num(c, 'dimensions'));
    case 'hostedA': {
      const { model, info } = hostedModel(c);
      const dims = info.override ? (num(c, 'dimensions') ?? info.dims) : info.dims;
      const request: Config = { model, input: [TEXT, REPEAT] };
      if (info.override && num(c, 'dimensions') !== undefined) request['dimensions'] = dims;
      const response = { data: [{ embedding: EMBEDDING }, REPEAT] };
      return http(env, 'hostedA', str(c, 'url') ?? HOSTED_URL, request, response, c, dims, str(c, 'apiKey') ?? hostedApiKey());
    }
    case 'localRunner': {
      const url = str(c, 'url') ?? localRunnerUrl();
      const model = str(c, 'model');
      if (url.endsWith('/api/embed')) {
        return http(env, 'localRunner', url, { model, input: [TEXT, REPEAT] }, { embeddings: [EMBEDDING, REPEAT] }, c, num(c, 'dimensions'));
      }
      if (url.endsWith('/api/embeddings')) {
        return http(env, 'localRunner', url, { model, prompt: TEXT }, { embedding: EMBEDDING }, c, num(c, 'dimensions'));
      }
      throw new EmbedError('user', `unsupported URL for source \`localRunner\`.\n  - For \`localRunner\` sources, the URL must end with \`/api/embed\` or \`/api/embeddings\`\n  - Got \`${url}\``);
    }
    case 'hubModel':
      return hubModelEmbedder(c, env.hub);
    default:
      throw new EmbedError('user', `unsupported embedder source \`${String(c['source'])}\``);
  }
}

function fingerprintOf(c: Config): unknown {
  const keep = ['source', 'model', 'revision', 'pooling', 'dimensions', 'url', 'request', 'response', 'indexingFragments'];
  // Fragments are compared one by one at indexing (only those whose rendering changed are
  // embedded again), so they stay out; the slot stays so that stored fingerprints still match.
  return keep.map((k) => (k === 'indexingFragments' ? null : (c[k] ?? null)));
}

function templateOf(c: Config): DocumentTemplate | null {
  if (c['source'] === 'userProvided' || fragmentsOf(c)) return null;
  const t = str(c, 'documentTemplate');
  return new DocumentTemplate(t ?? undefined, num(c, 'documentTemplateMaxBytes') ?? undefined);
}

/** A composite embedder indexes with the indexing half's fragments and searches with the search half's. */
function mergedFragments(ic: Config, sc: Config): Fragments | null {
  const i = fragmentsOf(ic);
  const s = fragmentsOf(sc);
  return i || s ? { indexing: i?.indexing ?? [], search: s?.search ?? [] } : null;
}

/**
 * The runtime embedder for a stored embedder setting; throws an EmbedError for an unusable
 * one. `env`: the node's embedding-server tuning and where local models come from.
 */
export function buildEmbedder(name: string, c: Config, env: EmbedderEnvironment): RuntimeEmbedder {
  const distribution = (c['distribution'] as Distribution | undefined) ?? (c['source'] === 'hostedA' ? hostedModel(c).info.distribution : null);
  const quantized = c['binaryQuantized'] === true;
  if (c['source'] === 'composite') {
    const ic = c['indexingEmbedder'] as Config;
    const sc = c['searchEmbedder'] as Config;
    const indexing = textEmbedder(ic, env);
    const search = textEmbedder(sc, env);
    return {
      name,
      source: 'composite',
      template: templateOf(ic),
      fragments: mergedFragments(ic, sc),
      indexing,
      search,
      configuredDimensions: indexing?.dimensions ?? search?.dimensions,
      distribution,
      quantized,
      fingerprint: JSON.stringify(fingerprintOf(ic)),
    };
  }
  const te = textEmbedder(c, env);
  return {
    name,
    source: c['source'] as string,
    template: templateOf(c),
    fragments: fragmentsOf(c),
    indexing: te,
    search: te,
    configuredDimensions: te ? te.dimensions : num(c, 'dimensions'),
    distribution,
    quantized,
    fingerprint: JSON.stringify(fingerprintOf(c)),
  };
}
