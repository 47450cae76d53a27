// Facet searches and document fetches answered by the whole network (`useNetwork: true`), as
// the reference answers them: the request goes, as it is, to one instance per part of the
// network (see `networkParts`), restricted to its shard when the network shards, and the
// answers are merged here. Facet values add up their counts, in the facet's order (values, or
// counts); documents merge in the order of `sort` (each instance sends the values it sorted
// by), else part after part, and `offset`/`limit` apply once to the merged list. An instance
// that fails is reported under `remoteErrors` and the others still answer.

import { ApiError, toErrorBody, type ErrorBody } from '../errors/api-error.js';
import type { Network } from '../engine/network/network.js';
import type { Doc } from '../engine/documents/primary-key.js';
import type { DocumentsPage, DocumentsQuery } from '../engine/documents/list-documents.js';
import type { FacetSearchAnswer } from '../engine/search/facet-search-query.js';
import type { FacetHit } from '../engine/facets/facet-search.js';
import { comparePartial, fromWire, type Weighted } from '../engine/search/federation.js';
import { byteOrder } from '../engine/filter/rules.js';
import { networkParts, withShard } from './network-search.js';
import { readRemote, SEARCH_DEADLINE_MS, type RemoteRead } from './remote-search.js';

const HINT_VERSION = '\n  - hint: check that the remote instance is a Trine or Meilisearch instance running the same version';

/** The instances a network read goes to: this one (for which shards), and the others. */
function splitParts(network: Network): { local: { shards: string[] | null } | null; remote: { remote: string; shard: string | null }[] } {
  const parts = networkParts(network);
  const mine = parts.filter((p) => p.remote === network.self);
  const local = mine.length === 0 ? null : { shards: mine.some((p) => p.shard === null) ? null : mine.map((p) => p.shard!) };
  return { local, remote: parts.filter((p) => p.remote !== network.self) };
}

function restricted(filter: unknown, shard: string | readonly string[] | null): unknown {
  return shard === null ? filter : withShard(filter, shard);
}

function isFacetHit(v: unknown): v is FacetHit {
  return typeof v === 'object' && v !== null && typeof (v as FacetHit).value === 'string' && typeof (v as FacetHit).count === 'number';
}

const facetRead = (uid: string): RemoteRead => ({
  path: `/indexes/${encodeURIComponent(uid)}/facet-search`,
  action: 'search',
  answer: 'a facet search response',
  valid: (p) => Array.isArray(p['facetHits']) && (p['facetHits'] as unknown[]).every(isFacetHit),
});

/** Facet values of several instances as one list: counts of equal values added, in the facet's order. */
export function mergeFacetHits(lists: readonly FacetHit[][], order: 'alpha' | 'count'): FacetHit[] {
  const counts = new Map<string, number>();
  for (const list of lists) for (const h of list) counts.set(h.value, (counts.get(h.value) ?? 0) + h.count);
  const hits = [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => byteOrder(a.value, b.value));
  // A stable sort: equal counts keep the order of their values.
  if (order === 'count') hits.sort((a, b) => b.count - a.count);
  return hits;
}

/**
 * A facet search over the network. `local` answers the part this instance holds, given the
 * filter restricted to its shards; `order` is how the facet's values are sorted here.
 */
export async function facetSearchOverNetwork(
  network: Network,
  uid: string,
  body: Record<string, unknown> & { filter?: unknown; facetQuery?: string | null },
  order: 'alpha' | 'count',
  local: (filter: unknown) => FacetSearchAnswer,
): Promise<FacetSearchAnswer & { remoteErrors: Record<string, ErrorBody> }> {
  const { local: own, remote } = splitParts(network);
  const deadline = Date.now() + SEARCH_DEADLINE_MS;
  const { useNetwork: _, ...query } = body;
  const pending = Promise.allSettled(
    remote.map((p) => readRemote(network.remotes[p.remote]!, facetRead(uid), { ...query, filter: restricted(body.filter ?? null, p.shard), useNetwork: false }, deadline)),
  );
  const mine = own ? local(restricted(body.filter ?? null, own.shards)) : { facetHits: [], facetQuery: body.facetQuery ?? null, processingTimeMs: 0 };
  const lists: FacetHit[][] = [mine.facetHits];
  const remoteErrors: Record<string, ErrorBody> = {};
  (await pending).forEach((s, i) => {
    if (s.status === 'fulfilled') lists.push(s.value['facetHits'] as FacetHit[]);
    else remoteErrors[remote[i]!.remote] = toErrorBody(s.reason);
  });
  return { facetHits: mergeFacetHits(lists, order), facetQuery: mine.facetQuery, processingTimeMs: mine.processingTimeMs, remoteErrors };
}

const documentsRead = (uid: string): RemoteRead => ({
  path: `/indexes/${encodeURIComponent(uid)}/documents/fetch`,
  action: 'documents.get',
  answer: 'a documents response',
  valid: (p) => Array.isArray(p['results']) && typeof p['total'] === 'number',
});

interface DocumentList {
  docs: { doc: Doc; sort: Weighted[] }[];
  total: number;
}

/** A remote's documents with the sort values each carries in `_federation` (dropped from the document). */
function remoteDocuments(parsed: Record<string, unknown>): DocumentList {
  const docs = (parsed['results'] as unknown[]).map((d) => {
    if (typeof d !== 'object' || d === null) throw new ApiError('remote_bad_response', `could not parse response from the remote host as a documents response${HINT_VERSION}`);
    const { _federation: fed, ...doc } = d as Record<string, unknown>;
    if (fed === undefined) throw new ApiError('remote_bad_response', `remote document does not contain \`._federation\`${HINT_VERSION}`);
    const sort = fromWire((fed as Record<string, unknown> | null)?.['weightedScoreValues']);
    if (sort === null) throw new ApiError('remote_bad_response', `could not parse weighted score values in the remote document${HINT_VERSION}`);
    return { doc, sort };
  });
  return { docs, total: parsed['total'] as number };
}

/** Lists already in sort order merged into one: by sort values, earlier lists first on ties. */
function mergeDocuments(lists: readonly DocumentList[]): Doc[] {
  const heads = lists.map(() => 0);
  const out: Doc[] = [];
  for (;;) {
    let best = -1;
    for (let i = 0; i < lists.length; i++) {
      if (heads[i]! >= lists[i]!.docs.length) continue;
      if (best < 0 || (comparePartial(lists[i]!.docs[heads[i]!]!.sort, lists[best]!.docs[heads[best]!]!.sort) ?? 0) > 0) best = i;
    }
    if (best < 0) return out;
    out.push(lists[best]!.docs[heads[best]!]!.doc);
    heads[best]!++;
  }
}

/** A page's documents with their sort values (see `listDocuments`'s `withSortValues`). */
function localDocuments(page: DocumentsPage): DocumentList {
  return { docs: page.results.map((doc, i) => ({ doc, sort: fromWire(page.sortValues?.[i] ?? []) ?? [] })), total: page.total };
}

/**
 * A documents fetch over the network. Each part answers its first `offset + limit` documents;
 * `local` answers this instance's parts (with sort values), given the query restricted to a shard.
 */
export async function documentsOverNetwork(
  network: Network,
  uid: string,
  p: DocumentsQuery,
  local: (q: DocumentsQuery) => Promise<DocumentsPage>,
): Promise<DocumentsPage & { remoteErrors?: Record<string, ErrorBody> }> {
  const offset = p.offset ?? 0;
  const limit = p.limit ?? 20;
  const parts = networkParts(network);
  const deadline = Date.now() + SEARCH_DEADLINE_MS;
  const { useNetwork: _, ...query } = p as DocumentsQuery & { useNetwork?: boolean };
  const window = { ...query, offset: 0, limit: offset + limit };
  const settled = await Promise.allSettled(
    parts.map(async (part) => {
      const filter = restricted(p.filter ?? null, part.shard);
      if (part.remote === network.self) return localDocuments(await local({ ...window, filter }));
      return remoteDocuments(await readRemote(network.remotes[part.remote]!, documentsRead(uid), { ...window, filter, useNetwork: false }, deadline));
    }),
  );
  const lists: DocumentList[] = [];
  const remoteErrors: Record<string, ErrorBody> = {};
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') lists.push(s.value);
    // This instance's own part fails the request as a local fetch would.
    else if (parts[i]!.remote === network.self) throw s.reason;
    else remoteErrors[parts[i]!.remote] = toErrorBody(s.reason);
  });
  const results = mergeDocuments(lists).slice(offset, offset + limit);
  const page: DocumentsPage & { remoteErrors?: Record<string, ErrorBody> } = { results, offset, limit, total: lists.reduce((n, l) => n + l.total, 0) };
  if (Object.keys(remoteErrors).length > 0) page.remoteErrors = remoteErrors;
  return page;
}
