import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { shardOf } from '../../src/engine/network/shards.js';
import { apiError, until } from '../helpers/api-error.js';

// Facet searches and document fetches with `useNetwork`: a sharded network of two instances
// (`a` leads and holds `s1`, `b` holds `s2`), and an unsharded one whose other remote is down.
const KEY_A = 'reads-a-master-key-0123456789';
const KEY_B = 'reads-b-master-key-0123456789';
let a: TestNode;
let b: TestNode;
let c: TestNode;

const DOCS = Array.from({ length: 40 }, (_, i) => ({ id: i, rank: (i * 7) % 40, genre: i % 4 === 0 ? 'rare' : i % 2 === 0 ? 'even' : 'odd', name: `n${String(i).padStart(2, '0')}` }));
const onA = DOCS.filter((d) => shardOf(['s1', 's2'], String(d.id)) === 's1');
const onB = DOCS.filter((d) => shardOf(['s1', 's2'], String(d.id)) === 's2');

async function post(node: TestNode, key: string, path: string, body: unknown) {
  const r = await fetch(`${node.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

async function get(node: TestNode, key: string, path: string) {
  const r = await fetch(`${node.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

beforeAll(async () => {
  [a, b, c] = await Promise.all([startTestNode(['--master-key', KEY_A]), startTestNode(['--master-key', KEY_B]), startTestNode()]);
  await Promise.all([a, b, c].map((n) => n.client.updateExperimentalFeatures({ network: true })));
  await Promise.all([a.client.updateNetwork({ self: 'a' }), b.client.updateNetwork({ self: 'b' })]);
  const searchB = (await b.client.createKey({ actions: ['search', 'documents.get'], indexes: ['*'], expiresAt: null })).key;
  await a.client
    .initializeNetwork({
      self: 'a',
      remotes: { a: { url: a.url, searchApiKey: KEY_A, writeApiKey: KEY_A }, b: { url: b.url, searchApiKey: searchB, writeApiKey: KEY_B } },
      shards: { s1: { remotes: ['a'] }, s2: { remotes: ['b'] } },
    })
    .waitTask();
  await until(() => b.client.getNetwork(), (n) => n.leader === 'a');
  const settings = await post(a, KEY_A, '/indexes/items/documents', DOCS);
  await Promise.all([a.client.tasks.waitForTask(settings.body['taskUid']), b.client.tasks.waitForTask(settings.body['network']['remoteTasks']['b']['taskUid'])]);
  const r = await fetch(`${a.url}/indexes/items/settings`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
    body: JSON.stringify({ filterableAttributes: ['genre', 'rank'], sortableAttributes: ['rank', 'name'] }),
  });
  const patched = (await r.json()) as Record<string, any>;
  await Promise.all([a.client.tasks.waitForTask(patched['taskUid']), b.client.tasks.waitForTask(patched['network']['remoteTasks']['b']['taskUid'])]);
  // `c`: no leader, so every remote holds its own documents; `ghost` cannot be reached.
  await c.client.index('items').addDocuments(DOCS.slice(0, 5), { primaryKey: 'id' }).waitTask();
  await c.client.index('items').updateFilterableAttributes(['genre']).waitTask();
  await c.client.updateNetwork({ self: 'c', remotes: { c: { url: c.url }, ghost: { url: 'http://127.0.0.1:9' } } });
}, 60_000);
afterAll(async () => {
  await Promise.all([a?.close(), b?.close(), c?.close()]);
});

const countOf = (docs: typeof DOCS, genre: string) => docs.filter((d) => d.genre === genre).length;

describe('facet search with useNetwork', () => {
  it('counts the facet values of every shard once, from any instance', async () => {
    expect(onA.length).toBeGreaterThan(5);
    expect(onB.length).toBeGreaterThan(5);
    const local = await a.client.index('items').searchForFacetValues({ facetName: 'genre', useNetwork: false } as never);
    expect(local.facetHits).toEqual(['even', 'odd', 'rare'].map((value) => ({ value, count: countOf(onA, value) })).filter((h) => h.count > 0));
    // Left out, useNetwork is on in a sharded network, as in the reference.
    for (const [node, useNetwork] of [[a, true], [b, true], [a, undefined]] as const) {
      const all = (await node.client.index('items').searchForFacetValues({ facetName: 'genre', useNetwork } as never)) as unknown as Record<string, any>;
      expect(all['facetHits']).toEqual([
        { value: 'even', count: 10 },
        { value: 'odd', count: 20 },
        { value: 'rare', count: 10 },
      ]);
      expect(all['remoteErrors']).toEqual({});
      expect(all['facetQuery']).toBeNull();
    }
    // The facet query and the filter apply on every instance.
    const some = await post(b, KEY_B, '/indexes/items/facet-search', { facetName: 'genre', facetQuery: 'ra', filter: 'rank < 20', useNetwork: true });
    expect(some.status).toBe(200);
    expect(some.body['facetHits']).toEqual([{ value: 'rare', count: DOCS.filter((d) => d.genre === 'rare' && d.rank < 20).length }]);
    expect(some.body['facetQuery']).toBe('ra');
  });

  it('orders merged values by count when the facet is sorted by count', async () => {
    const r = await fetch(`${a.url}/indexes/items/settings/faceting`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sortFacetValuesBy: { genre: 'count' } }),
    });
    const t = (await r.json()) as Record<string, any>;
    await Promise.all([a.client.tasks.waitForTask(t['taskUid']), b.client.tasks.waitForTask(t['network']['remoteTasks']['b']['taskUid'])]);
    const all = await post(a, KEY_A, '/indexes/items/facet-search', { facetName: 'genre', useNetwork: true });
    expect(all.body['facetHits']).toEqual([
      { value: 'odd', count: 20 },
      { value: 'even', count: 10 },
      { value: 'rare', count: 10 },
    ]);
  });

  it('refuses a useNetwork that is not a boolean, and needs the network feature', async () => {
    expect(await post(a, KEY_A, '/indexes/items/facet-search', { facetName: 'genre', useNetwork: 'yes' })).toMatchObject({
      status: 400,
      body: { code: 'invalid_search_use_network', type: 'invalid_request', message: expect.stringContaining('useNetwork') },
    });
    await c.client.updateExperimentalFeatures({ network: false });
    try {
      expect(await apiError(c.client.index('items').searchForFacetValues({ facetName: 'genre', useNetwork: true } as never))).toMatchObject({ status: 400, code: 'feature_not_enabled' });
      // `false` asks for nothing the feature gives, but names it all the same.
      expect(await apiError(c.client.index('items').searchForFacetValues({ facetName: 'genre', useNetwork: false } as never))).toMatchObject({ code: 'feature_not_enabled' });
    } finally {
      await c.client.updateExperimentalFeatures({ network: true });
    }
  });

  it('reports a remote that cannot be reached and answers with the others', async () => {
    const all = (await c.client.index('items').searchForFacetValues({ facetName: 'genre', useNetwork: true } as never)) as unknown as Record<string, any>;
    expect(all['facetHits']).toEqual(['even', 'odd', 'rare'].map((value) => ({ value, count: countOf(DOCS.slice(0, 5), value) })));
    expect(all['remoteErrors']['ghost']).toMatchObject({ code: 'remote_could_not_send_request', type: 'system' });
  });
});

describe('documents with useNetwork', () => {
  it('lists the documents of every shard once, in sort order across instances', async () => {
    const byRank = [...DOCS].sort((x, y) => y.rank - x.rank);
    for (const node of [a, b]) {
      const page = (await node.client.index('items').getDocuments({ filter: 'rank >= 0', sort: ['rank:desc'], fields: ['id', 'rank'], limit: 7, offset: 3, useNetwork: true } as never)) as unknown as Record<string, any>;
      expect(page).toMatchObject({ offset: 3, limit: 7, total: 40 });
      expect(page['results']).toEqual(byRank.slice(3, 10).map((d) => ({ id: d.id, rank: d.rank })));
      expect(page['remoteErrors']).toBeUndefined();
    }
    // Strings sort too, and the filter applies on every instance.
    const names = await post(b, KEY_B, '/indexes/items/documents/fetch', { filter: 'genre = odd', sort: ['name:asc'], fields: ['name'], limit: 100, useNetwork: true });
    expect(names.body['results']).toEqual(DOCS.filter((d) => d.genre === 'odd').map((d) => ({ name: d.name })));
    expect(names.body['total']).toBe(20);
  });

  it('answers GET /documents?useNetwork=true and a document held by another instance', async () => {
    const all = await get(a, KEY_A, '/indexes/items/documents?useNetwork=true&limit=100&fields=id');
    expect(all.status).toBe(200);
    expect(all.body['total']).toBe(40);
    // Without sort, each part's documents come in turn.
    expect(all.body['results'].map((d: { id: number }) => d.id)).toEqual([...onA, ...onB].map((d) => d.id));
    const local = await get(a, KEY_A, '/indexes/items/documents?limit=100&useNetwork=false');
    expect(local.body['total']).toBe(onA.length);
    // Left out, useNetwork is on in a sharded network.
    expect((await get(a, KEY_A, '/indexes/items/documents?limit=1')).body['total']).toBe(40);

    const elsewhere = onB[0]!;
    expect(await get(a, KEY_A, `/indexes/items/documents/${elsewhere.id}?useNetwork=false`)).toMatchObject({ status: 404, body: { code: 'document_not_found' } });
    expect(await get(a, KEY_A, `/indexes/items/documents/${elsewhere.id}?fields=id`)).toMatchObject({ status: 200, body: { id: elsewhere.id } });
    expect(await a.client.index('items').getDocument(elsewhere.id, { fields: ['id', 'genre'], useNetwork: true } as never)).toEqual({ id: elsewhere.id, genre: elsewhere.genre });
    expect(await get(a, KEY_A, '/indexes/items/documents/999?useNetwork=true')).toMatchObject({ status: 404, body: { code: 'document_not_found', message: 'Document `999` not found.' } });
  });

  it('refuses a useNetwork that is not a boolean, and needs the network feature', async () => {
    expect(await post(a, KEY_A, '/indexes/items/documents/fetch', { useNetwork: 1 })).toMatchObject({ status: 400, body: { code: 'invalid_document_use_network', type: 'invalid_request' } });
    expect(await get(a, KEY_A, '/indexes/items/documents?useNetwork=maybe')).toMatchObject({ status: 400, body: { code: 'invalid_document_use_network' } });
    expect(await get(a, KEY_A, '/indexes/items/documents/1?useNetwork=maybe')).toMatchObject({ status: 400, body: { code: 'invalid_document_use_network' } });
    await c.client.updateExperimentalFeatures({ network: false });
    try {
      expect(await apiError(c.client.index('items').getDocuments({ useNetwork: true } as never))).toMatchObject({ status: 400, code: 'feature_not_enabled' });
      expect(await apiError(c.client.index('items').getDocument(0, { useNetwork: true } as never))).toMatchObject({ code: 'feature_not_enabled' });
    } finally {
      await c.client.updateExperimentalFeatures({ network: true });
    }
  });

  it('reports a remote that cannot be reached and answers with the others', async () => {
    const page = (await c.client.index('items').getDocuments({ useNetwork: true, fields: ['id'] } as never)) as unknown as Record<string, any>;
    expect(page['results']).toEqual(DOCS.slice(0, 5).map((d) => ({ id: d.id })));
    expect(page['total']).toBe(5);
    expect(page['remoteErrors']['ghost']).toMatchObject({ code: 'remote_could_not_send_request' });
    // Writes of an unsharded network are not sent on: their tasks have no `network`.
    expect('network' in (await c.client.tasks.getTask(0))).toBe(false);
  });
});
