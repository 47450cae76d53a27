import type { Doc } from '../engine/documents/primary-key.js';
import type { IndexHandle } from '../engine/indexes/index-handle.js';
import { retrievedVectors } from '../engine/vector/semantic-search.js';
import { stringifyJson } from '../util/exact-json.js';

/**
 * A document as sent to another instance (moved or exported), one NDJSON line: with its
 * embeddings in `_vectors` (and whether to regenerate them) when the index has embedders, so
 * that the remote need not compute them again; its big integers to the digit.
 */
export async function sentDocument(h: IndexHandle, doc: Doc): Promise<string> {
  if (Object.keys(h.meta.settings.embedders).length === 0) return stringifyJson(doc);
  const vectors = await retrievedVectors(h, doc);
  return stringifyJson({ ...doc, _vectors: vectors });
}
