// What embedders need from the node that runs them, given when the engine is opened: how
// patient to be with embedding servers, and where local models come from. Nothing here is
// replicated: two nodes may differ (a mirror close to each), and still produce the same vectors.

import { join } from 'node:path';
import { DEFAULT_HUB_ENDPOINT, type HubSettings } from './hub-model/hub-cache.js';

/** Retries and timeouts of REST embedders; the defaults are the reference's. */
export interface HttpTuning {
  /** One request to an embedding server. */
  timeoutMs: number;
  /** Longest wait between two attempts (the backoff doubles up to it). */
  maxRetryDelayMs: number;
  /** Attempts for one chunk of texts before its error is final. */
  attempts: number;
  /** Requests in flight at once for one batch of texts. */
  parallelism: number;
}

export const DEFAULT_HTTP_TUNING: Readonly<HttpTuning> = { timeoutMs: 30_000, maxRetryDelayMs: 60_000, attempts: 10, parallelism: 4 };

export interface EmbedderEnvironment {
  http: HttpTuning;
  hub: HubSettings;
}

/** An environment from what is given, the defaults for the rest (models under `./data/hub-models`). */
export function embedderEnvironment(given: { http?: Partial<HttpTuning>; hub?: HubSettings } = {}): EmbedderEnvironment {
  const hub = given.hub ?? { dir: join(process.cwd(), 'data', 'hub-models'), endpoint: DEFAULT_HUB_ENDPOINT };
  return {
    http: { ...DEFAULT_HTTP_TUNING, ...given.http },
    hub: { ...hub, endpoint: hub.endpoint.replace(/\/+$/, '') },
  };
}
