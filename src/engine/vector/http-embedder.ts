// An embedder behind an HTTP API: the `rest` source, and the two branded sources that are a
// `rest` embedder with fixed templates (the hosted embeddings API and the local model
// server). Texts go out in batches; transient failures are retried with backoff.

import { EmbedError, replied } from './embed-error.js';
import type { HttpTuning } from './embedder-environment.js';
import { fragmentValue } from './fragments.js';
import { InjectableValue, TemplateError, TEXT, EMBEDDING, FRAGMENT } from './json-template.js';

export type Flavour = 'rest' | 'hostedA' | 'localRunner';

export interface HttpEmbedderOptions {
  url: string;
  request: unknown;
  response: unknown;
  apiKey?: string | undefined;
  headers?: Record<string, string> | undefined;
  /** Known dimensions: embeddings of another size are refused. */
  dimensions?: number | undefined;
  flavour: Flavour;
  /** `{{fragment}}` for an embedder with fragments: the request then carries rendered JSON values. */
  placeholder?: string;
  tuning: HttpTuning;
}

type Strategy = 'giveUp' | 'retry' | 'rateLimited';

class Attempt {
  constructor(
    readonly error: EmbedError,
    readonly strategy: Strategy,
  ) {}
}

function serverName(f: Flavour): string {
  return f === 'hostedA' ? 'hosted embeddings' : f === 'localRunner' ? 'local model' : 'embedding';
}

function authHint(f: Flavour): string {
  return f === 'hostedA'
    ? '\n  - Hint: Check the `apiKey` parameter in the embedder configuration, and the `TRINE_HOSTED_A_API_KEY` and `OPENAI_API_KEY` environment variables'
    : '\n  - Hint: Check the `apiKey` parameter in the embedder configuration';
}

function statusError(status: number, body: string | null, f: Flavour): Attempt {
  if (status === 401) return new Attempt(new EmbedError('user', `could not authenticate against ${serverName(f)} server${replied(body)}${authHint(f)}`), 'giveUp');
  if (status === 429) return new Attempt(new EmbedError('runtime', `sent too many requests to embedding server${replied(body)}`), 'rateLimited');
  if (status === 400) {
    const hint = f === 'rest' ? "\n  - Hint: check that the `request` in the embedder configuration matches the remote server's API" : '';
    return new Attempt(new EmbedError('user', `sent a bad request to embedding server${hint}${replied(body)}`), 'giveUp');
  }
  if (status === 404 && f === 'localRunner') {
    return new Attempt(new EmbedError('user', `model not found. Trine will not download models for the local model server, please pull the model manually${replied(body)}`), 'giveUp');
  }
  if (status >= 500) return new Attempt(new EmbedError('runtime', `received internal error HTTP ${status} from embedding server${replied(body)}`), 'retry');
  if (status >= 402 && status < 500) return new Attempt(new EmbedError('undecided', `received unexpected HTTP ${status} from embedding server${replied(body)}`), 'giveUp');
  return new Attempt(new EmbedError('undecided', `received unexpected HTTP ${status} from embedding server${replied(body)}`), 'retry');
}

function backoffMs(a: Attempt, attempt: number, maxDelayMs: number): number {
  const base = a.strategy === 'rateLimited' ? 100 + 10 ** attempt : 10 ** attempt;
  // Jitter so that many writers hitting one provider do not retry in step.
  return Math.min(base, maxDelayMs) * (0.5 + Math.random() / 2);
}

export class HttpEmbedder {
  private readonly request: InjectableValue;
  private readonly response: InjectableValue;
  dimensions: number | undefined;

  constructor(private readonly opts: HttpEmbedderOptions) {
    try {
      this.request = new InjectableValue(opts.request, 'request', opts.placeholder ?? TEXT);
      this.response = new InjectableValue(opts.response, 'response', EMBEDDING);
    } catch (e) {
      if (e instanceof TemplateError) throw new EmbedError('user', e.message);
      throw e;
    }
    if (this.response.isArray && !this.request.isArray) {
      throw new EmbedError('user', 'in `response`: `response` has multiple embeddings, but `request` has only one text to embed');
    }
    if (!this.response.isArray && this.request.isArray) {
      throw new EmbedError('user', 'in `response`: `response` has a single embedding, but `request` has multiple texts to embed');
    }
    this.dimensions = opts.dimensions;
  }

  /** Texts sent in one request. */
  get batchSize(): number {
    return this.request.isArray ? 10 : 1;
  }

  /** Embeddings of `texts`, in order; `deadline` (epoch ms) bounds the retries of a search. */
  async embed(texts: readonly string[], deadline?: number): Promise<Float32Array[]> {
    const chunks: string[][] = [];
    for (let i = 0; i < texts.length; i += this.batchSize) chunks.push(texts.slice(i, i + this.batchSize));
    const out: Float32Array[][] = new Array(chunks.length);
    let next = 0;
    const worker = async () => {
      while (next < chunks.length) {
        const i = next++;
        out[i] = await this.embedChunk(chunks[i]!, deadline);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.opts.tuning.parallelism, chunks.length) }, worker));
    return out.flat();
  }

  private async embedChunk(texts: string[], deadline?: number): Promise<Float32Array[]> {
    // Rendered fragments travel as their JSON and go out as the values they are.
    const values = this.opts.placeholder === FRAGMENT ? texts.map(fragmentValue) : texts;
    const body = JSON.stringify(this.request.inject(values));
    for (let attempt = 0; ; attempt++) {
      const result = await this.attempt(body, texts.length, deadline);
      if (!(result instanceof Attempt)) return result;
      const last = attempt + 1 >= this.opts.tuning.attempts;
      if (result.strategy === 'giveUp' || last) throw result.error;
      let wait = backoffMs(result, attempt, this.opts.tuning.maxRetryDelayMs);
      if (deadline !== undefined) {
        if (Date.now() >= deadline) throw result.error;
        wait = Math.min(wait, deadline - Date.now());
      }
      await new Promise((r) => setTimeout(r, wait));
    }
  }

  private headers(): Record<string, string> {
    const h: Record<string, string> = { 'Content-Type': 'application/json' };
    if (this.opts.apiKey) h['Authorization'] = `Bearer ${this.opts.apiKey}`;
    return { ...h, ...(this.opts.headers ?? {}) };
  }

  private async attempt(body: string, expected: number, deadline?: number): Promise<Float32Array[] | Attempt> {
    const timeout = deadline !== undefined ? Math.max(1, Math.min(this.opts.tuning.timeoutMs, deadline - Date.now())) : this.opts.tuning.timeoutMs;
    let res: Response;
    try {
      res = await fetch(this.opts.url, { method: 'POST', headers: this.headers(), body, signal: AbortSignal.timeout(timeout) });
    } catch (e) {
      const why = e instanceof Error ? (e.name === 'TimeoutError' ? `timed out after ${timeout}ms` : `${e.message}${e.cause instanceof Error ? `: ${e.cause.message}` : ''}`) : String(e);
      return new Attempt(new EmbedError('runtime', `could not reach embedding server:\n  - ${this.opts.url}: ${why}`), 'retry');
    }
    let text: string;
    try {
      text = await res.text();
    } catch (e) {
      return new Attempt(new EmbedError('runtime', `could not reach embedding server:\n  - ${(e as Error).message}`), 'retry');
    }
    if (!res.ok) return statusError(res.status, text || null, this.opts.flavour);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      return new Attempt(new EmbedError('runtime', `error deserializing the response body as JSON:\n  - ${(e as Error).message}`), 'retry');
    }
    return this.parse(json, expected);
  }

  private parse(json: unknown, expected: number): Float32Array[] | Attempt {
    let values: unknown[];
    try {
      values = this.response.extract(json);
    } catch (e) {
      if (!(e instanceof TemplateError)) throw e;
      return new Attempt(new EmbedError('runtime', `error extracting embeddings from the response:\n  - ${e.message}`), 'giveUp');
    }
    const vectors: Float32Array[] = [];
    for (const [i, v] of values.entries()) {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'number')) {
        const where = this.response.isArray ? ` item #${i}` : '';
        return new Attempt(new EmbedError('runtime', `error extracting embeddings from the response:\n  - in \`response\`${where}: expected an array of numbers`), 'giveUp');
      }
      vectors.push(Float32Array.from(v as number[]));
    }
    if (vectors.length !== expected) {
      return new Attempt(new EmbedError('runtime', `expected a response containing ${expected} embeddings, got only ${vectors.length}`), 'giveUp');
    }
    for (const v of vectors) {
      if (this.dimensions === undefined) this.dimensions = v.length;
      if (v.length !== this.dimensions) {
        return new Attempt(new EmbedError('runtime', `was expecting embeddings of dimension \`${this.dimensions}\`, got embeddings of dimensions \`${v.length}\``), 'giveUp');
      }
    }
    return vectors;
  }
}
