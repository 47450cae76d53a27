// `useNetwork: true`: a query answered by the whole network instead of this instance alone. The
// query becomes one federated query per part of the network, sent there by the remote federated
// search (`federationOptions.remote`) and merged by ranking score:
// - without a leader, every remote of the network holds its own documents: one query per remote
//   (this instance included when it is one of them);
// - with a leader, the documents are sharded: one query per shard, sent to one remote owning
//   it (this instance when it owns it, else one drawn at random), restricted to the shard by
//   `_shard = "name"`, so that a document kept by several remotes is found once.

import type { Network } from '../engine/network/network.js';
import type { Federation, MultiSearchItem } from '../engine/search/multi-search.js';
import type { SearchQuery } from '../engine/search/answer-query.js';

/** One query of the partition: where it goes, and the filter restricting it to a shard. */
export interface NetworkPart {
  remote: string;
  shard: string | null;
}

/** The parts of the network a `useNetwork` query is sent to, in a stable order. */
export function networkParts(network: Network, random: () => number = Math.random): NetworkPart[] {
  if (network.leader === null) return Object.keys(network.remotes).sort().map((remote) => ({ remote, shard: null }));
  const parts: NetworkPart[] = [];
  for (const [shard, { remotes }] of Object.entries(network.shards).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (remotes.length === 0) continue;
    const remote = network.self !== null && remotes.includes(network.self) ? network.self : remotes[Math.floor(random() * remotes.length)]!;
    parts.push({ remote, shard });
  }
  return parts;
}

/** A filter that also keeps only the documents of `shard`, or of any of `shards` (array form: an AND of both). */
export function withShard(filter: unknown, shard: string | readonly string[]): unknown {
  const own = typeof shard === 'string' ? `_shard = ${JSON.stringify(shard)}` : `_shard IN [${shard.map((x) => JSON.stringify(x)).join(', ')}]`;
  if (filter === undefined || filter === null || (typeof filter === 'string' && filter.trim() === '')) return own;
  return Array.isArray(filter) ? [...(filter as unknown[]), own] : [filter, own];
}

/** Parameters that apply to the merged list, not to each query (moved to the federation). */
const FEDERATION_LEVEL = ['offset', 'limit', 'page', 'hitsPerPage', 'distinct', 'facets', 'showPerformanceDetails', 'useNetwork'] as const;

/**
 * A search query as the federated queries of a network search, each at `position` (the place
 * of the query in its request), and the federation its pagination, distinct and facets move to.
 */
export function partitionQuery(
  network: Network,
  indexUid: string,
  q: SearchQuery & { useNetwork?: boolean },
  position: number,
  weight: number | undefined,
): MultiSearchItem[] {
  const query: Record<string, unknown> = { ...q };
  for (const key of FEDERATION_LEVEL) delete query[key];
  return networkParts(network).map(({ remote, shard }) => {
    const item: MultiSearchItem = { ...(query as SearchQuery), indexUid, federationOptions: { remote, queryPosition: position, ...(weight !== undefined ? { weight } : {}) } };
    if (shard !== null) item.filter = withShard(q.filter, shard);
    if (item.filter === undefined) delete item.filter;
    return item;
  });
}

/** The federation of a single search sent to the network: its pagination, distinct and facets. */
export function federationOf(indexUid: string, q: SearchQuery): Federation {
  const fed: Federation = {};
  if (q.offset !== undefined) fed.offset = q.offset;
  if (q.limit !== undefined) fed.limit = q.limit;
  if (q.page !== undefined) fed.page = q.page;
  if (q.hitsPerPage !== undefined) fed.hitsPerPage = q.hitsPerPage;
  if (q.distinct !== undefined && q.distinct !== null) fed.distinct = q.distinct;
  if (q.facets !== undefined && q.facets !== null && q.facets.length > 0) fed.facetsByIndex = { [indexUid]: q.facets };
  if (q.showPerformanceDetails !== undefined) fed.showPerformanceDetails = q.showPerformanceDetails;
  return fed;
}

/**
 * A federated answer as the answer of a search on one index: the hits keep their
 * `_federation` (which remote found each), the facets of the index become the search's, and
 * the remotes that failed are listed under `remoteErrors`.
 */
export function asSearchAnswer(out: Record<string, unknown>, indexUid: string, query: string): Record<string, unknown> {
  const answer: Record<string, unknown> = { hits: out['hits'], query, processingTimeMs: out['processingTimeMs'] };
  for (const key of ['limit', 'offset', 'estimatedTotalHits', 'hitsPerPage', 'page', 'totalPages', 'totalHits']) {
    if (out[key] !== undefined) answer[key] = out[key];
  }
  const facets = (out['facetsByIndex'] as Record<string, { distribution: unknown; stats: unknown }> | undefined)?.[indexUid];
  if (facets) {
    answer['facetDistribution'] = facets.distribution;
    answer['facetStats'] = facets.stats;
  }
  answer['requestUid'] = out['requestUid'];
  // A search on one index has one query: its metadata is an object, not a list.
  if (Array.isArray(out['metadata'])) answer['metadata'] = out['metadata'][0];
  if (out['performanceDetails'] !== undefined) answer['performanceDetails'] = out['performanceDetails'];
  answer['remoteErrors'] = out['remoteErrors'] ?? {};
  return answer;
}
