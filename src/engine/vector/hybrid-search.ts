// How a search request with `hybrid` / `vector` runs, on top of the keyword search: the
// reference's choice of search kind (keyword only, semantic only, or both), the query
// vector, and the merge of both result lists by weighted score.

import { ApiError } from '../../errors/api-error.js';
import type { IndexHandle } from '../indexes/index-handle.js';
import type { ScoreValue } from '../search/rank-query.js';
import { embedSearchQuery } from './query-embedding.js';
import {
  hybridMerge,
  keywordGoodEnough,
  resolveEmbedder,
  semanticSearch,
  vectorScoreDetails,
  type ResolvedEmbedder,
  type SemanticOrder,
} from './semantic-search.js';

export interface HybridParams {
  q?: string | null;
  hybrid?: { embedder: string; semanticRatio?: number } | null;
  vector?: number[] | null;
  /** What the search fragments of the embedder read as `media` (POST only). */
  media?: Record<string, unknown> | null;
}

/** The part of a keyword outcome the merge reads and replaces. */
export interface RankedLike {
  docid: number;
  score: number;
  details: Record<string, Record<string, unknown>>;
  /** How a federated search compares it with hits of other queries. */
  values: ScoreValue[];
}

export interface OutcomeLike {
  hits: RankedLike[];
  candidates: number;
  universe: Uint32Array;
}

export const DEFAULT_SEMANTIC_RATIO = 0.5;

export class SemanticPlan {
  semanticHitCount = 0;
  queryVector: Float32Array | null;

  private constructor(
    private readonly h: IndexHandle,
    readonly kind: 'semantic' | 'hybrid',
    readonly embedder: ResolvedEmbedder,
    readonly ratio: number,
    private readonly q: string | null,
    vector: Float32Array | null,
    private readonly media: Record<string, unknown> | null,
  ) {
    this.queryVector = vector;
  }

  /**
   * The reference's search kind: no `hybrid` or ratio 0 is a keyword search (null here),
   * ratio 1 or no query text is semantic only, anything else is hybrid.
   */
  static of(h: IndexHandle, p: HybridParams): SemanticPlan | null {
    const q = p.q && p.q.trim() !== '' ? p.q : null;
    const vector = p.vector ?? null;
    const media = p.media ?? null;
    if (media && vector) throw new ApiError('invalid_search_media_and_vector', 'Invalid request: both `media` and `vector` parameters are present.');
    if (!p.hybrid) {
      if (vector) throw new ApiError('missing_search_hybrid', 'Invalid request: missing `hybrid` parameter when `vector` is present.');
      if (media) throw new ApiError('missing_search_hybrid', 'Invalid request: missing `hybrid` parameter when `media` is present.');
      return null;
    }
    const ratio = p.hybrid.semanticRatio ?? DEFAULT_SEMANTIC_RATIO;
    if (ratio === 0) return null;
    if (q === null && !vector && !media) return null;
    const embedder = resolveEmbedder(h, p.hybrid.embedder, 'search', vector?.length);
    if (media && !embedder.runtime.fragments?.search.length) {
      throw new ApiError(
        'invalid_search_media',
        `Invalid request: \`media\` is only used through search fragments, and embedder \`${embedder.name}\` has no \`searchFragments\`.\n  - Hint: remove \`media\`, or choose an embedder with \`searchFragments\` in \`hybrid.embedder\`.`,
      );
    }
    const kind = ratio === 1 || q === null ? 'semantic' : 'hybrid';
    return new SemanticPlan(h, kind, embedder, ratio, q, vector ? Float32Array.from(vector) : null, media);
  }

  /** What to ask the keyword search: nothing but the universe when semantic only, all hits up to the window's end when hybrid. */
  keywordWindow(w: { offset: number; limit: number }): { q: string | null; offset: number; limit: number } {
    if (this.kind === 'semantic') return { q: null, offset: 0, limit: 0 };
    return { q: this.q, offset: 0, limit: w.offset + w.limit };
  }

  async merge(
    keyword: OutcomeLike,
    w: { offset: number; limit: number },
    allowed: Uint8Array | null,
    threshold: number | null,
    ordering: { distinct: ((d: number) => string[]) | null; order: SemanticOrder | null } = { distinct: null, order: null },
  ): Promise<OutcomeLike> {
    const wanted = w.offset + w.limit;
    // `media` says what the keyword results cannot know: its semantic side always runs.
    if (this.kind === 'hybrid' && !this.queryVector && !this.media && keywordGoodEnough(keyword.hits, wanted, this.ratio)) {
      return { ...keyword, hits: keyword.hits.slice(w.offset, wanted) };
    }
    if (!this.queryVector) {
      try {
        this.queryVector = await embedSearchQuery(this.embedder, { q: this.q, media: this.media });
      } catch (e) {
        // Hybrid falls back to the keyword results when the query text cannot be embedded.
        if (this.kind === 'hybrid' && !this.media) return { ...keyword, hits: keyword.hits.slice(w.offset, wanted) };
        throw e;
      }
    }
    const allowedSet = allowed ? new Set(maskDocids(allowed)) : null;
    const sem = semanticSearch(this.h, this.embedder, {
      vector: this.queryVector,
      limit: wanted,
      allowed: allowedSet,
      threshold,
      distinct: ordering.distinct,
      order: ordering.order,
    });
    // Semantic candidates are every allowed document: what the placeholder search found when
    // semantic only, the allowed set (or the whole index) when hybrid.
    const universe =
      this.kind === 'semantic'
        ? keyword.universe
        : allowed
          ? Uint32Array.from(maskDocids(allowed))
          : Uint32Array.from(this.h.ext.values()).sort();
    const semHit = (docid: number, similarity: number | null): RankedLike => ({
      docid,
      score: similarity ?? 0,
      details: vectorScoreDetails(similarity),
      values: [{ rank: { rank: Math.round((similarity ?? 0) * 1e6), max: 1e6 } }],
    });
    if (this.kind === 'semantic') {
      const hits = sem.hits.slice(w.offset).map((x) => semHit(x.docid, x.similarity));
      this.semanticHitCount = hits.length;
      // The placeholder search counted distinct values exactly when asked to.
      return { hits, candidates: threshold === null ? Math.min(sem.candidates, keyword.candidates) : sem.candidates, universe };
    }
    const byDoc = new Map(keyword.hits.map((k) => [k.docid, k]));
    const simOf = new Map(sem.hits.map((s) => [s.docid, s.similarity]));
    const merged = hybridMerge(keyword.hits, sem.hits, this.ratio, w.offset, w.limit, ordering.distinct);
    this.semanticHitCount = merged.semanticHitCount;
    const hits = merged.hits.map((m) => (m.semantic ? semHit(m.docid, simOf.get(m.docid) ?? null) : byDoc.get(m.docid)!));
    const candidates = threshold !== null ? new Set([...keyword.universe, ...sem.hits.map((s) => s.docid)]).size : Math.max(keyword.candidates, sem.candidates);
    return { hits, candidates, universe };
  }
}

function maskDocids(mask: Uint8Array): number[] {
  const out: number[] = [];
  for (let d = 0; d < mask.length; d++) if (mask[d]) out.push(d);
  return out;
}
