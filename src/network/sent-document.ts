// What an instance sends another of its own data (documents moved by a topology change, an
// export): its documents, read in chunks, each as one NDJSON line, and its settings.

import type { Doc } from '../engine/documents/primary-key.js';
import type { Engine } from '../engine/engine.js';
import type { IndexHandle } from '../engine/indexes/index-handle.js';
import { settingsView, type IndexSettings } from '../engine/settings/settings.js';
import { retrievedVectors } from '../engine/vector/semantic-search.js';
import { stringifyJson } from '../util/exact-json.js';

/** Documents read from the store at a time. */
const READ_CHUNK = 500;

/** The documents `docids` (ascending) of index `h` that still exist, a chunk at a time. */
export async function* documentsOf(engine: Engine, h: IndexHandle, docids: readonly number[]): AsyncGenerator<Doc> {
  for (let i = 0; i < docids.length; i += READ_CHUNK) {
    for (const doc of await engine.readDocs(engine.store, h, docids.slice(i, i + READ_CHUNK))) if (doc !== null) yield doc;
  }
}

/**
 * A document as sent to another instance, one NDJSON line: with its embeddings in `_vectors`
 * (and whether to regenerate them) when the index has embedders, so that the remote need not
 * compute them again; its big integers to the digit.
 */
export async function sentDocument(h: IndexHandle, doc: Doc): Promise<string> {
  if (Object.keys(h.meta.settings.embedders).length === 0) return stringifyJson(doc);
  const vectors = await retrievedVectors(h, doc);
  return stringifyJson({ ...doc, _vectors: vectors });
}

/**
 * Every setting, embedder secrets included (the remote must be able to embed); the
 * experimental ones only when set, as a remote with their switch off refuses them.
 */
export function sentSettings(s: IndexSettings): Record<string, unknown> {
  const view = settingsView(s);
  view['embedders'] = structuredClone(s.embedders);
  if (Object.keys(s.chat).length === 0) delete view['chat'];
  if (view['vectorStore'] === 'stable') delete view['vectorStore'];
  return view;
}
