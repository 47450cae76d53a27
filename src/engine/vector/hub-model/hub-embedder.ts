// The `hubModel` source: a BERT-family model run on this machine. The model comes from the
// model hub by id and revision (cached, see `hub-cache.ts`) or from a directory, and runs
// in a worker thread on onnxruntime (`model-worker.ts`). It is fetched and loaded the first
// time it embeds: a setting on an empty index needs neither the hub nor the memory.

import type { TextEmbedder } from '../embedders.js';
import { locateModel, type HubSettings } from './hub-cache.js';
import { modelWorker, type ModelWorker } from './model-worker.js';

export const DEFAULT_HUB_MODEL = 'BAAI/bge-base-en-v1.5';

export function hubModelEmbedder(c: Record<string, unknown>, hub: HubSettings): TextEmbedder {
  const model = typeof c['model'] === 'string' ? c['model'] : DEFAULT_HUB_MODEL;
  const revision = typeof c['revision'] === 'string' ? c['revision'] : undefined;
  const pooling = typeof c['pooling'] === 'string' ? c['pooling'] : undefined;
  let worker: ModelWorker | null = null;
  const get = async () => {
    // A worker that stopped (idle, or failed) is replaced by a fresh one.
    const dir = await locateModel(model, revision, hub);
    return (worker = modelWorker({ dir, model, pooling }));
  };
  return {
    get dimensions() {
      return worker?.dims ?? (typeof c['dimensions'] === 'number' ? c['dimensions'] : undefined);
    },
    async embed(texts, deadline) {
      // A deadline marks a search query: it goes before indexing work.
      return (await get()).embed(texts, deadline !== undefined);
    },
  };
}
