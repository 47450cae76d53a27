import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { freePort, startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

// Two independent instances, `a` and `b`, each with its own master key and its own movies:
// a federated search on `a` sends the queries marked `remote: "b"` to `b` and merges the hits.
const KEY_A = 'network-a-master-key-0123456789';
const KEY_B = 'network-b-master-key-0123456789';
let a: TestNode;
let b: TestNode;
let searchKeyB: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestNode(['--master-key', KEY_A]), startTestNode(['--master-key', KEY_B])]);
  const movies = (titles: [number, string, string][]) => titles.map(([id, title, genre]) => ({ id, title, genre }));
  await Promise.all([
    a.client.index('movies').updateSettings({ filterableAttributes: ['genre'] }).waitTask(),
    b.client.index('movies').updateSettings({ filterableAttributes: ['genre'] }).waitTask(),
  ]);
  await Promise.all([
    a.client
      .index('movies')
      .addDocuments(movies([[1, 'Alien', 'horror'], [2, 'Heat', 'crime'], [3, 'Alien hunter', 'action']]))
      .waitTask(),
    b.client
      .index('movies')
      .addDocuments(movies([[10, 'Alien', 'horror'], [11, 'The alien invasion of the red planet', 'horror'], [12, 'Jaws', 'horror']]))
      .waitTask(),
  ]);
  searchKeyB = (await b.client.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null })).key;
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

async function raw(node: TestNode, key: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(node.url + path, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

const both = (q: string, extra: Record<string, unknown> = {}) => [
  { indexUid: 'movies', q, federationOptions: { remote: 'a' }, ...extra },
  { indexUid: 'movies', q, federationOptions: { remote: 'b' }, ...extra },
];

describe('the network', () => {
  it('is behind the network experimental feature', async () => {
    expect(await apiError(a.client.getNetwork())).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message: 'Using the /network route requires enabling the `network` experimental feature. See https://github.com/orgs/meilisearch/discussions/805',
    });
    const search = await raw(a, KEY_A, 'POST', '/multi-search', { federation: {}, queries: both('alien') });
    expect(search.body).toMatchObject({ code: 'feature_not_enabled', message: expect.stringMatching(/^Performing a remote federated search requires/) });
    await Promise.all([a.client.updateExperimentalFeatures({ network: true }), b.client.updateExperimentalFeatures({ network: true })]);
    expect(await a.client.getNetwork()).toEqual({ self: null, remotes: {}, shards: {}, leader: null, version: '00000000-0000-0000-0000-000000000000' });
  });

  it('is set, merged and checked as the reference does', async () => {
    const net = (await a.client.updateNetwork({
      self: 'a',
      remotes: { a: { url: a.url, searchApiKey: KEY_A }, b: { url: b.url, searchApiKey: searchKeyB, writeApiKey: KEY_B } },
    })) as Record<string, any>;
    expect(net).toEqual({
      self: 'a',
      remotes: { a: { url: a.url, searchApiKey: KEY_A, writeApiKey: null }, b: { url: b.url, searchApiKey: searchKeyB, writeApiKey: KEY_B } },
      shards: {},
      leader: null,
      version: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-7/),
    });
    expect(await a.client.getNetwork()).toEqual(net);
    // A remote given again keeps what is left out; `null` removes one.
    await a.client.updateNetwork({ remotes: { c: { url: 'http://127.0.0.1:1' } } });
    const changed = (await a.client.updateNetwork({ remotes: { b: { writeApiKey: null } as never, c: null } })) as Record<string, any>;
    expect(changed['remotes']).toEqual({ a: net['remotes'].a, b: { url: b.url, searchApiKey: searchKeyB, writeApiKey: null } });
    expect(changed['version']).not.toBe(net['version']);

    const refused = async (body: unknown) => (await raw(a, KEY_A, 'PATCH', '/network', body)).body;
    expect(await refused({ remotes: { d: { searchApiKey: 'x' } } })).toMatchObject({ code: 'missing_network_url', message: 'Missing field `.remotes.d.url`' });
    expect(await refused({ remotes: { d: { url: 'nope' } } })).toMatchObject({ code: 'invalid_network_url', message: 'Invalid `.remotes.d.url` (`nope`): relative URL without a base' });
    expect(await refused({ remotes: { b: { url: null } } })).toMatchObject({ code: 'invalid_network_url', message: 'Field `.remotes.b.url` cannot be set to `null`' });
    expect(await refused({ remotes: { b: { url: b.url, port: 1 } } })).toMatchObject({ code: 'invalid_network_remotes' });
    expect(await refused({ remotes: { b: { searchApiKey: 1 } } })).toMatchObject({ code: 'invalid_network_search_api_key' });
    expect(await refused({ self: 3 })).toMatchObject({ code: 'invalid_network_self' });
    expect(await refused({ previousRemotes: {} })).toMatchObject({ code: 'unexpected_network_previous_remotes', message: 'The reserved field `previousRemotes` was used. Remove this field.' });
    expect(await refused({ leader: 'b' })).toMatchObject({ code: 'not_leader' });
    expect(await refused({ leader: 'a' })).toMatchObject({ code: 'invalid_network_shards', message: 'there must be at least one shard owned by at least one remote' });
    expect(await refused({ leader: 'a', shards: { s0: { remotes: ['z'] } } })).toMatchObject({ code: 'invalid_network_shards', message: 'unknown remote `z` in `.s0.remotes`' });
    expect((await a.client.getNetwork()).remotes).toEqual(changed['remotes']);

    await b.client.updateNetwork({ self: 'b', remotes: { a: { url: a.url, searchApiKey: KEY_A }, b: { url: b.url } } });
  });
});

describe('a federated search over remotes', () => {
  it('merges the hits of this instance and the remote, each tagged with its instance', async () => {
    const r = (await a.client.multiSearch({ federation: {}, queries: both('alien') as never })) as Record<string, any>;
    expect(r['remoteErrors']).toEqual({});
    const hits = r['hits'] as Record<string, any>[];
    expect(hits.map((h) => `${h['_federation'].remote}:${h['title']}`).sort()).toEqual(['a:Alien', 'a:Alien hunter', 'b:Alien', 'b:The alien invasion of the red planet']);
    for (const h of hits) {
      expect(Object.keys(h['_federation'])).toEqual(['indexUid', 'queriesPosition', 'weightedRankingScore', 'remote']);
      expect(h['_federation'].queriesPosition).toBe(h['_federation'].remote === 'a' ? 0 : 1);
    }
    // Best first, whichever instance found it; the exact titles ahead of the longer ones.
    const scores = hits.map((h) => h['_federation'].weightedRankingScore as number);
    expect(scores).toEqual([...scores].sort((x, y) => y - x));
    expect(hits.slice(0, 2).map((h) => h['title'])).toEqual(['Alien', 'Alien']);
    expect(r['estimatedTotalHits']).toBe(4);

    // Weights apply to the remote's hits as to local ones; offset and limit to the merged list.
    const weighted = (await a.client.multiSearch({
      federation: { limit: 2, offset: 1 },
      queries: [
        { indexUid: 'movies', q: 'alien', federationOptions: { remote: 'a', weight: 0.1 } },
        { indexUid: 'movies', q: 'alien', federationOptions: { remote: 'b' } },
      ] as never,
    })) as Record<string, any>;
    expect(weighted['hits'].map((h: any) => `${h._federation.remote}:${h.title}`)).toEqual(['b:The alien invasion of the red planet', 'a:Alien']);
    expect(weighted['estimatedTotalHits']).toBe(4);
  });

  it('adds the remote facet counts to the local ones', async () => {
    const r = (await a.client.multiSearch({ federation: { facetsByIndex: { movies: ['genre'] } }, queries: both('') as never })) as Record<string, any>;
    expect(r['facetsByIndex'].movies.distribution).toEqual({ genre: { action: 1, crime: 1, horror: 4 } });
    const merged = (await a.client.multiSearch({ federation: { facetsByIndex: { movies: ['genre'] }, mergeFacets: {} }, queries: both('') as never })) as Record<string, any>;
    expect(merged['facetDistribution']).toEqual({ genre: { action: 1, crime: 1, horror: 4 } });
  });

  it('answers a proxied search with the weighted scores the sender merges on', async () => {
    const r = await raw(b, searchKeyB, 'POST', '/multi-search', { federation: {}, queries: [{ indexUid: 'movies', q: 'jaws', federationOptions: { queryPosition: 7 } }] }, { 'Meili-Proxy-Search': 'true' });
    expect(r.status).toBe(200);
    expect(r.body['hits'][0]._federation).toEqual({ indexUid: 'movies', queriesPosition: 7, weightedRankingScore: expect.any(Number), weightedScoreValues: [{ weightedScore: expect.any(Number) }] });
  });

  it('reports a remote that fails under remoteErrors and keeps the other hits', async () => {
    const port = await freePort();
    await a.client.updateNetwork({ remotes: { down: { url: `http://127.0.0.1:${port}` }, wrongkey: { url: b.url, searchApiKey: 'not-a-key' } } });
    const r = (await a.client.multiSearch({
      federation: {},
      queries: [
        { indexUid: 'movies', q: 'heat', federationOptions: { remote: 'a' } },
        { indexUid: 'movies', q: 'heat', federationOptions: { remote: 'down' } },
        { indexUid: 'movies', q: 'heat', federationOptions: { remote: 'wrongkey' } },
      ] as never,
    })) as Record<string, any>;
    expect(r['hits'].map((h: any) => h.title)).toEqual(['Heat']);
    expect(Object.keys(r['remoteErrors']).sort()).toEqual(['down', 'wrongkey']);
    expect(r['remoteErrors'].down).toMatchObject({ code: 'remote_could_not_send_request', type: 'system', link: 'https://docs.meilisearch.com/errors#remote_could_not_send_request' });
    expect(r['remoteErrors'].wrongkey).toMatchObject({ code: 'remote_invalid_api_key', type: 'auth' });

    // A remote without the feature refuses proxied searches: the reference's `remote_bad_request`.
    await b.client.updateExperimentalFeatures({ network: false });
    const off = (await a.client.multiSearch({ federation: {}, queries: both('heat') as never })) as Record<string, any>;
    expect(off['remoteErrors'].b).toMatchObject({ code: 'remote_bad_request', message: expect.stringContaining('feature_not_enabled') });
    await b.client.updateExperimentalFeatures({ network: true });

    const unknown = await raw(a, KEY_A, 'POST', '/multi-search', { federation: {}, queries: [{ indexUid: 'movies', q: 'x', federationOptions: { remote: 'nowhere' } }] });
    expect(unknown.body).toMatchObject({ code: 'invalid_multi_search_remote', message: 'Invalid `queries[0].federation_options.remote`: remote `nowhere` is not registered' });
    await a.client.updateNetwork({ remotes: { down: null, wrongkey: null } });
  });
});

describe('a remote that never answers', () => {
  it('is reported as timed out after the remote deadline, and the local hits still come', async () => {
    // Accepts connections and reads requests, but never answers.
    const sockets = new Set<Socket>();
    const hang = createServer((s) => {
      sockets.add(s);
      s.on('data', () => {});
    });
    await new Promise<void>((res) => hang.listen(0, '127.0.0.1', res));
    const port = (hang.address() as AddressInfo).port;
    try {
      await a.client.updateNetwork({ remotes: { hang: { url: `http://127.0.0.1:${port}` } } });
      const started = Date.now();
      const r = (await a.client.multiSearch({
        federation: {},
        queries: [
          { indexUid: 'movies', q: 'heat', federationOptions: { remote: 'a' } },
          { indexUid: 'movies', q: 'heat', federationOptions: { remote: 'hang' } },
        ] as never,
      })) as Record<string, any>;
      const took = Date.now() - started;
      expect(r['hits'].map((h: any) => h.title)).toEqual(['Heat']);
      expect(r['remoteErrors'].hang).toMatchObject({ code: 'remote_timeout', type: 'system' });
      expect(sockets.size).toBeGreaterThan(0);
      // Given up at the remote's own deadline (5 s), not waited on for ever.
      expect(took).toBeGreaterThanOrEqual(4_500);
      expect(took).toBeLessThan(20_000);
    } finally {
      await a.client.updateNetwork({ remotes: { hang: null } });
      for (const s of sockets) s.destroy();
      await new Promise((res) => hang.close(res));
    }
  }, 30_000);
});

describe('a network with a leader', () => {
  it('changes through networkTopologyChange tasks, only on the leader', async () => {
    const task = await a.client
      .initializeNetwork({ self: 'a', remotes: { a: { url: a.url, searchApiKey: KEY_A }, b: { url: b.url, searchApiKey: searchKeyB } }, shards: { s0: { remotes: ['a'] }, s1: { remotes: ['b'] } } })
      .waitTask();
    // `a` holds movies that shard s1 now owns, but `b` was registered without a write key: the
    // change is in effect, the documents cannot be moved, and they stay on `a`.
    expect(task).toMatchObject({ type: 'networkTopologyChange', status: 'failed', indexUid: null, details: { movedDocuments: 0, message: 'Finished' } });
    expect(task.error).toMatchObject({ code: 'remote_invalid_api_key', type: 'auth' });
    expect(task.error!.message).toMatch(/^The new network is in effect, but the documents it gives to other remotes could not be sent to them, so they stay on this instance: remote `b` refused/);
    expect(await a.client.getNetwork()).toMatchObject({ self: 'a', leader: 'a', shards: { s0: { remotes: ['a'] }, s1: { remotes: ['b'] } } });
    expect((await a.client.index('movies').getDocuments({ useNetwork: false } as object)).total).toBe(3);

    await a.client.addRemote({ name: 'c', remote: { url: 'http://127.0.0.1:2' } }).waitTask();
    await a.client.addRemotesToShard('s1', ['c']).waitTask();
    expect((await a.client.getNetwork()).shards).toEqual({ s0: { remotes: ['a'] }, s1: { remotes: ['b', 'c'] } });
    await a.client.removeRemotesFromShard('s1', ['b']).waitTask();
    // Removing a remote takes it out of every shard; a shard left without remotes goes.
    await a.client.removeRemote({ name: 'c' }).waitTask();
    expect(await a.client.getNetwork()).toMatchObject({ remotes: { a: expect.any(Object), b: expect.any(Object) }, shards: { s0: { remotes: ['a'] } } });
    expect((await a.client.tasks.getTasks({ types: ['networkTopologyChange'] })).results).toHaveLength(5);

    // Searches still reach the remotes; clearing the leader makes changes immediate again.
    const r = (await a.client.multiSearch({ federation: {}, queries: both('jaws') as never })) as Record<string, any>;
    expect(r['hits'].map((h: any) => `${h._federation.remote}:${h.title}`)).toEqual(['b:Jaws']);
    const cleared = (await a.client.updateNetwork({ leader: null, shards: null })) as Record<string, any>;
    expect(cleared).toMatchObject({ leader: null, shards: {} });
  });
});
