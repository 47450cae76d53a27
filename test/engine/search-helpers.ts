// In-memory indexes for engine tests: documents go through the same build as the node's
// batches, without RocksDB or HTTP.

import type { Doc } from '../../src/engine/documents/primary-key.js';
import { buildFromDocuments, type IndexState } from '../../src/engine/fulltext/index-state.js';
import { Yielder } from '../../src/util/yielder.js';
import { executeSearch, type SearchOutcome, type SearchRequest } from '../../src/engine/search/rank-query.js';
import { SearchScratch } from '../../src/engine/search/scratch.js';
import { defaultSettings, type IndexSettings } from '../../src/engine/settings/settings.js';

export async function buildIndex(docs: Doc[], patch: Partial<IndexSettings> = {}): Promise<IndexState> {
  const settings = { ...defaultSettings(), ...patch };
  const staged = await buildFromDocuments(settings, docs.map((d, i) => [i, d] as [number, Doc]), new Yielder());
  staged.commitTables();
  return staged.state;
}

const scratch = new SearchScratch();

export function search(state: IndexState, q: string | null, opts: Partial<SearchRequest> = {}): SearchOutcome {
  return executeSearch(state, state.settings, {
    q,
    offset: 0,
    limit: 20,
    evaluate: 0,
    matchingStrategy: 'last',
    attributesToSearchOn: null,
    sort: [],
    distinct: null,
    rankingScoreThreshold: null,
    locales: null,
    allowed: null,
    exhaustiveCount: false,
    scores: true,
    ...opts,
  }, scratch);
}

/** Hit ids in rank order. */
export function ids(state: IndexState, docs: Doc[], q: string | null, opts: Partial<SearchRequest> = {}): unknown[] {
  return search(state, q, opts).hits.map((h) => docs[h.docid]!['id']);
}
