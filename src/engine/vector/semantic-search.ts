// Semantic search over an index's `vectors` part, and the pieces the search route combines
// with keyword results: which embedder, the query vector, semantic hits with their
// `vectorSort` details, the hybrid merge and the `_vectors` shown with `retrieveVectors`.

import { ApiError } from '../../errors/api-error.js';
import { CompositeIndex } from '../structures/composite-index.js';
import { extractDocumentId, type Doc } from '../documents/primary-key.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import { shiftScore, similarityOf } from './distance.js';
import { queryEmbeddingError } from './embed-error.js';
import type { RuntimeEmbedder } from './embedders.js';
import type { EmbedderState } from './embedder-state.js';
import { VECTORS_PART, type VectorIndex } from './vector-index.js';
import type { RankingContext, RankingRule } from '../ranking/rule.js';
import { bucketSort, firstOfDistinct } from '../search/bucket-sort.js';

export function vectorPartOf(h: IndexHandle): VectorIndex | null {
  return h.search instanceof CompositeIndex ? (h.search.part<VectorIndex>(VECTORS_PART) ?? null) : null;
}

export interface ResolvedEmbedder {
  name: string;
  runtime: RuntimeEmbedder;
  state: EmbedderState | null;
  dims: number | undefined;
}

/** The configured embedder `name`; `vectorLength` is checked against its dimensions. */
export function resolveEmbedder(h: IndexHandle, name: string, route: 'search' | 'similar', vectorLength?: number): ResolvedEmbedder {
  const part = vectorPartOf(h);
  const code = route === 'search' ? 'invalid_search_embedder' : 'invalid_similar_embedder';
  let runtime: RuntimeEmbedder | null = null;
  try {
    runtime = part?.embedder(name, h.meta.settings) ?? null;
  } catch (e) {
    throw queryEmbeddingError(e);
  }
  if (!part || !runtime) throw new ApiError(code, `Cannot find embedder with name \`${name}\`.`);
  const state = part.embedders.get(name) ?? null;
  const dims = state?.dims ?? runtime.configuredDimensions ?? runtime.search?.dimensions ?? undefined;
  if (vectorLength !== undefined && dims !== undefined && vectorLength !== dims) {
    throw new ApiError('invalid_vector_dimensions', `Invalid vector dimensions: expected: \`${dims}\`, found: \`${vectorLength}\`.`);
  }
  return { name, runtime, state, dims };
}

/** Embeds a search query with the embedder's search side, giving up after `timeoutMs`. */
export async function embedQuery(e: ResolvedEmbedder, q: string, timeoutMs = 10_000): Promise<Float32Array> {
  const te = e.runtime.search;
  if (!te) {
    throw new ApiError(
      'vector_embedding_error',
      `Error while generating embeddings: user error: attempt to embed the following text in a configuration where embeddings must be user provided:\n  - \`${q}\``,
    );
  }
  try {
    const [v] = await te.embed([q], Date.now() + timeoutMs);
    return v!;
  } catch (err) {
    throw queryEmbeddingError(err);
  }
}

export interface SemanticHit {
  docid: number;
  /** Shifted by the embedder's `distribution`; null for a document without embeddings. */
  similarity: number | null;
}

export interface SemanticResult {
  /** Best first, at most `limit`; documents without embeddings come last. */
  hits: SemanticHit[];
  /** Documents matching: every allowed document (those without embeddings rank last). */
  candidates: number;
}

export interface SemanticQuery {
  vector: Float32Array;
  /** Hits wanted, counted from the first (offset included). */
  limit: number;
  /** Allowed docids (the filter), null for every document. */
  allowed: ReadonlySet<number> | null;
  /** Hits scoring below are dropped, and not counted. */
  threshold?: number | null;
  /** Never returned (the reference document of `similar`). */
  exclude?: number;
  /** Distinct keys of a document (the `distinct` attribute): one hit per key. */
  distinct?: ((d: number) => string[]) | null;
  /** Sort rules before and after the vector sort, and the context they read. */
  order?: SemanticOrder | null;
}

export interface SemanticOrder {
  before: readonly RankingRule[];
  after: readonly RankingRule[];
  ctx: RankingContext;
}

/**
 * The reference's vector sort: documents by similarity to the query, then the documents
 * without embeddings (similarity null), in docid order; sort rules placed before the
 * vector sort in the ranking rules order first, those after it break ties; one document
 * per distinct value.
 */
export function semanticSearch(h: IndexHandle, e: ResolvedEmbedder, q: SemanticQuery): SemanticResult {
  const allowedHas = (d: number) => d !== q.exclude && (!q.allowed || q.allowed.has(d));
  const excluded = q.exclude !== undefined && (q.allowed ? q.allowed.has(q.exclude) : h.ext.size > 0) ? 1 : 0;
  const total = (q.allowed ? q.allowed.size : h.ext.size) - excluded;
  const state = e.state;
  const threshold = q.threshold ?? null;
  const filtered = q.allowed || q.exclude !== undefined ? allowedHas : null;
  const similar = (found: { docid: number; dot: number }[]): SemanticHit[] =>
    found.map((f) => ({ docid: f.docid, similarity: shiftScore(similarityOf(f.dot), e.runtime.distribution) }));
  if (q.order && q.order.before.length > 0) return sortedFirst(h, e, q, total, allowedHas, similar);
  const allowedList = q.allowed ? [...q.allowed].filter(allowedHas) : undefined;
  // With a threshold, every candidate is scored so that totals count only those above it.
  let k = threshold !== null ? total : Math.min(q.limit, total);
  for (;;) {
    const found = state ? state.search(q.vector, k, filtered, allowedList) : [];
    let hits = similar(found);
    let candidates = total;
    if (threshold !== null) {
      hits = hits.filter((x) => x.similarity! >= threshold);
      candidates = hits.length;
    } else if (found.length < k || k >= total) {
      // Fewer documents with embeddings than asked for: the others follow, in docid order.
      const seen = new Set(hits.map((x) => x.docid));
      const rest = [...(q.allowed ?? h.ext.values())]
        .filter((d) => allowedHas(d) && !seen.has(d) && !state?.docs.get(d)?.slots.length)
        .sort((a, b) => a - b);
      for (const d of rest) {
        if (!q.distinct && hits.length >= q.limit) break;
        hits.push({ docid: d, similarity: null });
      }
    }
    if (q.order && q.order.after.length > 0) hits = breakTies(hits, q.order);
    if (!q.distinct) return { hits: hits.slice(0, q.limit), candidates };
    const unique = distinctHits(hits, q.distinct, q.limit);
    // Duplicates took room: ask for more neighbours, until the page is full or none are left.
    if (unique.length >= q.limit || threshold !== null || k >= total || found.length < k) return { hits: unique, candidates };
    k = Math.min(total, k * 4);
  }
}

/** The first hit of each distinct value, in order, `limit` at most. */
function distinctHits(hits: readonly SemanticHit[], distinct: (d: number) => string[], limit: number): SemanticHit[] {
  const seen = new Set<string>();
  const out: SemanticHit[] = [];
  for (const x of hits) {
    if (!firstOfDistinct(seen, distinct(x.docid))) continue;
    out.push(x);
    if (out.length >= limit) break;
  }
  return out;
}

/** Hits of equal similarity (documents without embeddings, mostly) ordered by the sort rules after the vector sort. */
function breakTies(hits: SemanticHit[], order: SemanticOrder): SemanticHit[] {
  const out: SemanticHit[] = [];
  for (let i = 0; i < hits.length; ) {
    let j = i + 1;
    while (j < hits.length && hits[j]!.similarity === hits[i]!.similarity) j++;
    if (j - i === 1) out.push(hits[i]!);
    else {
      // Ordered by the keyword search's bucket sort, remaining ties in docid order.
      const docs = Uint32Array.from(hits.slice(i, j), (x) => x.docid).sort();
      const similarity = hits[i]!.similarity;
      const sorted = bucketSort({
        ctx: order.ctx,
        rules: order.after,
        universe: docs,
        offset: 0,
        limit: docs.length,
        distinct: null,
        threshold: null,
        deadline: Infinity,
        evaluate: 0,
      });
      for (const docid of sorted.hits) out.push({ docid, similarity });
    }
    i = j;
  }
  return out;
}

/**
 * Sort rules come before the vector sort: the candidates are split by them first, and only
 * the buckets that reach the page are ordered by similarity (exactly, within the bucket).
 */
function sortedFirst(
  h: IndexHandle,
  e: ResolvedEmbedder,
  q: SemanticQuery,
  total: number,
  allowedHas: (d: number) => boolean,
  similar: (found: { docid: number; dot: number }[]) => SemanticHit[],
): SemanticResult {
  const order = q.order!;
  const state = e.state;
  const sims = new Map<number, number | null>();
  const score = (docs: ArrayLike<number>): void => {
    const list = Array.from(docs).filter((d) => !sims.has(d));
    if (list.length === 0) return;
    const set = new Set(list);
    for (const x of similar(state ? state.search(q.vector, list.length, (d) => set.has(d), list) : [])) sims.set(x.docid, x.similarity);
    for (const d of list) if (!sims.has(d)) sims.set(d, null);
  };
  let universe = Uint32Array.from([...(q.allowed ?? h.ext.values())].filter(allowedHas)).sort();
  const threshold = q.threshold ?? null;
  let candidates = total;
  if (threshold !== null) {
    score(universe);
    universe = universe.filter((d) => (sims.get(d) ?? -Infinity) >= threshold);
    candidates = universe.length;
  }
  const vectorSort: RankingRule = {
    name: 'vectorSort',
    isSort: false,
    usesMatches: false,
    costs(_ctx, docs) {
      score(docs);
      const rank = Array.from(docs, (_, i) => i).sort((a, b) => (sims.get(docs[b]!) ?? -Infinity) - (sims.get(docs[a]!) ?? -Infinity) || a - b);
      const out = new Int32Array(docs.length);
      // Equal similarities share a cost, so that the rules after it can order them.
      for (let r = 0, cost = 0; r < rank.length; r++) {
        if (r > 0 && sims.get(docs[rank[r]!]!) !== sims.get(docs[rank[r - 1]!]!)) cost = r;
        out[rank[r]!] = cost;
      }
      return out;
    },
    ranks: () => [],
    detail: (_ctx, d, _cost, o) => ['vectorSort', { order: o, similarity: sims.get(d) ?? null }],
  };
  const sorted = bucketSort({
    ctx: order.ctx,
    rules: [...order.before, vectorSort, ...order.after],
    universe,
    offset: 0,
    limit: q.limit,
    distinct: q.distinct ?? null,
    threshold: null,
    deadline: Infinity,
    evaluate: 0,
  });
  score(sorted.hits);
  return { hits: sorted.hits.map((d) => ({ docid: d, similarity: sims.get(d) ?? null })), candidates };
}

/** `_rankingScoreDetails` of a semantic hit. */
export function vectorScoreDetails(similarity: number | null): Record<string, Record<string, unknown>> {
  return { vectorSort: { order: 0, similarity } };
}

/** A keyword hit as the hybrid merge needs it. */
export interface KeywordHit {
  docid: number;
  score: number;
}

export interface MergedHit {
  docid: number;
  score: number;
  semantic: boolean;
}

/**
 * Whether the keyword results alone answer a hybrid query: enough of them, each scoring
 * well even once weighted by `1 - semanticRatio` (the reference's shortcut).
 */
export function keywordGoodEnough(keyword: readonly KeywordHit[], wanted: number, ratio: number): boolean {
  return keyword.length >= wanted && keyword.every((k) => k.score * (1 - ratio) >= 0.45);
}

/**
 * Keyword and semantic results interleaved by weighted score (keyword × (1 − ratio),
 * semantic × ratio; semantic first on ties), each document (and distinct value) once, then
 * `offset`/`limit`.
 */
export function hybridMerge(
  keyword: readonly KeywordHit[],
  semantic: readonly SemanticHit[],
  ratio: number,
  offset: number,
  limit: number,
  distinct: ((d: number) => string[]) | null = null,
): { hits: MergedHit[]; semanticHitCount: number } {
  const out: MergedHit[] = [];
  const seen = new Set<number>();
  const seenKeys = new Set<string>();
  let i = 0;
  let j = 0;
  let skipped = 0;
  let semanticHitCount = 0;
  while ((i < keyword.length || j < semantic.length) && out.length < limit) {
    const k = keyword[i];
    const s = semantic[j];
    const sScore = s ? (s.similarity ?? 0) * ratio : -Infinity;
    const kScore = k ? k.score * (1 - ratio) : -Infinity;
    const takeSemantic = s !== undefined && (k === undefined || sScore >= kScore);
    const docid = takeSemantic ? s!.docid : k!.docid;
    const score = takeSemantic ? (s!.similarity ?? 0) : k!.score;
    if (takeSemantic) j++;
    else i++;
    if (seen.has(docid)) continue;
    seen.add(docid);
    // Each side is distinct already; across them, the better-scored document of a value stays.
    if (distinct && !firstOfDistinct(seenKeys, distinct(docid))) continue;
    if (skipped < offset) {
      skipped++;
      continue;
    }
    out.push({ docid, score, semantic: takeSemantic });
    if (takeSemantic) semanticHitCount++;
  }
  return { hits: out, semanticHitCount };
}

/**
 * `_vectors` of a document as `retrieveVectors` shows it: every configured embedder with
 * its embeddings and whether they are regenerated, plus what the document gave for
 * embedders that are not configured.
 */
export async function documentVectors(h: IndexHandle, docid: number, doc: Doc): Promise<Record<string, unknown>> {
  const part = vectorPartOf(h);
  const out: Record<string, unknown> = {};
  const raw = doc['_vectors'];
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) {
    for (const [k, v] of Object.entries(raw)) if (!(k in h.meta.settings.embedders)) out[k] = v;
  }
  for (const name of Object.keys(h.meta.settings.embedders).sort()) {
    const entry = part?.embedders.get(name)?.docs.get(docid);
    const record = entry && entry.slots.length > 0 ? await part!.record(name, docid) : null;
    const userSource = h.meta.settings.embedders[name]!['source'] === 'userProvided';
    out[name] = {
      embeddings: (record?.vectors ?? []).map((v) => Array.from(v)),
      regenerate: entry ? entry.regenerate && !entry.userProvided : !userSource,
    };
  }
  return out;
}

/** {@link documentVectors} of a stored document, found by its id. */
export async function retrievedVectors(h: IndexHandle, doc: Doc): Promise<Record<string, unknown>> {
  let docid: number | undefined;
  try {
    docid = h.meta.primaryKey ? h.ext.get(extractDocumentId(doc, h.meta.primaryKey)) : undefined;
  } catch {
    docid = undefined;
  }
  return documentVectors(h, docid ?? -1, doc);
}

/** `numberOfEmbeddings` and `numberOfEmbeddedDocuments` of the index stats, over every embedder. */
export function embeddingCounts(h: IndexHandle): { embeddings: number; documents: number } {
  const docs = new Set<number>();
  let embeddings = 0;
  for (const state of vectorPartOf(h)?.embedders.values() ?? []) {
    for (const [docid, e] of state.docs) {
      if (e.slots.length === 0) continue;
      docs.add(docid);
      embeddings += e.slots.length;
    }
  }
  return { embeddings, documents: docs.size };
}
