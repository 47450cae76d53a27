import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import Ajv2020Module from 'ajv/dist/2020.js';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { newAjv, schemaValidator, type Ajv } from './ajv.js';

type Json = Record<string, unknown>;
type Operation = { parameters?: Json[]; requestBody?: { content: Record<string, { schema: unknown }> } };

const MASTER = 'a-master-key-for-openapi-bodies';
let node: TestNode;
let doc: Json;
let ajv: Ajv;

beforeAll(async () => {
  node = await startTestNode(['--master-key', MASTER]);
  doc = (await (await fetch(`${node.url}/openapi.json`)).json()) as Json;
  ajv = newAjv();
  await node.client.createIndex('movies', { primaryKey: 'id' }).waitTask();
});

afterAll(async () => {
  await node?.close();
});

/** The document's operation for a concrete path, found through its path templates. */
function operationFor(method: string, path: string): Operation {
  const paths = doc['paths'] as Record<string, Record<string, Operation>>;
  const bare = path.split('?')[0]!;
  for (const [template, item] of Object.entries(paths)) {
    const re = new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (re.test(bare) && item[method.toLowerCase()]) return item[method.toLowerCase()]!;
  }
  throw new Error(`no operation for ${method} ${path} in the document`);
}

async function send(method: string, path: string, body: unknown): Promise<{ status: number; body: Json }> {
  const r = await fetch(`${node.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${MASTER}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Json) : {} };
}

function bodyValid(method: string, path: string, body: unknown): boolean {
  const schema = operationFor(method, path).requestBody?.content['application/json']?.schema;
  expect(schema, `${method} ${path} documents a JSON body`).toBeDefined();
  return schemaValidator(ajv, doc, schema)(body) as boolean;
}

/** Bodies the server refuses, with the code it answers: the document's schema must refuse them too. */
const INVALID: [string, string, unknown, string][] = [
  ['POST', '/indexes', {}, 'missing_index_uid'],
  ['POST', '/indexes', { uid: 5 }, 'invalid_index_uid'],
  ['POST', '/indexes', { uid: 'not valid!' }, 'invalid_index_uid'],
  ['POST', '/indexes', { uid: 'a', primaryKey: 3 }, 'invalid_index_primary_key'],
  ['POST', '/indexes', { uid: 'a', color: 'red' }, 'bad_request'],
  ['POST', '/indexes', [{ uid: 'a' }], 'bad_request'],
  ['PATCH', '/indexes/movies', { primaryKey: ['id'] }, 'invalid_index_primary_key'],
  ['POST', '/swap-indexes', [{ indexes: 'movies' }], 'invalid_swap_indexes'],
  ['POST', '/swap-indexes', [{ rename: true }], 'missing_swap_indexes'],
  ['POST', '/keys', { actions: ['search'], indexes: ['*'] }, 'missing_api_key_expires_at'],
  ['POST', '/keys', { actions: ['fly'], indexes: ['*'], expiresAt: null }, 'invalid_api_key_actions'],
  ['POST', '/keys', { actions: ['search'], indexes: 'movies', expiresAt: null }, 'invalid_api_key_indexes'],
  ['POST', '/keys', { actions: ['search'], indexes: ['*'], expiresAt: null, name: 7 }, 'invalid_api_key_name'],
  ['POST', '/indexes/movies/documents/fetch', { limit: -1 }, 'invalid_document_limit'],
  ['POST', '/indexes/movies/documents/fetch', { fields: 'title' }, 'invalid_document_fields'],
  ['POST', '/indexes/movies/documents/fetch', { page: 2 }, 'bad_request'],
  ['PATCH', '/experimental-features', { metrics: 'yes' }, 'bad_request'],
  ['PATCH', '/experimental-features', { teleport: true }, 'bad_request'],
  ['PATCH', '/indexes/movies/settings', { rankingRules: 'words' }, 'invalid_settings_ranking_rules'],
  ['PATCH', '/indexes/movies/settings', { stopWords: [1] }, 'invalid_settings_stop_words'],
  ['PATCH', '/indexes/movies/settings', { notASetting: true }, 'bad_request'],
  ['PUT', '/indexes/movies/settings/sortable-attributes', 'title', 'invalid_settings_sortable_attributes'],
  ['PUT', '/indexes/movies/settings/distinct-attribute', 5, 'invalid_settings_distinct_attribute'],
  ['PATCH', '/indexes/movies/settings/pagination', { maxTotalHits: 'many' }, 'invalid_settings_pagination'],
  ['PATCH', '/indexes/movies/settings/typo-tolerance', { enabled: 'no' }, 'invalid_settings_typo_tolerance'],
  ['PUT', '/indexes/movies/settings/facet-search', 'yes', 'invalid_settings_facet_search'],
  ['PATCH', '/indexes/movies/settings/typo-tolerance', { minWordSizeForTypos: { oneTypo: 300 } }, 'invalid_settings_typo_tolerance'],
  ['PATCH', '/indexes/movies/settings/faceting', { sortFacetValuesBy: { '*': 'random' } }, 'invalid_settings_faceting'],
  ['PATCH', '/indexes/movies/settings/pagination', { maxTotalHits: 0 }, 'invalid_settings_pagination'],
];

/** Bodies the server accepts: the schema must accept them as well, or it would mislead clients. */
const VALID: [string, string, unknown][] = [
  ['POST', '/indexes', { uid: 'books', primaryKey: 'isbn' }],
  ['PATCH', '/indexes/movies', { primaryKey: 'id' }],
  ['POST', '/swap-indexes', []],
  ['POST', '/keys', { actions: ['search'], indexes: ['movies'], expiresAt: null, name: 'front' }],
  ['POST', '/keys', { actions: ['documents.get'], indexes: ['mov*'], expiresAt: '2099-01-01' }],
  ['POST', '/indexes/movies/documents/fetch', { limit: 2, fields: ['id'], filter: null }],
  ['PATCH', '/experimental-features', { metrics: false, containsFilter: null }],
  ['PATCH', '/indexes/movies/settings', { rankingRules: ['words', 'typo'], stopWords: ['the'], distinctAttribute: null }],
  ['PUT', '/indexes/movies/settings/sortable-attributes', ['title']],
  ['PUT', '/indexes/movies/settings/distinct-attribute', null],
  ['PATCH', '/indexes/movies/settings/pagination', { maxTotalHits: 50 }],
  ['PUT', '/indexes/movies/settings/facet-search', false],
  ['PATCH', '/indexes/movies/settings/typo-tolerance', { minWordSizeForTypos: { oneTypo: 4 }, disableOnWords: null }],
  ['PATCH', '/indexes/movies/settings/faceting', { sortFacetValuesBy: { '*': 'count' }, maxValuesPerFacet: 10 }],
];

describe('request schemas in the OpenAPI document', () => {
  it.each(INVALID)('%s %s %j: refused by the server (%s) and by the schema', async (method, path, body, code) => {
    const r = await send(method, path, body);
    expect(r.status, JSON.stringify(r.body)).toBeGreaterThanOrEqual(400);
    expect(r.status).toBeLessThan(500);
    expect(r.body['code']).toBe(code);
    expect(Object.keys(r.body)).toEqual(['message', 'code', 'type', 'link']);
    expect(bodyValid(method, path, body)).toBe(false);
  });

  it.each(VALID)('%s %s %j: accepted by the server and by the schema', async (method, path, body) => {
    const r = await send(method, path, body);
    expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
    expect(bodyValid(method, path, body)).toBe(true);
  });

  it('query parameter schemas refuse the values the server refuses, and accept the others', async () => {
    // Query values arrive as text: the schema is applied the way OpenAPI tools do, after coercion.
    type AjvClass = typeof Ajv2020Module.default;
    const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;
    const coercing = new Ajv2020({ strict: false, coerceTypes: 'array', validateFormats: false });
    const cases: [string, string, string, boolean][] = [
      ['/indexes', 'limit', 'abc', false],
      ['/indexes', 'limit', '-1', false],
      ['/indexes', 'limit', '5', true],
      ['/stats', 'sizeFormat', 'gigantic', false],
      ['/stats', 'sizeFormat', 'human', true],
      ['/stats', 'showInternalDatabaseSizes', 'maybe', false],
      ['/indexes/movies/documents', 'offset', '3', true],
      ['/indexes/movies/documents', 'retrieveVectors', 'perhaps', false],
    ];
    for (const [path, name, value, ok] of cases) {
      const r = await send('GET', `${path}?${name}=${encodeURIComponent(value)}`, undefined);
      expect(r.status < 300, `${path}?${name}=${value}: ${JSON.stringify(r.body)}`).toBe(ok);
      const param = operationFor('GET', path).parameters?.find((p) => p['name'] === name);
      expect(param, `${path} documents ${name}`).toBeDefined();
      const check = coercing.compile({ type: 'object', properties: { v: param!['schema'] as object } });
      expect(check({ v: value }), `${path}?${name}=${value} against ${JSON.stringify(param!['schema'])}`).toBe(ok);
    }
  });
});
