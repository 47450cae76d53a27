import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../errors/api-error.js';
import { anyPatternMatches } from './actions.js';
import type { KeyStore } from './key-store.js';
import type { Authority } from '../util/request-context.js';
import { andFilters, readTenantToken, ruleFilter, rulePatterns, rulesAllowIndex, type SearchRules } from './tenant-token.js';

/**
 * Request authentication, as the reference's `ActionPolicy` does it: one `onRequest` hook checks
 * the bearer token against the action its route declares (`route()` puts it in the route
 * config) and the `{indexUid}` in the path, before any body is read. What the token allows is
 * then attached to the request, for the checks only a route can make (indexes named in a body,
 * each query of a multi-search, tenant-token filters on searches).
 */

/** What the request's token allows. */
export interface Grant {
  /** Index patterns of the API key; null for every index (master key, or no master key at all). */
  keyIndexes: string[] | null;
  /** The tenant token's search rules; null when the request did not use one. */
  rules: SearchRules | null;
  /** Whether a write may create its index when it is missing (the `indexes.create` action). */
  mayCreateIndexes: boolean;
  /** The key's actions, wildcards expanded; null for every action. */
  actions: ReadonlySet<string> | null;
  /** The API key (a tenant token's parent key); null for the master key, or none. */
  authority: Authority | null;
}

const OPEN: Grant = { keyIndexes: null, rules: null, mayCreateIndexes: true, actions: null, authority: null };
const grants = new WeakMap<FastifyRequest, Grant>();
const tokens = new WeakMap<FastifyRequest, string>();

/**
 * Routes anyone may call, master key or not. The OpenAPI document is among them: it is
 * published with each release and says nothing about this instance's data.
 */
export const PUBLIC_ROUTES: ReadonlySet<string> = new Set(['/', '/health', '/cluster/health', '/openapi.json']);

/** Actions whose routes accept a tenant token in place of an API key. */
const TENANT_ACTIONS = new Set(['search', 'chatCompletions']);

const INVALID = 'The provided API key is invalid.';

/** The reference's refusal of a key: `403 invalid_api_key`. */
export function invalidKey(message = INVALID): ApiError {
  return new ApiError('invalid_api_key', message);
}

function missingHeader(): ApiError {
  return new ApiError('missing_authorization_header', 'The Authorization header is missing. It must use the bearer authorization method.');
}

function missingMasterKey(): ApiError {
  return new ApiError(
    'missing_master_key',
    'Trine is running without a master key. To access this API endpoint, you must have set a master key at launch.',
  );
}

/** Rust's `{:?}` of a sorted `Vec<String>`, which the reference's index errors print. */
function debugList(items: Iterable<string>): string {
  return `[${[...items].sort().map((s) => JSON.stringify(s)).join(', ')}]`;
}

/** Decides what `token` may do for `action` on `index`; throws the reference's refusal otherwise. */
export async function authenticate(keys: KeyStore, token: string, action: string | undefined, index: string | undefined, now = Date.now()): Promise<Grant> {
  if (keys.masterKey === null) {
    if (action?.startsWith('keys.')) throw missingMasterKey();
    return OPEN;
  }
  if (keys.isMasterKey(token)) return OPEN;
  // A route without an action is one only the master key may call.
  if (action === undefined) throw invalidKey();

  let rules: SearchRules | null = null;
  let uid: string | null = null;
  if (TENANT_ACTIONS.has(action)) {
    const claims = await readTenantToken(token, (u) => keys.keyValue(u), now);
    if (claims) {
      uid = claims.apiKeyUid;
      rules = claims.searchRules;
    }
  }
  uid ??= keys.findByValue(token)?.uid ?? null;
  const key = uid === null ? undefined : keys.get(uid);
  if (!key) throw invalidKey();

  if (index !== undefined) {
    // The token's own indexes are the client's to know; the parent key's are not.
    if (rules && !rulesAllowIndex(rules, index)) {
      throw invalidKey(`The provided tenant token cannot acces the index \`${index}\`, allowed indexes are ${debugList(rulePatterns(rules))}.`);
    }
    if (!anyPatternMatches(key.indexes, index)) {
      throw invalidKey(
        rules
          ? `The API key used to generate this tenant token cannot acces the index \`${index}\`.`
          : `The API key cannot acces the index \`${index}\`, authorized indexes are ${debugList(key.indexes)}.`,
      );
    }
  }
  if (!keys.granted(key.uid).has(action)) throw invalidKey();
  if (key.expiresAt !== null && now >= key.expiresAt) throw invalidKey();
  return {
    keyIndexes: key.indexes.includes('*') ? null : key.indexes,
    rules,
    mayCreateIndexes: keys.granted(key.uid).has('indexes.create'),
    actions: keys.granted(key.uid),
    authority: { key: key.uid, createdAt: key.createdAt },
  };
}

/**
 * The Fastify `onRequest` hook guarding every route; `/` and `/health` and CORS preflights stay open.
 * `catchUp` (in a cluster) makes this node reflect what the cluster acknowledged: a key created
 * through another node moments ago may not have reached this one yet, so a token this node does
 * not know is looked at again once it has caught up.
 */
export function authHook(keys: KeyStore, catchUp?: () => Promise<void>) {
  return async (req: FastifyRequest, _reply: FastifyReply): Promise<void> => {
    if (req.method === 'OPTIONS') return;
    const url = req.routeOptions.url;
    // Unknown routes answer their empty 404 without asking for a key, as the reference does.
    if (url === undefined || PUBLIC_ROUTES.has(url)) return;
    const { action, index } = guarded(req);

    const header = req.headers.authorization;
    let token: string;
    if (header === undefined) {
      if (keys.masterKey !== null) throw missingHeader();
      token = '';
    } else {
      // Same parsing as the reference: the scheme must be exactly `Bearer`, and a bare `Bearer`
      // is a wrong key, not a missing one, even on an instance without a master key.
      const space = header.indexOf(' ');
      const scheme = space < 0 ? header : header.slice(0, space);
      if (scheme !== 'Bearer') throw missingHeader();
      if (space < 0) throw invalidKey();
      token = header.slice(space + 1);
    }
    grants.set(req, await authenticateCaughtUp(keys, token, action, index, catchUp));
    tokens.set(req, token);
    checkedAt.set(req, keys.revocations);
  };
}

/** The action a route declares and the index in its path, which a token is checked against. */
function guarded(req: FastifyRequest): { action: string | undefined; index: string | undefined } {
  return {
    action: (req.routeOptions.config as { action?: string } | undefined)?.action,
    index: (req.params as Record<string, string> | undefined)?.['indexUid'],
  };
}

/** The key store's `revocations` when each request's token was checked. */
const checkedAt = new WeakMap<FastifyRequest, number>();

/**
 * After a read caught up with the cluster: a key deleted through another node, which this node
 * had not heard of when it checked the token, is refused now (403 `invalid_api_key`).
 */
export async function recheckRevoked(req: FastifyRequest, keys: KeyStore): Promise<void> {
  const at = checkedAt.get(req);
  if (at === undefined || at === keys.revocations) return;
  const { action, index } = guarded(req);
  grants.set(req, await authenticate(keys, tokens.get(req) ?? '', action, index));
  checkedAt.set(req, keys.revocations);
}

async function authenticateCaughtUp(
  keys: KeyStore,
  token: string,
  action: string | undefined,
  index: string | undefined,
  catchUp: (() => Promise<void>) | undefined,
): Promise<Grant> {
  try {
    return await authenticate(keys, token, action, index);
  } catch (e) {
    if (catchUp === undefined || !(e instanceof ApiError) || e.code !== 'invalid_api_key') throw e;
    try {
      await catchUp();
    } catch {
      // Could not catch up (no leader within the read timeout): the refusal stands.
      throw e;
    }
    return authenticate(keys, token, action, index);
  }
}

/** What the request's token allows (everything on routes that were not guarded). */
export function requestGrant(req: FastifyRequest): Grant {
  return grants.get(req) ?? OPEN;
}

/**
 * Checks the request's token for another action on another index, as a route acting on the
 * caller's behalf does (a chat completion searching an index the model chose).
 */
export function authenticateAs(req: FastifyRequest, keys: KeyStore, action: string, index: string): Promise<Grant> {
  return authenticate(keys, tokens.get(req) ?? '', action, index);
}

/** Whether the token may touch `index`: its key's patterns, and its tenant token's if any. */
export function isIndexAuthorized(req: FastifyRequest, index: string): boolean {
  const g = requestGrant(req);
  if (g.keyIndexes !== null && !anyPatternMatches(g.keyIndexes, index)) return false;
  return g.rules === null || rulesAllowIndex(g.rules, index);
}

/** For a route needing a second action besides the one it declares (the reference's double-action policy). */
export function assertActionGranted(req: FastifyRequest, action: string): void {
  const g = requestGrant(req);
  if (g.actions !== null && !g.actions.has(action)) throw invalidKey();
}

/** For indexes named outside the path (`POST /indexes`, `/swap-indexes`, a rename): 403 if not allowed. */
export function assertIndexAuthorized(req: FastifyRequest, index: string): void {
  if (!isIndexAuthorized(req, index)) throw invalidKey();
}

/**
 * For each query of a multi-search, before running it: 403 `invalid_api_key` with the
 * reference's ``Inside `.queries[i]`: `` prefix already in the message.
 */
export function assertQueryIndexAuthorized(req: FastifyRequest, index: string, queryPosition: number): void {
  if (!isIndexAuthorized(req, index)) throw invalidKey(`Inside \`.queries[${queryPosition}]\`: ${INVALID}`);
}

/** Filter a tenant token imposes on searches of `index` (null when none). */
export function searchRulesFilter(req: FastifyRequest, index: string): unknown {
  const g = requestGrant(req);
  return g.rules === null ? null : ruleFilter(g.rules, index);
}

/** The search's own filter with the tenant token's rule for `index` AND-ed to it. */
export function withSearchRules(req: FastifyRequest, index: string, filter: unknown): unknown {
  return andFilters(filter, searchRulesFilter(req, index));
}

/** A predicate for lists (indexes, stats, tasks): null when every index is visible. */
export function indexVisibility(req: FastifyRequest): ((index: string) => boolean) | null {
  const g = requestGrant(req);
  if (g.keyIndexes === null && g.rules === null) return null;
  return (index) => isIndexAuthorized(req, index);
}

/** A URL as it may be logged: a key value in `/keys/{key}` is masked (a uid is not secret, but looks alike). */
export function redactUrl(url: string): string {
  return url.replace(/^(\/keys\/)[^/?#]+/i, '$1[redacted]');
}

/** Fastify's request log fields, with the URL redacted; headers (so the bearer token) are never logged. */
export function logSafeRequest(req: FastifyRequest): Record<string, unknown> {
  return { method: req.method, url: redactUrl(req.url), host: req.host, remoteAddress: req.ip, remotePort: req.socket?.remotePort };
}
