import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import { generateKeyPair, SignJWT } from 'jose';
import { generateTenantToken } from 'meilisearch/token';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertQueryIndexAuthorized, authHook, withSearchRules } from '../../src/auth/request-auth.js';
import { ApiError } from '../../src/errors/api-error.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

/**
 * Tenant tokens against keys created through the real API. The search routes are checked
 * through a small app guarded by the same hook, whose handlers do what the search routes must
 * (AND the token's filter in, check each multi-search query); when the node serves its own
 * search route, the same token is also tried there.
 */

const MASTER = 'tenant-token-master-key-0123456789';
let t: TestNode;
let app: FastifyInstance;
let parent: { uid: string; key: string };

async function createKey(body: Record<string, unknown>): Promise<{ uid: string; key: string }> {
  const r = await fetch(`${t.url}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
    body: JSON.stringify({ expiresAt: null, ...body }),
  });
  expect(r.status).toBe(201);
  return (await r.json()) as { uid: string; key: string };
}

function sign(claims: Record<string, unknown>, secret: string, alg = 'HS256'): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

async function search(token: string, index: string, filter?: unknown) {
  const r = await app.inject({
    method: 'POST',
    url: `/indexes/${index}/search`,
    headers: { authorization: `Bearer ${token}` },
    payload: filter === undefined ? {} : { filter },
  });
  return { status: r.statusCode, body: r.json() as Record<string, unknown> };
}

function refused(message: string) {
  return { status: 403, body: { message, code: 'invalid_api_key', type: 'auth', link: 'https://docs.meilisearch.com/errors#invalid_api_key' } };
}

beforeAll(async () => {
  t = await startTestNode(['--master-key', MASTER]);
  parent = await createKey({ actions: ['search', 'documents.get'], indexes: ['books*', 'bar'] });
  app = Fastify();
  app.addHook('onRequest', authHook(t.node.ctx.keys));
  app.setErrorHandler((err, _req, reply) =>
    err instanceof ApiError ? reply.status(err.status).send(err.toJSON()) : reply.status(500).send({ message: (err as Error).message }),
  );
  const uidOf = (req: FastifyRequest) => (req.params as { indexUid: string }).indexUid;
  app.post('/indexes/:indexUid/search', { config: { action: 'search' } }, async (req) => ({
    filter: withSearchRules(req, uidOf(req), (req.body as { filter?: unknown } | undefined)?.filter ?? null),
  }));
  app.get('/indexes/:indexUid/documents', { config: { action: 'documents.get' } }, async () => ({ results: [] }));
  app.post('/multi-search', { config: { action: 'search' } }, async (req) => {
    const { queries } = req.body as { queries: { indexUid: string; filter?: unknown }[] };
    queries.forEach((q, i) => assertQueryIndexAuthorized(req, q.indexUid, i));
    return { filters: queries.map((q) => withSearchRules(req, q.indexUid, q.filter ?? null)) };
  });
  await app.ready();
});
afterAll(async () => {
  await app.close();
  await t.close();
});

describe('tenant tokens', () => {
  it('accept the array form, limited to its patterns', async () => {
    const token = await generateTenantToken({ apiKey: parent.key, apiKeyUid: parent.uid, searchRules: ['books', 'bar'] });
    expect(await search(token, 'books', 'a = 1')).toEqual({ status: 200, body: { filter: 'a = 1' } });
    expect(await search(token, 'bookshelf')).toEqual(refused('The provided tenant token cannot acces the index `bookshelf`, allowed indexes are ["bar", "books"].'));
    const prefix = await generateTenantToken({ apiKey: parent.key, apiKeyUid: parent.uid, searchRules: ['book*'] });
    expect((await search(prefix, 'bookshelf')).status).toBe(200);
  });

  it('AND the rule of the most specific pattern of the object form with the query filter', async () => {
    const rules = { '*': null, 'books*': { filter: 'genre = drama' }, books: { filter: ['lang = en', ['a = 1', 'b = 2']] }, bar: {} };
    for (const algorithm of ['HS256', 'HS384', 'HS512'] as const) {
      const token = await generateTenantToken({ apiKey: parent.key, apiKeyUid: parent.uid, searchRules: rules, algorithm });
      expect((await search(token, 'books', 'year > 2000')).body).toEqual({ filter: ['year > 2000', 'lang = en', ['a = 1', 'b = 2']] });
      expect((await search(token, 'books', ['x = 1', ['y = 2', 'z = 3']])).body).toEqual({
        filter: ['x = 1', ['y = 2', 'z = 3'], 'lang = en', ['a = 1', 'b = 2']],
      });
      expect((await search(token, 'bookshelf')).body).toEqual({ filter: 'genre = drama' });
      expect((await search(token, 'bar', 'q = 1')).body).toEqual({ filter: 'q = 1' });
    }
  });

  it('check each query of a multi-search', async () => {
    const token = await generateTenantToken({ apiKey: parent.key, apiKeyUid: parent.uid, searchRules: { books: { filter: 'f = 1' } } });
    const ok = await app.inject({ method: 'POST', url: '/multi-search', headers: { authorization: `Bearer ${token}` }, payload: { queries: [{ indexUid: 'books' }] } });
    expect(ok.json()).toEqual({ filters: ['f = 1'] });
    const bad = await app.inject({
      method: 'POST',
      url: '/multi-search',
      headers: { authorization: `Bearer ${token}` },
      payload: { queries: [{ indexUid: 'books' }, { indexUid: 'bar' }] },
    });
    expect({ status: bad.statusCode, body: bad.json() }).toEqual(refused('Inside `.queries[1]`: The provided API key is invalid.'));
  });

  it('refuse every bad token with the reference reason', async () => {
    const good = { apiKeyUid: parent.uid, searchRules: ['*'] };
    const expiredAt = Math.floor(Date.now() / 1000) - 10;
    const expired = await search(await sign({ ...good, exp: expiredAt }, parent.key), 'books');
    expect(expired.status).toBe(403);
    expect(expired.body['message']).toMatch(new RegExp(`^Tenant token expired\\. Was valid up to \`${expiredAt}\` and we're now \`\\d+\`\\.$`));
    expect((await search(await sign({ ...good, exp: expiredAt + 3600 }, parent.key), 'books')).status).toBe(200);

    expect(await search(await sign(good, 'not-the-key'), 'books')).toEqual(refused('Could not decode tenant token, InvalidSignature.'));
    const { privateKey } = await generateKeyPair('RS256');
    const rs = await new SignJWT(good).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
    expect(await search(rs, 'books')).toEqual(refused('Could not decode tenant token, InvalidAlgorithm.'));
    expect(await search(await sign({ tamo: 'kefir' }, 'tamo'), 'books')).toEqual(
      refused('Could not decode tenant token, JSON error: missing field `searchRules` at line 1 column 16.'),
    );
    expect(await search(await sign({ searchRules: 'kefir' }, 'tamo'), 'books')).toEqual(
      refused('Could not decode tenant token, JSON error: data did not match any variant of untagged enum SearchRules at line 1 column 23.'),
    );
    expect((await search(await sign({ searchRules: ['*'] }, 'tamo'), 'books')).body['message']).toMatch(/missing field `apiKeyUid`/);
    expect((await search(await sign({ ...good, exp: 1.5 }, parent.key), 'books')).body['message']).toMatch(
      /^Could not decode tenant token, JSON error: invalid type: floating point `1\.5`, expected i64 at line 1 column \d+\.$/,
    );
    // Not a JWT at all: read as an API key.
    expect(await search('kefir', 'books')).toEqual(refused('The provided API key is invalid.'));
  });

  it('never grant more than the parent key', async () => {
    const wide = await sign({ apiKeyUid: parent.uid, searchRules: ['*'] }, parent.key);
    expect(await search(wide, 'movies')).toEqual(refused('The API key used to generate this tenant token cannot acces the index `movies`.'));
    // Tokens are for search routes only.
    const docs = await app.inject({ method: 'GET', url: '/indexes/books/documents', headers: { authorization: `Bearer ${wide}` } });
    expect({ status: docs.statusCode, body: docs.json() }).toEqual(refused('The provided API key is invalid.'));

    const noSearch = await createKey({ actions: ['documents.get'], indexes: ['*'] });
    expect(await search(await sign({ apiKeyUid: noSearch.uid, searchRules: ['*'] }, noSearch.key), 'books')).toEqual(refused('The provided API key is invalid.'));

    const soon = await createKey({ actions: ['search'], indexes: ['*'], expiresAt: new Date(Date.now() + 1000).toISOString() });
    const fromSoon = await sign({ apiKeyUid: soon.uid, searchRules: ['*'] }, soon.key);
    expect((await search(fromSoon, 'books')).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await search(fromSoon, 'books')).toEqual(refused('The provided API key is invalid.'));

    const doomed = await createKey({ actions: ['search'], indexes: ['*'] });
    const fromDoomed = await sign({ apiKeyUid: doomed.uid, searchRules: ['*'] }, doomed.key);
    expect((await search(fromDoomed, 'books')).status).toBe(200);
    await t.client.deleteKey(doomed.uid);
    expect(await search(fromDoomed, 'books')).toEqual(refused('The provided API key is invalid.'));
  });

  it('work on the node own search route', async () => {
    await t.client.createIndex('books', { primaryKey: 'id' }).waitTask();
    await t.client.index('books').updateFilterableAttributes(['lang']).waitTask();
    await t.client.index('books').addDocuments([{ id: 1, lang: 'en' }, { id: 2, lang: 'fr' }]).waitTask();
    const token = await generateTenantToken({ apiKey: parent.key, apiKeyUid: parent.uid, searchRules: { books: { filter: 'lang = fr' } } });
    const r = await fetch(`${t.url}/indexes/books/search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ q: '' }),
    });
    expect(r.status).toBe(200);
    expect(((await r.json()) as { hits: { id: number }[] }).hits.map((h) => h.id)).toEqual([2]);
  });
});
