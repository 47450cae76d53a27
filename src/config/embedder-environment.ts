import { embedderEnvironment, type EmbedderEnvironment } from '../engine/vector/embedder-environment.js';
import type { Options } from './options.js';

/** The embedders' settings of a node: from its flags, for serving and for imports alike. */
export function embedderEnvironmentOf(options: Options): EmbedderEnvironment {
  return embedderEnvironment({
    http: { timeoutMs: options.embedderTimeoutMs, attempts: options.embedderAttempts, maxRetryDelayMs: options.embedderMaxRetryDelayMs },
    hub: { dir: options.hubModelsDir, endpoint: options.hubEndpoint, ...(options.hubToken ? { token: options.hubToken } : {}) },
  });
}
