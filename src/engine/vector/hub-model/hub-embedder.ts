// The `hubModel` source: a BERT-family model run on this machine. The model comes from the
// model hub by id and revision (cached, see `hub-cache.ts`) or from a directory, and runs
// in a worker thread on onnxruntime (`model-worker.ts`). It is fetched and loaded the first
// time it embeds: a setting on an empty index needs neither the hub nor the memory.

import { EmbedError } from '../embed-error.js';
import type { TextEmbedder } from '../embedders.js';
import { locateModel, type HubSettings } from './hub-cache.js';
import { modelWorker, type ModelWorker } from './model-worker.js';

export const DEFAULT_HUB_MODEL = 'BAAI/bge-base-en-v1.5';
/** The reference pins its default model to this commit (a model named by the user follows `main`). */
export const DEFAULT_HUB_REVISION = '617ca489d9e86b49b8167676d8220688b99db36e';

export function hubModelEmbedder(c: Record<string, unknown>, hub: HubSettings): TextEmbedder {
  const named = typeof c['model'] === 'string';
  const model = named ? (c['model'] as string) : DEFAULT_HUB_MODEL;
  const revision = typeof c['revision'] === 'string' ? c['revision'] : named ? undefined : DEFAULT_HUB_REVISION;
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
      const work = get().then((w) => w.embed(texts, deadline !== undefined));
      if (deadline === undefined) return work;
      // A query does not wait for a download or a load past its deadline; they go on, and a
      // later query finds the model ready.
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new EmbedError('runtime', `model \`${model}\` did not answer in time: it may still be downloading or loading`)),
          Math.max(0, deadline - Date.now()),
        );
      });
      work.catch(() => {});
      try {
        return await Promise.race([work, late]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
