// Documents similar to a document, by one embedder: its first embedding searched among the
// others (itself excluded), within what the filter allows.

import { ApiError } from '../../errors/api-error.js';
import type { Doc } from '../documents/primary-key.js';
import { projectFields } from '../documents/project.js';
import type { Engine } from '../engine.js';
import { filterDocids } from '../facets/index.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import { documentVectors, resolveEmbedder, semanticSearch, vectorPartOf, vectorScoreDetails } from '../vector/semantic-search.js';
import { formatDuration } from '../../util/step-trace.js';
import { stringifyJson } from '../../util/exact-json.js';

export interface SimilarQuery {
  id: string;
  embedder: string;
  offset?: number;
  limit?: number;
  filter?: unknown;
  attributesToRetrieve?: string[] | null;
  retrieveVectors?: boolean;
  showRankingScore?: boolean;
  showRankingScoreDetails?: boolean;
  showPerformanceDetails?: boolean;
  rankingScoreThreshold?: number | null;
}

function checkFilterType(filter: unknown): void {
  if (filter === undefined || filter === null || typeof filter === 'string' || Array.isArray(filter)) return;
  throw new ApiError('invalid_similar_filter', `Invalid syntax for the filter parameter: \`expected String, Array, found: ${stringifyJson(filter)}\`.`);
}

/** The document as shown: displayed attributes, then `attributesToRetrieve`, `_vectors` on demand. */
async function hitDocument(h: IndexHandle, docid: number, doc: Doc, p: SimilarQuery): Promise<Doc> {
  const displayed = h.meta.settings.displayedAttributes;
  let out = projectFields(projectFields(doc, displayed), p.attributesToRetrieve ?? null);
  out = { ...out };
  delete out['_vectors'];
  const vectorsShown = displayed.includes('*') || displayed.includes('_vectors');
  if (p.retrieveVectors && vectorsShown) out['_vectors'] = await documentVectors(h, docid, doc);
  return out;
}

export async function similarDocuments(engine: Engine, uid: string, p: SimilarQuery): Promise<Record<string, unknown>> {
  const started = performance.now();
  checkFilterType(p.filter);
  const h = engine.getIndex(uid);
  const embedder = resolveEmbedder(h, p.embedder, 'similar');
  const docid = h.ext.get(p.id);
  if (docid === undefined) throw new ApiError('not_found_similar_id', `Document \`${p.id}\` not found.`);
  const allowedList = filterDocids(h, p.filter, { code: 'invalid_similar_filter' });
  const offset = p.offset ?? 0;
  const limit = p.limit ?? 20;
  // The reference document's first embedding stands for it.
  const target = embedder.state?.docs.get(docid)?.slots.length ? ((await vectorPartOf(h)?.record(embedder.name, docid))?.vectors[0] ?? null) : null;
  let hits: { docid: number; similarity: number | null }[] = [];
  let total = 0;
  if (target) {
    const r = semanticSearch(h, embedder, {
      vector: target,
      limit: offset + limit,
      allowed: allowedList ? new Set(allowedList) : null,
      threshold: p.rankingScoreThreshold ?? null,
      exclude: docid,
    });
    // Only documents with embeddings are similar to anything.
    hits = r.hits.filter((x) => x.similarity !== null).slice(offset);
    total = r.candidates;
  }
  const docs = await engine.readDocs(engine.store, h, hits.map((x) => x.docid));
  const out: Doc[] = [];
  for (const [i, hit] of hits.entries()) {
    const doc = docs[i];
    if (!doc) continue;
    const shown = await hitDocument(h, hit.docid, doc, p);
    if (p.showRankingScore) shown['_rankingScore'] = hit.similarity ?? 0;
    if (p.showRankingScoreDetails) shown['_rankingScoreDetails'] = vectorScoreDetails(hit.similarity);
    out.push(shown);
  }
  const body: Record<string, unknown> = {
    hits: out,
    id: p.id,
    processingTimeMs: Math.floor(performance.now() - started),
    limit,
    offset,
    estimatedTotalHits: Math.min(total, h.meta.settings.pagination.maxTotalHits),
  };
  if (p.showPerformanceDetails) body['performanceDetails'] = { similar: formatDuration(performance.now() - started) };
  return body;
}
