import { base64url, compactVerify, decodeProtectedHeader, errors } from 'jose';
import { ApiError } from '../errors/api-error.js';
import { isValidIndexPattern, mostSpecificPattern, anyPatternMatches } from './actions.js';
import { parseUuid } from '../util/uuid.js';
import { depthMessage, jsonDepthExceeded } from '../util/json-depth.js';

/**
 * Tenant tokens: JWTs signed (HS256/384/512) with an API key's value, narrowing that key to
 * some indexes and adding a filter per index. Verification is jose's; this module only reads
 * the claims the way the reference does, with its error texts (which quote serde's), so a
 * client sees the same reasons for a refused token.
 */

export interface IndexRule {
  filter?: unknown;
}

export type SearchRules =
  | { kind: 'set'; patterns: string[] }
  | { kind: 'map'; rules: Map<string, IndexRule | null> };

export interface TenantClaims {
  apiKeyUid: string;
  searchRules: SearchRules;
  exp: number | null;
}

const ALGORITHMS = ['HS256', 'HS384', 'HS512'];

function decodeError(reason: string): ApiError {
  return new ApiError('invalid_api_key', `Could not decode tenant token, ${reason}.`);
}

/** 1-based line and column of the character at 0-based `index` of `text`, as serde_json reports positions. */
function position(text: string, index: number): string {
  const before = text.slice(0, Math.max(0, index));
  const line = before.split('\n').length;
  const col = index - before.lastIndexOf('\n');
  return `at line ${line} column ${col}`;
}

/** Index just past the JSON value starting at `i` (whitespace before it skipped). */
function skipValue(text: string, i: number): number {
  while (/\s/.test(text[i] ?? '')) i++;
  const c = text[i];
  if (c === '"') {
    for (i++; i < text.length; i++) {
      if (text[i] === '\\') i++;
      else if (text[i] === '"') return i + 1;
    }
    return i;
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (; i < text.length; i++) {
      const ch = text[i];
      if (ch === '"') i = skipValue(text, i) - 1;
      else if (ch === '{' || ch === '[') depth++;
      else if (ch === '}' || ch === ']') if (--depth === 0) return i + 1;
    }
    return i;
  }
  while (i < text.length && !/[,}\]\s]/.test(text[i]!)) i++;
  return i;
}

/** Where the value of each top-level member ends (index just past it), for error positions. */
function memberEnds(text: string): Map<string, number> {
  const out = new Map<string, number>();
  let i = text.indexOf('{') + 1;
  while (i > 0 && i < text.length) {
    while (/[\s,]/.test(text[i] ?? '')) i++;
    if (text[i] !== '"') break;
    const keyEnd = skipValue(text, i);
    const name = JSON.parse(text.slice(i, keyEnd)) as string;
    i = text.indexOf(':', keyEnd) + 1;
    i = skipValue(text, i);
    out.set(name, i);
  }
  return out;
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'boolean') return `boolean \`${v}\``;
  if (typeof v === 'number') return Number.isInteger(v) ? `integer \`${v}\`` : `floating point \`${v}\``;
  if (typeof v === 'string') return `string ${JSON.stringify(v)}`;
  return Array.isArray(v) ? 'sequence' : 'map';
}

function parseRules(v: unknown): SearchRules | null {
  if (Array.isArray(v)) {
    if (!v.every((p) => typeof p === 'string' && isValidIndexPattern(p))) return null;
    return { kind: 'set', patterns: [...new Set(v as string[])] };
  }
  if (typeof v !== 'object' || v === null) return null;
  const rules = new Map<string, IndexRule | null>();
  for (const [pattern, rule] of Object.entries(v)) {
    if (!isValidIndexPattern(pattern)) return null;
    if (rule === null) rules.set(pattern, null);
    else if (typeof rule === 'object' && !Array.isArray(rule)) {
      const filter = (rule as Record<string, unknown>)['filter'];
      rules.set(pattern, filter === undefined || filter === null ? {} : { filter });
    } else return null;
  }
  return { kind: 'map', rules };
}

/** The claims, checked as the reference's serde struct would: first bad member in order, then missing ones. */
function readClaims(text: string): TenantClaims {
  let obj: unknown;
  const tooDeep = jsonDepthExceeded(text);
  if (tooDeep) throw decodeError(`JSON error: ${depthMessage(tooDeep)}`);
  try {
    obj = JSON.parse(text);
  } catch (e) {
    throw decodeError(`JSON error: ${(e as Error).message}`);
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    throw decodeError(`JSON error: invalid type: ${describe(obj)}, expected struct Claims ${position(text, text.length - 1)}`);
  }
  const ends = memberEnds(text);
  const at = (name: string, after = 0) => position(text, (ends.get(name) ?? text.length) + after);
  const out: Partial<TenantClaims> = {};
  for (const [name, value] of Object.entries(obj)) {
    if (name === 'searchRules') {
      const rules = parseRules(value);
      if (!rules) throw decodeError(`JSON error: data did not match any variant of untagged enum SearchRules ${at(name)}`);
      out.searchRules = rules;
    } else if (name === 'apiKeyUid') {
      if (typeof value !== 'string') throw decodeError(`JSON error: invalid type: ${describe(value)}, expected UUID ${at(name, -1)}`);
      const parsed = parseUuid(value);
      if ('error' in parsed) throw decodeError(`JSON error: UUID parsing failed: ${parsed.error} ${at(name, -1)}`);
      out.apiKeyUid = parsed.uuid;
    } else if (name === 'exp') {
      if (value === null) out.exp = null;
      else if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
        throw decodeError(`JSON error: invalid type: ${describe(value)}, expected i64 ${at(name, -1)}`);
      } else out.exp = value;
    }
  }
  const end = position(text, text.lastIndexOf('}'));
  if (!out.searchRules) throw decodeError(`JSON error: missing field \`searchRules\` ${end}`);
  if (!out.apiKeyUid) throw decodeError(`JSON error: missing field \`apiKeyUid\` ${end}`);
  return { apiKeyUid: out.apiKeyUid, searchRules: out.searchRules, exp: out.exp ?? null };
}

/**
 * Reads and verifies a tenant token. Returns null when `token` is not a JWT at all (it is then
 * looked up as a plain API key); throws `invalid_api_key` with the reference's reason when it is
 * a JWT that cannot be trusted. `secretOf` gives the parent key's value (null without a master key).
 */
export async function readTenantToken(
  token: string,
  secretOf: (apiKeyUid: string) => string | null,
  nowMs = Date.now(),
): Promise<TenantClaims | null> {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw decodeError('JSON error: the header is not a base64url-encoded JSON object');
  }
  if (typeof alg !== 'string') throw decodeError('JSON error: missing field `alg`');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(base64url.decode(parts[1]!));
  } catch (e) {
    throw decodeError(`Base64 error: ${(e as Error).message}`);
  }
  const claims = readClaims(text);
  const secret = secretOf(claims.apiKeyUid);
  if (secret === null) return null;
  try {
    await compactVerify(token, new TextEncoder().encode(secret), { algorithms: ALGORITHMS });
  } catch (e) {
    if (e instanceof errors.JOSEAlgNotAllowed || e instanceof errors.JOSENotSupported) throw decodeError('InvalidAlgorithm');
    if (e instanceof errors.JWSSignatureVerificationFailed) throw decodeError('InvalidSignature');
    // Structurally broken JWS: the reference falls back to reading the token as an API key.
    return null;
  }
  if (claims.exp !== null) {
    const now = Math.floor(nowMs / 1000);
    if (now > claims.exp) {
      throw new ApiError('invalid_api_key', `Tenant token expired. Was valid up to \`${claims.exp}\` and we're now \`${now}\`.`);
    }
  }
  return claims;
}

export function rulePatterns(rules: SearchRules): string[] {
  return rules.kind === 'set' ? rules.patterns : [...rules.rules.keys()];
}

export function rulesAllowIndex(rules: SearchRules, index: string): boolean {
  return anyPatternMatches(rulePatterns(rules), index);
}

/** The filter the token imposes on `index`: the rule of its most specific matching pattern. */
export function ruleFilter(rules: SearchRules, index: string): unknown {
  if (rules.kind === 'set') return null;
  const best = mostSpecificPattern(rules.rules.keys(), index);
  if (best === null) return null;
  return rules.rules.get(best)?.filter ?? null;
}

/**
 * A query filter with a rule filter AND-ed to it: both become arrays (an array's members are
 * AND-ed) and are concatenated, as the reference does.
 */
export function andFilters(query: unknown, rule: unknown): unknown {
  if (rule === null || rule === undefined) return query ?? null;
  if (query === null || query === undefined) return rule;
  const list = (f: unknown) => (Array.isArray(f) ? f : [f]);
  return [...list(query), ...list(rule)];
}
