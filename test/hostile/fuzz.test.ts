import { request as httpRequest } from 'node:http';
import { brotliDecompressSync, gunzipSync, gzipSync, inflateSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES, ERROR_LINK_BASE } from '../../src/errors/codes.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

// A seeded property-based fuzz of the whole HTTP API. Requests are generated from the node's own
// OpenAPI document (every route it registers), with hostile paths, query strings, headers and
// bodies. For every request: no 5xx; every error has the shape {message, code, type, link} with
// a code from the table and its status; a refused or failed write changes no document, setting,
// key or feature; the node keeps answering. A failure prints the request that reproduces it
// and the seed (FUZZ_SEED=<seed> reruns it; FUZZ_RUNS sets the number of requests).

const SEED = Number(process.env['FUZZ_SEED'] ?? 20_261_126);
const RUNS = Number(process.env['FUZZ_RUNS'] ?? 600);
const MASTER = 'fuzz-master-key-0123456789';
const AUTH = { authorization: `Bearer ${MASTER}` };
/** Long enough for anything this small node does; a request still unanswered after it hangs. */
const ANSWER_TIMEOUT_MS = 20_000;

let t: TestNode;
let port: number;

interface Operation {
  method: string;
  path: string;
  query: string[];
  bodyFields: string[];
  mediaTypes: string[];
}
let operations: Operation[] = [];

// Routes that answer with an endless stream by design: a fuzzed request would never end.
const STREAMING = [/^\/logs\/stream$/, /\/chat\/completions$/];

async function api(method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${t.url}${path}`, {
    method,
    headers: { ...AUTH, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text}`);
  return text ? (JSON.parse(text) as Record<string, unknown>) : {};
}

async function waitTask(uid: number): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ANSWER_TIMEOUT_MS;
  for (;;) {
    const task = await api('GET', `/tasks/${uid}`);
    if (['succeeded', 'failed', 'canceled'].includes(task['status'] as string)) return task;
    if (Date.now() > deadline) throw new Error(`task ${uid} still ${String(task['status'])} after ${ANSWER_TIMEOUT_MS} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** The first part of two states that differs, for a failure message. */
function firstDifference(a: string, b: string): string {
  const x = JSON.parse(a) as Record<string, unknown>;
  const y = JSON.parse(b) as Record<string, unknown>;
  for (const k of new Set([...Object.keys(x), ...Object.keys(y)])) {
    const [u, v] = [JSON.stringify(x[k]), JSON.stringify(y[k])];
    if (u !== v) return `${k}: ${String(u).slice(0, 400)} → ${String(v).slice(0, 400)}`;
  }
  return 'nothing';
}

/** What a refused or failed write must leave as it was. */
async function state(ignoreIndex?: string, only?: string): Promise<string> {
  const all = (await api('GET', '/indexes?limit=1000'))['results'] as { uid: string }[];
  const indexes = all.filter((i) => i.uid !== ignoreIndex);
  const out: Record<string, unknown> = { indexes };
  // A write naming one index is checked on that index (and on the lists of indexes, keys and
  // features); one naming none (a swap, a task deletion) on every index.
  for (const { uid } of indexes.filter((i) => only === undefined || i.uid === only)) {
    out[`docs:${uid}`] = (await api('GET', `/indexes/${uid}/documents?limit=10000`))['results'];
    out[`settings:${uid}`] = await api('GET', `/indexes/${uid}/settings`);
  }
  out['keys'] = (await api('GET', '/keys?limit=1000'))['results'];
  out['features'] = await api('GET', '/experimental-features');
  return JSON.stringify(out);
}

beforeAll(async () => {
  t = await startTestNode(['--master-key', MASTER, '--http-payload-size-limit', '2 MB']);
  port = Number(new URL(t.url).port);
  const spec = await api('GET', '/openapi.json');
  const schemas = ((spec['components'] as Record<string, unknown> | undefined)?.['schemas'] ?? {}) as Record<string, Record<string, unknown>>;
  const fieldsOf = (schema: Record<string, unknown> | undefined): string[] => {
    if (!schema) return [];
    const ref = schema['$ref'];
    const s = typeof ref === 'string' ? schemas[ref.split('/').pop()!] : schema;
    if (!s) return [];
    const props = Object.keys((s['properties'] ?? {}) as object);
    const items = s['items'] as Record<string, unknown> | undefined;
    return [...props, ...(items ? fieldsOf(items) : [])];
  };
  for (const [path, item] of Object.entries(spec['paths'] as Record<string, Record<string, Record<string, unknown>>>)) {
    if (STREAMING.some((re) => re.test(path))) continue;
    for (const [method, op] of Object.entries(item)) {
      if (method === 'parameters') continue;
      const params = (op['parameters'] ?? []) as { name: string; in: string }[];
      const content = ((op['requestBody'] as Record<string, unknown> | undefined)?.['content'] ?? {}) as Record<string, { schema?: Record<string, unknown> }>;
      operations.push({
        method: method.toUpperCase(),
        path,
        query: params.filter((p) => p.in === 'query').map((p) => p.name),
        bodyFields: [...new Set(Object.values(content).flatMap((c) => fieldsOf(c.schema)))],
        mediaTypes: Object.keys(content),
      });
    }
  }
  operations = operations.sort((a, b) => `${a.method} ${a.path}`.localeCompare(`${b.method} ${b.path}`));

  await api('PATCH', '/indexes/movies/settings', { filterableAttributes: ['genre', 'year', '_geo'], sortableAttributes: ['year', 'title'] });
  const docs = Array.from({ length: 30 }, (_, i) => ({
    id: i,
    title: `movie ${i} ${['carol', 'alien', 'heat', 'jaws'][i % 4]}`,
    genre: ['drama', 'horror', 'crime'][i % 3],
    year: 1970 + i,
    _geo: { lat: i, lng: -i },
    cast: [{ name: `actor ${i}`, roles: ['lead'] }],
  }));
  const added = await api('POST', '/indexes/movies/documents', docs);
  await waitTask(added['taskUid'] as number);
  const books = await api('POST', '/indexes/books/documents', [{ isbn: 'b1', title: 'Dune' }]);
  await waitTask(books['taskUid'] as number);
}, 60_000);

afterAll(async () => {
  await t?.close();
});

// ---------- generators ----------

const deep = (n: number) => '['.repeat(n) + ']'.repeat(n);

const hostileString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom('', ' ', '*', 'movies', 'books', 'id', 'title', 'genre', 'year', '_geo', 'cast.name', 'null', 'true', '0', '1', '-1', '1.5', '1e309', 'NaN', '18446744073709551616', '[', ']', '{', '"', "'", '\\', '%', '%zz', '%00', '../..', '\u0000', '\ud800', 'é', '日本語', '🙂', 'genre = drama', 'year > 1980 AND genre IN [drama, crime]', 'year 1970 TO 1980', 'NOT genre = horror', '_geoRadius(1, 2, 300000)', '_geoBoundingBox([1,2],[0,0])', 'title CONTAINS a', 'genre STARTS WITH d', '(((', 'genre =', 'year:asc', 'title:desc', '_geoPoint(0, 0):asc', 'movie', 'caro', 'alein', '"movie 1"', '-heat', 'words', 'attribute', 'exactness', 'typo', 'default', 'disabled', 'indexingTime', 'last', 'all', 'frequency', 'succeeded', 'documentAdditionOrUpdate', 'search', '*.get', 'application/json') },
  { weight: 2, arbitrary: fc.string({ maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 12 }) },
  { weight: 1, arbitrary: fc.integer({ min: -10, max: 100_000 }).map(String) },
  { weight: 1, arbitrary: fc.constantFrom('a'.repeat(600), 'word '.repeat(300), 'x'.repeat(5000), `${'('.repeat(300)}a = 1${')'.repeat(300)}`, `${'NOT '.repeat(500)}a = 1`) },
);

const hostileNumber = fc.constantFrom(0, 1, -1, 1.5, -0.5, 20, 1000, 2 ** 31, 2 ** 32, 2 ** 53 + 2, 1e308, -1e308, 4_294_967_296);

const fieldName = fc.constantFrom('id', 'title', 'genre', 'year', '_geo', '_vectors', 'cast', 'cast.name', '*', '', 'unknown', '_rankingScore', 'a.b.c', '🙂');

const hostileValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    { weight: 4, arbitrary: hostileString },
    { weight: 2, arbitrary: hostileNumber },
    { weight: 1, arbitrary: fc.boolean() },
    { weight: 1, arbitrary: fc.constant(null) },
    { weight: 2, arbitrary: fc.array(tie('value'), { maxLength: 4 }) },
    { weight: 2, arbitrary: fc.dictionary(fc.oneof(fieldName, fc.string({ maxLength: 8 })), tie('value'), { maxKeys: 4 }) },
  ),
})).value;

// Plausible values for the fields the API knows, so that requests get past validation into the
// engine about as often as they are refused.
const word = fc.constantFrom('movie', 'carol', 'alien', 'heat', 'jaws', 'caro', 'alein', 'mo', 'a', 'actor', 'lead', 'dune', 'drama');
const field = fc.constantFrom('id', 'title', 'genre', 'year', 'cast', 'cast.name', 'cast.roles', '_geo', '*', 'title.*', '*.name', 'missing');
const fields = fc.array(field, { maxLength: 4 });
const comparison = fc.tuple(fc.constantFrom('genre', 'year', 'title', 'cast.name', '_geo', 'id', 'missing', '"genre"'), fc.constantFrom('=', '!=', '>', '>=', '<', '<=', 'IN', 'NOT IN', 'EXISTS', 'NOT EXISTS', 'IS NULL', 'IS EMPTY', 'IS NOT NULL', 'TO', 'STARTS WITH', 'CONTAINS'), fc.oneof(word, fc.integer({ min: 1960, max: 2010 }).map(String)))
  .map(([f, op, v]) => (op === 'IN' || op === 'NOT IN' ? `${f} ${op} [${v}, drama]` : op === 'TO' ? `${f} ${v} TO 2000` : /EXISTS|NULL|EMPTY/.test(op) ? `${f} ${op}` : `${f} ${op} ${v}`));
const filterExpr = fc.oneof(
  { weight: 4, arbitrary: comparison },
  { weight: 2, arbitrary: fc.tuple(comparison, fc.constantFrom(' AND ', ' OR ', ' AND NOT '), comparison).map(([a, op, b]) => `(${a})${op}${b}`) },
  { weight: 1, arbitrary: fc.constantFrom('_geoRadius(10, -10, 500000)', '_geoBoundingBox([20, 0], [0, -20])', '_geoRadius(91, 0, 1)', '_geoPolygon([0,0],[1,1],[1,0])', '_vectors EXISTS', '') },
);
const filter = fc.oneof(
  { weight: 4, arbitrary: filterExpr },
  { weight: 2, arbitrary: fc.array(fc.oneof(filterExpr, fc.array(filterExpr, { maxLength: 3 })), { maxLength: 3 }) },
  { weight: 1, arbitrary: hostileValue },
);
const count = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 50 }) }, { weight: 1, arbitrary: hostileNumber });
const sort = fc.array(fc.constantFrom('year:asc', 'year:desc', 'title:asc', 'genre:desc', '_geoPoint(0, 0):asc', 'id', 'year:up', 'missing:asc'), { maxLength: 3 });
const searchQuery = fc.record(
  {
    indexUid: fc.constantFrom('movies', 'books', 'missing'),
    q: fc.oneof(word, fc.array(word, { maxLength: 4 }).map((w) => w.join(' ')), hostileString),
    filter,
    sort,
    facets: fields,
    limit: count,
    offset: count,
    page: count,
    hitsPerPage: count,
    attributesToRetrieve: fields,
    attributesToHighlight: fields,
    attributesToCrop: fc.array(fc.oneof(field, field.map((f) => `${f}:2`)), { maxLength: 3 }),
    cropLength: count,
    matchingStrategy: fc.constantFrom('last', 'all', 'frequency', 'first'),
    showMatchesPosition: fc.boolean(),
    showRankingScore: fc.boolean(),
    showRankingScoreDetails: fc.boolean(),
    rankingScoreThreshold: fc.constantFrom(0, 0.5, 1, 1.5, -1),
    attributesToSearchOn: fields,
    distinct: field,
  },
  { requiredKeys: [] },
);
const settingFields: Record<string, fc.Arbitrary<unknown>> = {
    searchableAttributes: fields,
    displayedAttributes: fields,
    filterableAttributes: fc.oneof(fields, fc.array(fc.record({ attributePatterns: fields, features: fc.record({ facetSearch: fc.boolean(), filter: fc.record({ equality: fc.boolean(), comparison: fc.boolean() }) }) }), { maxLength: 2 })),
    sortableAttributes: fields,
    rankingRules: fc.array(fc.constantFrom('words', 'typo', 'proximity', 'attribute', 'sort', 'exactness', 'year:asc', 'title:desc', 'wordPosition', 'nope'), { maxLength: 6 }),
    stopWords: fc.array(word, { maxLength: 3 }),
    synonyms: fc.dictionary(word, fc.array(word, { maxLength: 3 }), { maxKeys: 3 }),
    distinctAttribute: fc.oneof(field, fc.constant(null)),
    typoTolerance: fc.record({ enabled: fc.boolean(), minWordSizeForTypos: fc.record({ oneTypo: count, twoTypos: count }), disableOnWords: fc.array(word, { maxLength: 2 }), disableOnAttributes: fields }, { requiredKeys: [] }),
    faceting: fc.record({ maxValuesPerFacet: count, sortFacetValuesBy: fc.dictionary(field, fc.constantFrom('alpha', 'count', 'x'), { maxKeys: 2 }) }, { requiredKeys: [] }),
    pagination: fc.record({ maxTotalHits: count }),
    proximityPrecision: fc.constantFrom('byWord', 'byAttribute', 'x'),
    searchCutoffMs: fc.oneof(count, fc.constant(null)),
    separatorTokens: fc.array(fc.constantFrom('&', '-', '.', 'x', ''), { maxLength: 3 }),
    nonSeparatorTokens: fc.array(fc.constantFrom('&', '-', '.', '@'), { maxLength: 3 }),
    dictionary: fc.array(fc.constantFrom('J. R. R.', 'W. E. B.', ''), { maxLength: 2 }),
    prefixSearch: fc.constantFrom('indexingTime', 'disabled', 'x'),
    facetSearch: fc.boolean(),
    embedders: fc.dictionary(fc.constantFrom('default', 'own', ''), fc.record({ source: fc.constantFrom('userProvided', 'rest', 'x'), dimensions: fc.oneof(fc.integer({ min: 1, max: 4 }), hostileNumber) }, { requiredKeys: [] }), { maxKeys: 1 }),
    localizedAttributes: fc.array(fc.record({ attributePatterns: fields, locales: fc.array(fc.constantFrom('eng', 'fra', 'jpn', 'xx'), { maxLength: 2 }) }), { maxLength: 2 }),
};
const settings = fc.record(settingFields, { requiredKeys: [] });
/** The setting a `/settings/<name>` route sets, by its kebab-case name. */
const settingOfRoute = (path: string) => {
  const m = /\/settings\/([a-z-]+)$/.exec(path);
  return m ? settingFields[m[1]!.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())] : undefined;
};
const plausible: Record<string, fc.Arbitrary<unknown>> = {
  q: fc.oneof(word, hostileString),
  filter,
  sort,
  queries: fc.array(searchQuery, { maxLength: 3 }),
  federation: fc.record({ limit: count, offset: count, facetsByIndex: fc.dictionary(fc.constantFrom('movies', 'books'), fields, { maxKeys: 2 }) }, { requiredKeys: [] }),
  facetName: field,
  facetQuery: fc.oneof(word, hostileString),
  uid: fc.constantFrom('movies', 'books', 'fresh-index', 'new', ''),
  primaryKey: fc.constantFrom('id', 'isbn', 'title', 'missing', ''),
  ids: fc.array(fc.oneof(fc.integer({ min: -1, max: 40 }), word), { maxLength: 4 }),
  fields,
  indexes: fc.array(fc.constantFrom('movies', 'books', 'fresh-index', '*', 'mov*'), { maxLength: 3 }),
  actions: fc.array(fc.constantFrom('search', 'documents.add', '*', 'indexes.*', 'keys.get', 'nope'), { maxLength: 3 }),
  expiresAt: fc.constantFrom(null, '2099-01-01T00:00:00Z', '2000-01-01', 'soon'),
  name: fc.oneof(word, fc.constant(null)),
  description: fc.oneof(word, fc.constant(null)),
  vector: fc.array(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), hostileNumber), { maxLength: 4 }),
  hybrid: fc.record({ embedder: fc.constantFrom('default', 'missing'), semanticRatio: fc.constantFrom(0, 0.5, 1, 2) }, { requiredKeys: [] }),
  id: fc.oneof(fc.integer({ min: 0, max: 40 }), word),
  embedder: fc.constantFrom('default', 'missing'),
};

function bodyFor(op: Operation): fc.Arbitrary<{ text: string | Buffer | undefined; contentType: string | undefined }> {
  const names = op.bodyFields.length > 0 ? op.bodyFields : ['unknownField'];
  const junk = fc.constantFrom('unknownField', 'filter', 'q', 'id', '');
  const valueOf = (name: string) => fc.oneof({ weight: 6, arbitrary: plausible[name] ?? hostileValue }, { weight: 1, arbitrary: hostileValue });
  const keysOf = fc.oneof({ weight: 6, arbitrary: fc.uniqueArray(fc.constantFrom(...names), { maxLength: 4 }) }, { weight: 1, arbitrary: fc.uniqueArray(fc.oneof(fc.constantFrom(...names), junk), { maxLength: 5 }) });
  const object = fc.oneof(
    { weight: 3, arbitrary: keysOf.chain((keys) => fc.tuple(...keys.map(valueOf)).map((vals) => Object.fromEntries(keys.map((k, i) => [k, vals[i]])))) },
    { weight: 2, arbitrary: settingOfRoute(op.path) ?? (/\/settings$/.test(op.path) ? settings : searchQuery) },
  );
  const doc = fc.record(
    {
      id: fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 0, max: 40 }) }, { weight: 1, arbitrary: hostileValue }),
      title: fc.oneof(word, hostileValue),
      genre: fc.oneof(word, hostileValue),
      year: fc.oneof(fc.integer({ min: 1950, max: 2020 }), hostileValue),
      _geo: fc.oneof(fc.record({ lat: hostileNumber, lng: hostileNumber }), hostileValue),
      extra: hostileValue,
    },
    { requiredKeys: [] },
  );
  const documents = fc.array(doc, { maxLength: 4 });
  const json = fc.oneof(
    { weight: 4, arbitrary: object },
    { weight: 2, arbitrary: documents },
    { weight: 1, arbitrary: fc.array(hostileValue, { maxLength: 5 }) },
    { weight: 1, arbitrary: hostileValue },
  );
  const text = fc.oneof(
    { weight: 8, arbitrary: json.map((v) => JSON.stringify(v)) },
    { weight: 1, arbitrary: documents.map((docs) => docs.map((d) => JSON.stringify(d)).join('\n')) },
    { weight: 1, arbitrary: fc.constantFrom('', ' ', '{', '[', '{"a":}', 'null', '[]', '{}', '""', 'id,title\n1,x', 'id:number,title\nx,"y', '\uFEFF[]', deep(200), `{"filter":${deep(5000)}}`, ' '.repeat(10_000), '[{"id":1}]\n{"id":2}') },
    { weight: 1, arbitrary: fc.string({ maxLength: 60 }) },
  );
  const contentType = fc.oneof(
    { weight: 8, arbitrary: fc.constant(op.mediaTypes[0] ?? 'application/json') },
    { weight: 2, arbitrary: fc.constantFrom(...op.mediaTypes, 'application/json; charset=utf-8') },
    { weight: 1, arbitrary: fc.constantFrom(undefined, '', 'text/plain', 'application/x-ndjson', 'text/csv', 'multipart/form-data; boundary=x', 'application/json; charset=latin1', ';;;', 'application/*') },
  );
  const withBody = fc.record({ text, contentType });
  if (op.mediaTypes.length === 0) {
    return fc.oneof({ weight: 9, arbitrary: fc.constant({ text: undefined, contentType: undefined }) }, { weight: 1, arbitrary: withBody });
  }
  return fc.oneof({ weight: 9, arbitrary: withBody }, { weight: 1, arbitrary: fc.constant({ text: undefined, contentType: undefined }) });
}

/** Percent-encodes the UTF-8 bytes of `v` (lone surrogates included, as U+FFFD), all but unreserved characters or, with `loose`, all but printable ASCII. */
function pct(v: string, loose = false): string {
  let out = '';
  for (const b of Buffer.from(v, 'utf8')) {
    const c = String.fromCharCode(b);
    const keep = loose ? b >= 0x21 && b <= 0x7e && c !== '&' && c !== '#' && c !== '?' : /[A-Za-z0-9\-_.~]/.test(c);
    out += keep ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

const pathParam = (name: string): fc.Arbitrary<string> => {
  const raw = name === 'indexUid'
    ? fc.oneof({ weight: 12, arbitrary: fc.constantFrom('movies', 'movies', 'books', 'fresh-index') }, { weight: 1, arbitrary: fc.constantFrom('x'.repeat(600), '*', 'mo vies', '日本') }, { weight: 1, arbitrary: hostileString })
    : /Uid$/.test(name)
      ? fc.oneof(fc.nat({ max: 60 }).map(String), fc.constantFrom('4294967296', '-1', '1.5', 'x', ''), hostileString)
      : fc.oneof({ weight: 3, arbitrary: fc.constantFrom('0', '1', '29', 'b1', 'missing') }, { weight: 2, arbitrary: hostileString });
  // Mostly encoded as a client would; sometimes as written, percent signs and all.
  return fc.tuple(raw, fc.nat({ max: 9 })).map(([v, n]) => pct(v, n === 0));
};

const queryValue = (name: string) => fc.oneof({ weight: 3, arbitrary: (plausible[name] ?? hostileString).map((v) => (typeof v === 'string' ? v : Array.isArray(v) ? v.join(',') : JSON.stringify(v))) }, { weight: 1, arbitrary: hostileString });
const queryFor = (op: Operation) => {
  const known = op.query.filter((q) => !op.path.includes(`{${q}}`));
  const name = known.length > 0
    ? fc.oneof({ weight: 12, arbitrary: fc.constantFrom(...known) }, { weight: 1, arbitrary: fc.constantFrom('unknown', '') }, { weight: 1, arbitrary: fc.string({ maxLength: 6 }) })
    : fc.oneof(fc.constantFrom('unknown', ''), fc.string({ maxLength: 6 }));
  return fc
    .array(name.chain((k) => fc.tuple(fc.constant(k), queryValue(k), fc.nat({ max: 9 }))), { maxLength: known.length > 0 ? 4 : 1 })
    .map((pairs) => pairs.map(([k, v, n]) => `${pct(k)}=${pct(v, n === 0)}`).join('&'));
};

const headersArb = fc.record({
  auth: fc.oneof({ weight: 12, arbitrary: fc.constant(`Bearer ${MASTER}`) }, { weight: 1, arbitrary: fc.constantFrom(undefined, 'Bearer', 'Bearer wrong-key', `Basic ${MASTER}`, `bearer ${MASTER}`, `Bearer ${'k'.repeat(3000)}`, 'Bearer eyJhbGciOiJIUzI1NiJ9.e30.x') }),
  encoding: fc.oneof({ weight: 12, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom('gzip', 'gzip:raw', 'br', 'deflate', 'zstd', 'identity', 'gzip, br') }),
  waitFor: fc.oneof({ weight: 12, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom('0', '1', 'abc', '-1', '99999999999', '') }),
  waitTimeout: fc.oneof({ weight: 12, arbitrary: fc.constant<string | undefined>(undefined) }, { weight: 1, arbitrary: fc.constantFrom('0', '50', 'abc', '-1', '99999999999') }),
  acceptEncoding: fc.constantFrom(undefined, 'gzip', 'br', 'deflate, gzip;q=0.5', 'identity', '*', 'nonsense'),
});

const requestArb = fc.integer({ min: 0, max: 1_000_000 }).chain((pick) => {
  const op = operations[pick % operations.length]!;
  const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  return fc.record({
    op: fc.constant(op),
    method: fc.oneof({ weight: 20, arbitrary: fc.constant(op.method) }, { weight: 1, arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PROPFIND') }),
    params: fc.tuple(...params.map(pathParam)) as fc.Arbitrary<string[]>,
    query: fc.oneof({ weight: 3, arbitrary: queryFor(op) }, { weight: 2, arbitrary: fc.constant('') }),
    trailingSlash: fc.constantFrom(false, false, false, true),
    body: bodyFor(op),
    headers: headersArb,
  });
});

type FuzzRequest = typeof requestArb extends fc.Arbitrary<infer R> ? R : never;

interface Answer {
  status: number;
  body: string;
}

function send(method: string, path: string, headers: Record<string, string>, body: Buffer | undefined): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, method, path, headers, timeout: ANSWER_TIMEOUT_MS }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        let raw = Buffer.concat(chunks);
        const coding = res.headers['content-encoding'];
        if (coding === 'gzip') raw = gunzipSync(raw);
        else if (coding === 'br') raw = brotliDecompressSync(raw);
        else if (coding === 'deflate') raw = inflateSync(raw);
        resolve({ status: res.statusCode ?? 0, body: raw.toString('utf8') });
      });
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${ANSWER_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    // Framed explicitly: Node's client sends a DELETE's body without a length otherwise.
    if (body !== undefined) req.setHeader('content-length', body.length);
    req.end(body);
  });
}

function build(r: FuzzRequest): { method: string; path: string; headers: Record<string, string>; body: Buffer | undefined; shown: string } {
  let i = 0;
  let path = r.op.path.replace(/\{\w+\}/g, () => r.params[i++] ?? '');
  if (r.trailingSlash) path += '/';
  if (r.query) path += `?${r.query}`;
  const headers: Record<string, string> = {};
  if (r.headers.auth !== undefined) headers['authorization'] = r.headers.auth;
  if (r.body.contentType !== undefined) headers['content-type'] = r.body.contentType;
  if (r.headers.waitFor !== undefined) headers['trine-wait-for-task'] = r.headers.waitFor;
  if (r.headers.waitTimeout !== undefined) headers['trine-wait-timeout'] = r.headers.waitTimeout;
  if (r.headers.acceptEncoding !== undefined) headers['accept-encoding'] = r.headers.acceptEncoding;
  let body = r.body.text === undefined ? undefined : Buffer.from(r.body.text);
  if (r.headers.encoding !== undefined && body !== undefined) {
    // `gzip:raw` announces gzip but sends the bytes as they are.
    headers['content-encoding'] = r.headers.encoding === 'gzip:raw' ? 'gzip' : r.headers.encoding;
    if (r.headers.encoding === 'gzip') body = gzipSync(body);
  }
  const shownBody = body === undefined ? '' : ` --data-binary ${JSON.stringify(r.body.text!.length > 500 ? `${r.body.text!.slice(0, 500)}…(${r.body.text!.length} chars)` : r.body.text)}`;
  const shownHeaders = Object.entries(headers).map(([k, v]) => ` -H ${JSON.stringify(`${k}: ${v.length > 200 ? `${v.slice(0, 200)}…` : v}`)}`).join('');
  return { method: r.method, path, headers, body, shown: `curl -X ${r.method} ${JSON.stringify(`http://127.0.0.1:7700${path}`)}${shownHeaders}${shownBody}` };
}

function safeDecode(v: string): string {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
}

const WRITES = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);
/** POSTs that only read. */
const READ_POSTS = [/\/search$/, /\/multi-search$/, /\/facet-search$/, /\/documents\/fetch$/, /\/similar$/, /\/render-template$/];

function checkErrorShape(a: Answer): string | null {
  if (a.body === '') return a.status === 404 ? null : `an empty ${a.status} body`;
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(a.body) as Record<string, unknown>;
  } catch {
    return `a ${a.status} whose body is not JSON: ${a.body.slice(0, 200)}`;
  }
  if (JSON.stringify(Object.keys(body)) !== JSON.stringify(['message', 'code', 'type', 'link'])) return `a ${a.status} body without the error shape: ${a.body.slice(0, 300)}`;
  const info = (ERROR_CODES as Record<string, { status: number; type: string }>)[body['code'] as string];
  if (!info) return `the code \`${String(body['code'])}\`, not in the table`;
  if (info.status !== a.status || info.type !== body['type']) return `code ${String(body['code'])} answered ${a.status}/${String(body['type'])}, the table says ${info.status}/${info.type}`;
  if (body['link'] !== ERROR_LINK_BASE + String(body['code'])) return `the link ${String(body['link'])}`;
  if (typeof body['message'] !== 'string' || body['message'] === '') return 'an empty message';
  return null;
}

describe('the HTTP API under generated hostile requests', () => {
  it(`answers every request without a 5xx, with the error shape, and changes nothing on a refused or failed write (seed ${SEED}, ${RUNS} requests)`, async () => {
    const counts = { requests: 0, ok: 0, clientErrors: 0, writesRefused: 0, tasksFailed: 0, tasksSucceeded: 0, unsendable: 0, slowestMs: 0 };
    const byStatus = new Map<number, number>();
    const byCode = new Map<string, number>();
    /** The last requests sent, shown with a failure: a state change may come from one of them. */
    const recent: string[] = [];
    await fc.assert(
      fc.asyncProperty(requestArb, async (r) => {
        const { method, path, headers, body, shown } = build(r);
        const isWrite = WRITES.has(method) && !(method === 'POST' && READ_POSTS.some((re) => re.test(r.op.path)));
        const named = r.op.path.includes('{indexUid}') ? safeDecode(r.params[0] ?? '') : undefined;
        const scope = named !== undefined && /^[A-Za-z0-9_-]{1,400}$/.test(named) ? named : undefined;
        const before = isWrite ? await state(undefined, scope) : null;
        let a: Answer;
        const sentAt = performance.now();
        try {
          a = await send(method, path, headers, body);
          counts.slowestMs = Math.max(counts.slowestMs, Math.round(performance.now() - sentAt));
        } catch (e) {
          // Node's client refuses some header values and paths outright: nothing reached the server.
          if ((e as NodeJS.ErrnoException).code === 'ERR_INVALID_CHAR' || (e as NodeJS.ErrnoException).code === 'ERR_UNESCAPED_CHARACTERS') {
            counts.unsendable++;
            return;
          }
          throw new Error(`${shown}\n→ ${(e as Error).message}`);
        }
        counts.requests++;
        byStatus.set(a.status, (byStatus.get(a.status) ?? 0) + 1);
        const fail = (why: string) => {
          throw new Error(`${shown}\n→ ${a.status} ${a.body.slice(0, 500)}\n${why}\nThe requests before it:\n${recent.join('\n')}`);
        };
        recent.push(`${shown.slice(0, 400)} → ${a.status} ${a.body.slice(0, 200)}`);
        if (recent.length > 6) recent.shift();
        if (a.status >= 500) fail('a 5xx answer');
        if (a.status >= 400) {
          counts.clientErrors++;
          const bad = method === 'HEAD' ? null : checkErrorShape(a);
          if (bad) fail(`the error is not in the reference shape: ${bad}`);
          const code = a.body ? String((JSON.parse(a.body) as { code: string }).code) : `(empty ${a.status})`;
          byCode.set(code, (byCode.get(code) ?? 0) + 1);
          if (before !== null) {
            counts.writesRefused++;
            const after = await state(undefined, scope);
            if (after !== before) fail(`a refused write changed the documents, settings, keys or features: ${firstDifference(before, after)}`);
          }
          return;
        }
        counts.ok++;
        if (a.status === 202 && before !== null) {
          const uid = (JSON.parse(a.body) as { taskUid: number }).taskUid;
          const task = await waitTask(uid);
          if (task['status'] === 'failed') {
            counts.tasksFailed++;
            const err = task['error'] as Record<string, unknown>;
            if (ERROR_CODES[err['code'] as keyof typeof ERROR_CODES]?.type === 'internal' && err['code'] === 'internal') fail(`the task failed with an internal error: ${JSON.stringify(err)}`);
            // As in the reference, a document task that had to create its index keeps it (empty) even when it fails.
            const uid = task['indexUid'] as string | null;
            const existed = (JSON.parse(before) as { indexes: { uid: string }[] }).indexes.some((i) => i.uid === uid);
            const created = uid !== null && !existed && r.op.path.endsWith('/documents') && (await fetch(`${t.url}/indexes/${uid}`, { headers: AUTH })).ok;
            const after = await state(created ? uid : undefined, scope);
            if (created && (await api('GET', `/indexes/${uid}/stats`))['numberOfDocuments'] !== 0) fail('a failed task left documents in the index it created');
            if (after !== before) fail(`the task failed (${JSON.stringify(err)}) but changed the documents, settings, keys or features: ${firstDifference(before, after)}`);
          } else counts.tasksSucceeded++;
        }
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    const health = await fetch(`${t.url}/health`);
    expect(await health.json()).toEqual({ status: 'available' });
    const statuses = [...byStatus.entries()].sort((x, y) => x[0] - y[0]).map(([s, n]) => `${s}: ${n}`).join(', ');
    const codes = [...byCode.entries()].sort((x, y) => y[1] - x[1]).map(([c, n]) => `${c}: ${n}`).join(', ');
    console.log(`fuzz seed ${SEED}: ${JSON.stringify(counts)}; by status ${statuses}; by error code ${codes}`);
    expect(counts.requests).toBeGreaterThan(RUNS * 0.9);
  }, 300_000);
});
