// The queries of a federated search meant for other instances (`federationOptions.remote`):
// each remote gets one federated multi-search of its queries, with its search key and the
// `Meili-Proxy-Search` header, which makes it add each hit's weighted score values to
// `_federation` so that its hits can be merged with the local ones rule by rule. A remote that
// fails is reported under `remoteErrors`, as the reference does, and the search goes on
// without its hits.

import { ApiError, toErrorBody, type ErrorBody } from '../errors/api-error.js';
import type { Remote } from '../engine/network/network.js';
import { fromWire, type MergedHit } from '../engine/search/federation.js';
import type { RemoteHits } from '../engine/search/multi-search.js';
import { mayHoldBigIntegers, parseJson } from '../util/exact-json.js';

/** The header marking a search proxied from another instance. */
export const PROXY_SEARCH_HEADER = 'meili-proxy-search';
/** Headers asking a remote for the `metadata` of its queries: this product's, and the reference's name for it. */
const INCLUDE_METADATA_HEADERS = ['service-include-metadata', 'meili-include-metadata'];

/** How long a remote may take, at most (the whole search gets `SEARCH_DEADLINE_MS`). */
const REMOTE_DEADLINE_MS = 5_000;
export const SEARCH_DEADLINE_MS = 9_000;
/** Attempts after the first for what may pass (unreachable, `5xx`, an unreadable answer). */
const RETRIES = 3;

export interface RemoteAnswer {
  name: string;
  hits: Record<string, unknown>[];
  estimatedTotalHits: number;
  processingTimeMs: number;
  facetsByIndex: Record<string, { distribution: Record<string, Record<string, number>>; stats: Record<string, { min: number; max: number }> }>;
  /** The remote's `metadata` of its queries, when asked for. */
  metadata: { indexUid: string; primaryKey: string | null }[];
}

export interface RemoteSearchOutcome {
  results: RemoteAnswer[];
  errors: Record<string, ErrorBody>;
}

const HINT_VERSION = '\n  - hint: check that the remote instance is a Trine or Meilisearch instance running the same version';

function fromRemote(text: string | null): string {
  return text === null ? '' : `:\n  - response from remote: ${text}`;
}

/** An error's JSON as one line, or the text as it came. */
function shownBody(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text));
  } catch {
    return text;
  }
}

class Attempt extends Error {
  constructor(
    readonly error: ApiError,
    readonly retry: boolean,
  ) {
    super(error.message);
  }
}

function missing(path: string): ApiError {
  return new ApiError('remote_bad_response', `remote hit does not contain \`${path}\`${HINT_VERSION}`);
}

/** Checks each hit carries what the merge needs, and marks it with the remote's name. */
function checkHits(name: string, hits: unknown[]): Record<string, unknown>[] {
  return hits.map((h) => {
    const hit = h as Record<string, unknown>;
    const fed = hit['_federation'];
    if (fed === undefined) throw missing('._federation');
    if (typeof fed !== 'object' || fed === null || Array.isArray(fed)) {
      throw new ApiError('remote_bad_response', `remote hit contains an unexpected value at path \`._federation\`: expected map, received \`${JSON.stringify(fed)}\`${HINT_VERSION}`);
    }
    const f = fed as Record<string, unknown>;
    if (!('weightedScoreValues' in f)) throw missing('._federation.weightedScoreValues');
    if (!('weightedRankingScore' in f)) throw missing('._federation.weightedRankingScore');
    if (typeof f['weightedRankingScore'] !== 'number') {
      throw new ApiError(
        'remote_bad_response',
        `remote hit contains an unexpected value at path \`._federation.weightedRankingScore\`: expected number, received \`${JSON.stringify(f['weightedRankingScore'])}\`${HINT_VERSION}`,
      );
    }
    if (!Number.isInteger(f['queriesPosition'])) throw missing('._federation.queriesPosition');
    f['remote'] = name;
    return hit;
  });
}

/** What a read sent to a remote is: its route, the key action it needs, the answer it expects. */
export interface RemoteRead {
  path: string;
  /** Asks the remote for `metadata` (the header's spec name, and the reference's). */
  includeMetadata?: boolean;
  action: string;
  /** How the answer is named in the error when it cannot be read. */
  answer: string;
  valid(parsed: Record<string, unknown>): boolean;
}

const FEDERATED_SEARCH: RemoteRead = {
  path: '/multi-search',
  action: 'search',
  answer: 'a federated search response',
  valid: (p) => Array.isArray(p['hits']),
};

async function attempt(remote: Remote, read: RemoteRead, body: string, deadline: number): Promise<Record<string, unknown>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', [PROXY_SEARCH_HEADER]: 'true' };
  if (read.includeMetadata) for (const h of INCLUDE_METADATA_HEADERS) headers[h] = 'true';
  if (remote.searchApiKey !== null) headers['authorization'] = `Bearer ${remote.searchApiKey}`;
  const left = deadline - Date.now();
  if (left <= 0) throw new Attempt(new ApiError('remote_timeout', 'remote host did not answer before the deadline'), false);
  let r: Response;
  let text: string;
  try {
    r = await fetch(`${remote.url.replace(/\/+$/, '')}${read.path}`, { method: 'POST', headers, body, signal: AbortSignal.timeout(left) });
    text = await r.text();
  } catch (e) {
    const err = e as Error;
    if (err.name === 'TimeoutError' || err.name === 'AbortError') {
      throw new Attempt(new ApiError('remote_timeout', 'remote host did not answer before the deadline'), false);
    }
    const cause = err.cause instanceof Error ? err.cause.message : err.message;
    throw new Attempt(new ApiError('remote_could_not_send_request', `error sending request: ${cause}`), true);
  }
  if (r.status === 401 || r.status === 403) {
    throw new Attempt(
      new ApiError('remote_invalid_api_key', `could not authenticate against the remote host\n  - hint: check that the remote instance was registered with a valid API key having the \`${read.action}\` action`),
      false,
    );
  }
  if (r.status >= 400 && r.status < 500) {
    throw new Attempt(
      new ApiError(
        'remote_bad_request',
        `remote host responded with code ${r.status}${fromRemote(shownBody(text))}\n  - hint: check that the remote instance has the correct index configuration for that request\n  - hint: check that the \`network\` experimental feature is enabled on the remote instance`,
      ),
      false,
    );
  }
  if (r.status >= 500) throw new Attempt(new ApiError('remote_remote_error', `remote host responded with code ${r.status}${fromRemote(shownBody(text))}`), true);
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(text) as Record<string, unknown>;
    if (typeof parsed !== 'object' || parsed === null || !read.valid(parsed)) throw new Error('unexpected answer');
    // Hits and documents keep their big integers to the digit (see exact-json.ts); the figures
    // around them are doubles.
    if (mayHoldBigIntegers(text)) {
      const exact = parseJson(text) as Record<string, unknown>;
      for (const key of ['hits', 'results']) if (key in exact) parsed[key] = exact[key];
    }
  } catch {
    throw new Attempt(new ApiError('remote_bad_response', `could not parse response from the remote host as ${read.answer}${fromRemote(shownBody(text))}${HINT_VERSION}`), true);
  }
  return parsed;
}

/**
 * Sends one read to a remote (its search key, the `Meili-Proxy-Search` header, within its
 * deadline), retrying what may pass; throws the reference's `remote_*` errors.
 */
export async function readRemote(remote: Remote, read: RemoteRead, body: unknown, deadline: number): Promise<Record<string, unknown>> {
  const until = Math.min(deadline, Date.now() + REMOTE_DEADLINE_MS);
  const text = JSON.stringify(body);
  for (let i = 0; ; i++) {
    try {
      return await attempt(remote, read, text, until);
    } catch (e) {
      if (!(e instanceof Attempt)) throw e;
      if (!e.retry || i >= RETRIES) throw e.error;
      // A short pause, a little longer each time, never above 100 ms.
      await new Promise((r) => setTimeout(r, Math.min(100, 5 * 2 ** i) * (1 + Math.random())));
    }
  }
}

async function searchOne(name: string, remote: Remote, body: unknown, deadline: number, includeMetadata: boolean): Promise<RemoteAnswer> {
  const parsed = await readRemote(remote, { ...FEDERATED_SEARCH, includeMetadata }, body, deadline);
  const metadata = Array.isArray(parsed['metadata'])
    ? (parsed['metadata'] as Record<string, unknown>[])
        .filter((m) => typeof m === 'object' && m !== null && typeof m['indexUid'] === 'string')
        .map((m) => ({ indexUid: m['indexUid'] as string, primaryKey: typeof m['primaryKey'] === 'string' ? m['primaryKey'] : null }))
    : [];
  const total = parsed['estimatedTotalHits'] ?? parsed['totalHits'];
  return {
    name,
    hits: checkHits(name, parsed['hits'] as unknown[]),
    estimatedTotalHits: typeof total === 'number' ? total : 0,
    processingTimeMs: typeof parsed['processingTimeMs'] === 'number' ? parsed['processingTimeMs'] : 0,
    facetsByIndex: (parsed['facetsByIndex'] ?? {}) as RemoteAnswer['facetsByIndex'],
    metadata,
  };
}

/**
 * Sends each remote its queries as one federated search (`offset` 0, `limit` the hits the
 * whole search needs, facets not merged there) and gathers the answers and the failures.
 */
export async function searchRemotes(
  byRemote: Map<string, { remote: Remote; queries: Record<string, unknown>[] }>,
  federation: Record<string, unknown>,
  deadline: number,
  includeMetadata = false,
): Promise<RemoteSearchOutcome> {
  const names = [...byRemote.keys()].sort();
  const settled = await Promise.allSettled(
    names.map((name) => {
      const { remote, queries } = byRemote.get(name)!;
      return searchOne(name, remote, { queries, federation }, deadline, includeMetadata);
    }),
  );
  const out: RemoteSearchOutcome = { results: [], errors: {} };
  settled.forEach((s, i) => {
    if (s.status === 'fulfilled') out.results.push(s.value);
    else out.errors[names[i]!] = toErrorBody(s.reason);
  });
  return out;
}

/**
 * The remotes' answers as lists the engine merges with its own hits (each hit's weighted score
 * values read, then dropped from `_federation`); a remote whose hits cannot be read this way
 * joins the errors.
 */
export function remoteHits(outcome: RemoteSearchOutcome): { hits: RemoteHits; errors: Record<string, ErrorBody>; primaryKeys: Map<string, Map<string, string | null>> } {
  // Each remote's primary key of each index it searched, from its metadata.
  const primaryKeys = new Map(outcome.results.map((r) => [r.name, new Map(r.metadata.map((m) => [m.indexUid, m.primaryKey]))]));
  const errors = { ...outcome.errors };
  const hits: RemoteHits = { lists: [], estimatedTotalHits: 0, processingTimeMs: 0, facetsByIndex: {} };
  for (const r of outcome.results) {
    const list: MergedHit[] = [];
    let readable = true;
    for (const hit of r.hits) {
      const f = hit['_federation'] as Record<string, unknown>;
      const weighted = fromWire(f['weightedScoreValues']);
      if (weighted === null) {
        readable = false;
        break;
      }
      delete f['weightedScoreValues'];
      list.push({ hit, ranked: null, indexUid: String(f['indexUid']), queryIndex: f['queriesPosition'] as number, weightedScore: f['weightedRankingScore'] as number, weighted });
    }
    if (!readable) {
      errors[r.name] = toErrorBody(new ApiError('remote_bad_response', 'could not parse weighted score values in the remote hit'));
      continue;
    }
    hits.lists.push(list);
    hits.estimatedTotalHits += r.estimatedTotalHits;
    hits.processingTimeMs = Math.max(hits.processingTimeMs, r.processingTimeMs);
    for (const [uid, f] of Object.entries(r.facetsByIndex)) (hits.facetsByIndex[uid] ??= []).push({ facetDistribution: f.distribution, facetStats: f.stats });
  }
  return { hits, errors, primaryKeys };
}
