import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

// `useNetwork: true`: one search answered by every instance of the network. Two instances, `a`
// and `b`, each hold their own movies; `down` is a remote that nothing listens on.
const KEY_A = 'usenetwork-a-master-key-0123456789';
const KEY_B = 'usenetwork-b-master-key-0123456789';
let a: TestNode;
let b: TestNode;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestNode(['--master-key', KEY_A]), startTestNode(['--master-key', KEY_B])]);
  const movies = (rows: [number, string, string][]) => rows.map(([id, title, genre]) => ({ id, title, genre }));
  await Promise.all(
    [a, b].map((n) => n.client.index('movies').updateSettings({ filterableAttributes: ['genre'], sortableAttributes: ['id'] }).waitTask()),
  );
  await Promise.all([
    a.client.index('movies').addDocuments(movies([[1, 'Alien', 'horror'], [2, 'Heat', 'crime'], [3, 'Alien hunter', 'action']])).waitTask(),
    b.client.index('movies').addDocuments(movies([[10, 'Alien', 'horror'], [11, 'Alien nation', 'scifi'], [12, 'Jaws', 'horror']])).waitTask(),
  ]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function post(node: TestNode, key: string, path: string, body: unknown) {
  const r = await fetch(node.url + path, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const where = (hits: Record<string, any>[]) => hits.map((h) => `${h['_federation']?.remote}:${h['id']}`);

describe('useNetwork', () => {
  it('needs the network feature and a boolean', async () => {
    expect(await apiError(a.client.index('movies').search('alien', { useNetwork: true } as object))).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message: 'passing `useNetwork` in a search query requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    });
    await Promise.all([a.client.updateExperimentalFeatures({ network: true }), b.client.updateExperimentalFeatures({ network: true })]);
    const bad = await post(a, KEY_A, '/indexes/movies/search', { q: 'alien', useNetwork: 'yes' });
    expect(bad).toMatchObject({ status: 400, body: { code: 'invalid_search_use_network' } });
    const badMulti = await post(a, KEY_A, '/multi-search', { queries: [{ indexUid: 'movies', useNetwork: 1 }] });
    expect(badMulti.body['code']).toBe('invalid_search_use_network');
  });

  it('searches every remote of the network and merges the hits, each with the instance that found it', async () => {
    const searchKeyB = (await b.client.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null })).key;
    await a.client.updateNetwork({ self: 'a', remotes: { a: { url: a.url, searchApiKey: KEY_A }, b: { url: b.url, searchApiKey: searchKeyB } } });
    // Without it, only this instance's documents.
    expect((await a.client.index('movies').search('alien')).hits.map((h) => h['id']).sort()).toEqual([1, 3]);
    const r = await a.client.index('movies').search('alien', { useNetwork: true, facets: ['genre'], showRankingScore: true } as object);
    expect(where(r.hits).sort()).toEqual(['a:1', 'a:3', 'b:10', 'b:11']);
    // Merged by ranking score, as a federated search merges.
    const scores = r.hits.map((h) => h['_rankingScore'] as number);
    expect([...scores].sort((x, y) => y - x)).toEqual(scores);
    for (const h of r.hits) expect(h['_federation']).toMatchObject({ indexUid: 'movies', queriesPosition: 0, weightedRankingScore: h['_rankingScore'] });
    expect(r).toMatchObject({ query: 'alien', limit: 20, offset: 0, estimatedTotalHits: 4, facetDistribution: { genre: { horror: 2, action: 1, scifi: 1 } }, remoteErrors: {} });
    expect(Object.keys(r)).toEqual(['hits', 'query', 'processingTimeMs', 'limit', 'offset', 'estimatedTotalHits', 'facetDistribution', 'facetStats', 'requestUid', 'remoteErrors']);
    // Pagination applies to the merged list.
    const page = await a.client.index('movies').search('alien', { useNetwork: true, hitsPerPage: 3, page: 2 } as object);
    expect(page).toMatchObject({ hitsPerPage: 3, page: 2, totalPages: 2, totalHits: 4 });
    expect(page.hits).toHaveLength(1);
    // GET takes it too.
    const get = await fetch(`${a.url}/indexes/movies/search?q=alien&useNetwork=true&filter=genre%3Dhorror`, { headers: { authorization: `Bearer ${KEY_A}` } });
    expect(where(((await get.json()) as { hits: Record<string, any>[] }).hits).sort()).toEqual(['a:1', 'b:10']);
  });

  it('works in each query of a multi-search, federated or not', async () => {
    const multi = await a.client.multiSearch({ queries: [{ indexUid: 'movies', q: 'alien', useNetwork: true } as never, { indexUid: 'movies', q: 'jaws' }] });
    expect(multi.results[0]).toMatchObject({ indexUid: 'movies', query: 'alien', estimatedTotalHits: 4, remoteErrors: {} });
    expect(where(multi.results[0]!.hits as Record<string, any>[]).sort()).toEqual(['a:1', 'a:3', 'b:10', 'b:11']);
    expect(multi.results[1]!.hits).toEqual([]);
    const fed = await a.client.multiSearch({
      federation: {},
      queries: [{ indexUid: 'movies', q: 'heat' }, { indexUid: 'movies', q: 'jaws', useNetwork: true } as never],
    });
    expect(fed.hits.map((h) => [h['id'], h['_federation']])).toEqual(
      expect.arrayContaining([
        [2, expect.objectContaining({ queriesPosition: 0, remote: 'a' })],
        [12, expect.objectContaining({ queriesPosition: 1, remote: 'b' })],
      ]),
    );
    expect(fed.hits).toHaveLength(2);
    const named = await post(a, KEY_A, '/multi-search', { federation: {}, queries: [{ indexUid: 'movies', useNetwork: true, federationOptions: { remote: 'b' } }] });
    expect(named).toMatchObject({ status: 400, body: { code: 'invalid_multi_search_remote' } });
  });

  it('reports a remote that cannot be reached under remoteErrors and answers with the others', async () => {
    const port = await freePort();
    await a.client.updateNetwork({ remotes: { down: { url: `http://127.0.0.1:${port}` } } });
    try {
      const r = (await a.client.index('movies').search('alien', { useNetwork: true } as object)) as unknown as Record<string, any>;
      expect(where(r['hits']).sort()).toEqual(['a:1', 'a:3', 'b:10', 'b:11']);
      expect(Object.keys(r['remoteErrors'])).toEqual(['down']);
      expect(r['remoteErrors']['down']).toMatchObject({ code: 'remote_could_not_send_request', type: 'system' });
    } finally {
      await a.client.updateNetwork({ remotes: { down: null } });
    }
  });

  it('is not used on a search another instance sent (no fan-out loop), nor when false', async () => {
    const r = await a.client.index('movies').search('alien', { useNetwork: false } as object);
    expect(r.hits.map((h) => h['id']).sort()).toEqual([1, 3]);
    expect('remoteErrors' in r).toBe(false);
    const proxied = await fetch(`${a.url}/multi-search`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'meili-proxy-search': 'true' },
      body: JSON.stringify({ federation: {}, queries: [{ indexUid: 'movies', q: 'alien', useNetwork: true }] }),
    });
    const body = (await proxied.json()) as { hits: Record<string, any>[] };
    expect(body.hits.map((h) => h['id']).sort()).toEqual([1, 3]);
  });

  it('gives, with Service-Include-Metadata, one metadata entry per query, those sent to remotes included', async () => {
    // The same index on both instances, with a different primary key on each.
    await Promise.all([
      a.client.index('people').addDocuments([{ code: 'x1', name: 'alien fan' }], { primaryKey: 'code' }).waitTask(),
      b.client.index('people').addDocuments([{ pid: 'y1', name: 'alien hater' }], { primaryKey: 'pid' }).waitTask(),
    ]);
    const headers = { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json', 'service-include-metadata': 'true' };
    const r = await fetch(`${a.url}/multi-search`, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        federation: {},
        queries: [
          { indexUid: 'people', q: 'alien', federationOptions: { remote: 'b' } },
          { indexUid: 'people', q: 'alien' },
          { indexUid: 'movies', q: 'alien', useNetwork: true },
          { indexUid: 'people', q: 'alien', federationOptions: { remote: 'a' } },
        ],
      }),
    });
    const body = (await r.json()) as Record<string, any>;
    expect(r.status).toBe(200);
    expect(body['metadata']).toEqual([
      { queryUid: expect.any(String), indexUid: 'people', primaryKey: 'pid', remote: 'b' },
      { queryUid: expect.any(String), indexUid: 'people', primaryKey: 'code', remote: 'a' },
      { queryUid: expect.any(String), indexUid: 'movies', primaryKey: 'id', remote: 'a' },
      { queryUid: expect.any(String), indexUid: 'people', primaryKey: 'code', remote: 'a' },
    ]);
    expect(new Set(body['metadata'].map((m: { queryUid: string }) => m.queryUid)).size).toBe(4);
    expect(body['hits'].some((h: Record<string, any>) => h['pid'] === 'y1' && h['_federation']['remote'] === 'b')).toBe(true);

    // A single search sent to the network: one metadata object, naming this instance.
    const one = await fetch(`${a.url}/indexes/movies/search`, { method: 'POST', headers, body: JSON.stringify({ q: 'alien', useNetwork: true }) });
    expect(((await one.json()) as Record<string, any>)['metadata']).toEqual({ queryUid: expect.any(String), indexUid: 'movies', primaryKey: 'id', remote: 'a' });

    // A remote that fails still has its entry, without a primary key to tell.
    const port = await freePort();
    await a.client.updateNetwork({ remotes: { down: { url: `http://127.0.0.1:${port}` } } });
    try {
      const failed = await fetch(`${a.url}/multi-search`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ federation: {}, queries: [{ indexUid: 'people', q: 'alien', federationOptions: { remote: 'down' } }, { indexUid: 'people', q: 'alien' }] }),
      });
      const f = (await failed.json()) as Record<string, any>;
      expect(f['metadata']).toEqual([
        { queryUid: expect.any(String), indexUid: 'people', primaryKey: null, remote: 'down' },
        { queryUid: expect.any(String), indexUid: 'people', primaryKey: 'code', remote: 'a' },
      ]);
      expect(Object.keys(f['remoteErrors'])).toEqual(['down']);
    } finally {
      await a.client.updateNetwork({ remotes: { down: null } });
    }
    // Without the header, no metadata.
    const plain = await post(a, KEY_A, '/multi-search', { federation: {}, queries: [{ indexUid: 'people', q: 'alien', federationOptions: { remote: 'b' } }] });
    expect('metadata' in plain.body).toBe(false);
  });
});
