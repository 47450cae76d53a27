import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { shardOf } from '../../src/engine/network/shards.js';
import { xxh3 } from '../../src/engine/network/xxh3.js';
import { apiError, until } from '../helpers/api-error.js';

// A sharded network of two instances: `a` leads and holds shard `s1`, `b` holds `s2`. Writes go
// to the leader, which sends them on; each instance keeps the documents of its shard.
const KEY_A = 'sharding-a-master-key-0123456789';
const KEY_B = 'sharding-b-master-key-0123456789';
let a: TestNode;
let b: TestNode;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestNode(['--master-key', KEY_A]), startTestNode(['--master-key', KEY_B])]);
  await Promise.all([a.client.updateExperimentalFeatures({ network: true }), b.client.updateExperimentalFeatures({ network: true })]);
  await Promise.all([a.client.updateNetwork({ self: 'a' }), b.client.updateNetwork({ self: 'b' })]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const DOCS = Array.from({ length: 60 }, (_, i) => ({ id: i, title: `movie ${i}`, genre: i % 2 === 0 ? 'even' : 'odd' }));

describe('the shard of a document', () => {
  it('is decided by XXH3 rendezvous hashing, as the reference decides it', () => {
    // Values of the reference implementation of XXH3-64 (seed 0).
    expect(xxh3(new Uint8Array())).toBe(0x2d06800538d394c2n);
    expect(xxh3(new TextEncoder().encode('a'))).toBe(0xe6c632b61e964e1fn);
    expect(xxh3(Uint8Array.from([...new TextEncoder().encode('shard-a'), 0xff, 0x31, 0xff]))).toBe(0x1b75030c5cecb96bn);
    expect(shardOf([], 'x')).toBeNull();
    const shards = ['s1', 's2', 's3'];
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) counts.set(shardOf(shards, String(i))!, (counts.get(shardOf(shards, String(i))!) ?? 0) + 1);
    for (const s of shards) expect(counts.get(s)).toBeGreaterThan(800);
    // Adding a shard moves only the documents the new shard wins.
    for (let i = 0; i < 500; i++) {
      const after = shardOf([...shards, 's4'], String(i));
      if (after !== 's4') expect(after).toBe(shardOf(shards, String(i)));
    }
  });
});

describe('a sharded network', () => {
  it('is set up on the leader, which sends the change on to the other remotes', async () => {
    const searchB = (await b.client.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null })).key;
    const task = await a.client
      .initializeNetwork({
        self: 'a',
        remotes: { a: { url: a.url, searchApiKey: KEY_A, writeApiKey: KEY_A }, b: { url: b.url, searchApiKey: searchB, writeApiKey: KEY_B } },
        shards: { s1: { remotes: ['a'] }, s2: { remotes: ['b'] } },
      })
      .waitTask();
    expect(task).toMatchObject({ type: 'networkTopologyChange', status: 'succeeded' });
    const seen = await until(() => b.client.getNetwork(), (n) => n.leader === 'a');
    expect(seen).toMatchObject({ self: 'b', leader: 'a', shards: { s1: { remotes: ['a'] }, s2: { remotes: ['b'] } } });
  });

  it('refuses writes on an instance that is not the leader', async () => {
    expect(await apiError(b.client.index('movies').addDocuments([{ id: 1 }]))).toMatchObject({ status: 400, code: 'not_leader' });
    expect(await apiError(b.client.index('movies').updateSettings({ filterableAttributes: ['genre'] }))).toMatchObject({ code: 'not_leader' });
  });

  it('sends writes to every remote, and each keeps the documents of its own shards', async () => {
    const r = await fetch(`${a.url}/indexes/movies/settings`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ filterableAttributes: ['genre'] }),
    });
    const summary = (await r.json()) as Record<string, any>;
    expect(r.status).toBe(202);
    expect(summary['network']['remoteTasks']['b']).toMatchObject({ taskUid: expect.any(Number), error: null });
    await a.client.tasks.waitForTask(summary['taskUid']);
    await b.client.tasks.waitForTask(summary['network']['remoteTasks']['b']['taskUid']);
    expect(await b.client.index('movies').getFilterableAttributes()).toEqual(['genre']);

    const add = await fetch(`${a.url}/indexes/movies/documents`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify(DOCS),
    });
    const added = (await add.json()) as Record<string, any>;
    const [ta, tb] = await Promise.all([a.client.tasks.waitForTask(added['taskUid']), b.client.tasks.waitForTask(added['network']['remoteTasks']['b']['taskUid'])]);
    const onA = DOCS.filter((d) => shardOf(['s1', 's2'], String(d.id)) === 's1').map((d) => d.id);
    const onB = DOCS.filter((d) => shardOf(['s1', 's2'], String(d.id)) === 's2').map((d) => d.id);
    expect(onA.length).toBeGreaterThan(10);
    expect(onB.length).toBeGreaterThan(10);
    expect(ta.details).toMatchObject({ receivedDocuments: 60, indexedDocuments: onA.length });
    expect(tb.details).toMatchObject({ receivedDocuments: 60, indexedDocuments: onB.length });
    // What each instance holds itself (a sharded network answers reads as one index unless asked not to).
    const ids = async (n: TestNode) =>
      (await n.client.index('movies').getDocuments({ limit: 100, fields: ['id'], useNetwork: false } as object)).results.map((d) => (d as Record<string, any>)['id']).sort((x, y) => x - y);
    expect(await ids(a)).toEqual(onA);
    expect(await ids(b)).toEqual(onB);

    // Deletions reach every remote too.
    const del = await fetch(`${a.url}/indexes/movies/documents/delete-batch`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify([onA[0], onB[0]]),
    });
    const deleted = (await del.json()) as Record<string, any>;
    await Promise.all([a.client.tasks.waitForTask(deleted['taskUid']), b.client.tasks.waitForTask(deleted['network']['remoteTasks']['b']['taskUid'])]);
    expect(await ids(a)).toEqual(onA.slice(1));
    expect(await ids(b)).toEqual(onB.slice(1));
  });

  it('filters by shard with _shard, and finds every document once with useNetwork', async () => {
    const movies = a.client.index('movies');
    const local = { useNetwork: false } as object;
    const own = await movies.search('', { filter: '_shard = s1', limit: 100, ...local });
    expect(own.estimatedTotalHits).toBe((await movies.getStats()).numberOfDocuments);
    expect((await movies.search('', { filter: '_shard = s2', ...local })).hits).toEqual([]);
    expect((await movies.search('', { filter: '_shard IN [s2, s1] AND genre = even', limit: 100, ...local })).hits.every((h) => h['genre'] === 'even')).toBe(true);
    expect((await movies.search('', { filter: '_shard != s1', ...local })).hits).toEqual([]);
    expect((await apiError(movies.search('', { filter: '_shard EXISTS', ...local }))).message).toMatch(/^Index `movies`: The `_shard` field only takes `=`, `!=`, `IN` and `NOT IN`/);
    // Left out, useNetwork is on in a sharded network, as in the reference: `_shard = s2` finds b's documents.
    const s2 = await movies.search('', { filter: '_shard = s2', limit: 100 });
    expect(s2.estimatedTotalHits).toBe((await b.client.index('movies').getStats()).numberOfDocuments);
    expect(s2.hits.every((h) => (h as Record<string, any>)['_federation']['remote'] === 'b')).toBe(true);
    // A multi-search query too, unless it names a remote.
    const multi = await a.client.multiSearch({ queries: [{ indexUid: 'movies', q: 'movie', limit: 100 }] });
    expect(multi.results[0]!.estimatedTotalHits).toBe(58);
    const named = (await a.client.multiSearch({ federation: {}, queries: [{ indexUid: 'movies', q: 'movie', federationOptions: { remote: 'b' } }] })) as unknown as Record<string, any>;
    expect(named['estimatedTotalHits']).toBe((await b.client.index('movies').getStats()).numberOfDocuments);

    for (const node of [a, b]) {
      const all = (await node.client.index('movies').search('movie', { useNetwork: true, limit: 100 } as object)) as unknown as Record<string, any>;
      expect(all['estimatedTotalHits']).toBe(58);
      const found = (all['hits'] as Record<string, any>[]).map((h) => h['id']);
      expect(new Set(found).size).toBe(58);
      expect(all['remoteErrors']).toEqual({});
    }
  });

  it('keeps in each task where its write went: remote task uids on the leader, the origin on the others', async () => {
    const add = await fetch(`${a.url}/indexes/movies/documents?customMetadata=import-7`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify([{ id: 100, title: 'movie 100', genre: 'even' }]),
    });
    const added = (await add.json()) as Record<string, any>;
    const version = (await a.client.getNetwork()).version;
    const remoteUid = added['network']['remoteTasks']['b']['taskUid'] as number;
    const [ta, tb] = await Promise.all([a.client.tasks.waitForTask(added['taskUid']), b.client.tasks.waitForTask(remoteUid)]);
    const onLeader = (await (await fetch(`${a.url}/tasks/${ta.uid}`, { headers: { authorization: `Bearer ${KEY_A}` } })).json()) as Record<string, any>;
    expect(onLeader['network']).toEqual({ remoteTasks: { b: { taskUid: remoteUid, error: null } }, networkVersion: version });
    expect(Object.keys(onLeader).slice(-3)).toEqual(['finishedAt', 'network', 'customMetadata']);
    const onRemote = (await (await fetch(`${b.url}/tasks/${tb.uid}`, { headers: { authorization: `Bearer ${KEY_B}` } })).json()) as Record<string, any>;
    expect(onRemote['network']).toEqual({ origin: { remoteName: 'a', taskUid: ta.uid, networkVersion: version } });
    expect(onRemote['customMetadata']).toBe('import-7');
    // The task list shows it too.
    const listed = (await (await fetch(`${a.url}/tasks?uids=${ta.uid}`, { headers: { authorization: `Bearer ${KEY_A}` } })).json()) as Record<string, any>;
    expect(listed['results'][0]['network']).toEqual(onLeader['network']);
  });

  it('keeps in the task why a remote made no task of a write', async () => {
    const change = await fetch(`${a.url}/network`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' },
      body: JSON.stringify({ remotes: { ghost: { url: 'http://127.0.0.1:9', writeApiKey: 'x' } } }),
    });
    const changed = (await change.json()) as Record<string, any>;
    expect(change.status).toBe(202);
    expect(changed['network']['remoteTasks']['ghost']).toEqual({ error: expect.objectContaining({ code: 'remote_could_not_send_request', type: 'system' }) });
    await a.client.tasks.waitForTask(changed['taskUid']);
    const onLeader = await a.client.tasks.getTask(changed['taskUid']);
    expect((onLeader as unknown as Record<string, any>)['network']['remoteTasks']).toMatchObject({
      b: { taskUid: expect.any(Number), error: null },
      ghost: { error: { code: 'remote_could_not_send_request', link: 'https://docs.meilisearch.com/errors#remote_could_not_send_request' } },
    });
    // b applied the change sent on, and its task names where it came from.
    const remoteUid = changed['network']['remoteTasks']['b']['taskUid'] as number;
    const onB = (await b.client.tasks.waitForTask(remoteUid)) as unknown as Record<string, any>;
    expect(onB['network']).toEqual({ origin: { remoteName: 'a', taskUid: changed['taskUid'], networkVersion: expect.any(String) } });
  });
});
