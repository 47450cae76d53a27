import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { freePort, startTestNode, type TestNode } from '../helpers/node.js';
import { shardOf } from '../../src/engine/network/shards.js';
import { IMPORT_DOCS_HEADER, IMPORT_REMOTE_HEADER, ORIGIN_NETWORK_VERSION_HEADER, ORIGIN_REMOTE_HEADER, ORIGIN_TASK_UID_HEADER } from '../../src/network/write-proxy.js';

// A sharded network whose shards change: each change moves the documents a shard gives to
// another remote there (they are sent by the instance that holds them, then deleted from it),
// and the leader's task ends once the whole network has moved.
const KEYS = { a: 'move-a-master-key-0123456789', b: 'move-b-master-key-0123456789', c: 'move-c-master-key-0123456789' };
type Name = keyof typeof KEYS;
const nodes = {} as Record<Name, TestNode>;

const DOCS = Array.from({ length: 200 }, (_, i) => ({ id: i, title: `movie ${i}`, genre: i % 3 === 0 ? 'drama' : 'comedy' }));
const ALL = DOCS.map((d) => d.id);

async function raw(name: Name, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const r = await fetch(nodes[name].url + path, {
    method,
    headers: { authorization: `Bearer ${KEYS[name]}`, 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, any> };
}

/** The ids an instance holds itself. */
async function held(name: Name, index = 'movies'): Promise<number[]> {
  const r = await raw(name, 'GET', `/indexes/${index}/documents?limit=1000&fields=id&useNetwork=false`);
  if (r.status === 404) return [];
  return (r.body['results'] as { id: number }[]).map((d) => d.id).sort((x, y) => x - y);
}

const inShard = (shards: string[], shard: string) => ALL.filter((id) => shardOf(shards, String(id)) === shard);

/** Changes the network on the leader and waits for its task; answers the task. */
async function change(patch: Record<string, unknown>, customMetadata?: string) {
  const r = await raw('a', 'PATCH', customMetadata === undefined ? '/network' : `/network?customMetadata=${customMetadata}`, patch);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const task = await nodes.a.client.tasks.waitForTask(r.body['taskUid'], { timeout: 30_000 });
  return { task: task as unknown as Record<string, any>, remoteTasks: r.body['network']['remoteTasks'] as Record<string, { taskUid?: number }> };
}

const remote = (name: Name) => ({ url: nodes[name].url, searchApiKey: KEYS[name], writeApiKey: KEYS[name] });

beforeAll(async () => {
  const started = await Promise.all((['a', 'b', 'c'] as Name[]).map((n) => startTestNode(['--master-key', KEYS[n]])));
  (['a', 'b', 'c'] as Name[]).forEach((n, i) => (nodes[n] = started[i]!));
  for (const n of ['a', 'b', 'c'] as Name[]) {
    await nodes[n].client.updateExperimentalFeatures({ network: true });
    await nodes[n].client.updateNetwork({ self: n });
  }
});
afterAll(async () => {
  await Promise.all(Object.values(nodes).map((n) => n?.close()));
});

describe('a network topology change', () => {
  it('starts a sharded network on the instance that holds the documents', async () => {
    await nodes.a.client.index('movies').updateSettings({ filterableAttributes: ['genre'], searchableAttributes: ['title'] }).waitTask();
    await nodes.a.client.index('movies').addDocuments(DOCS).waitTask();
    const { task } = await change({ self: 'a', leader: 'a', remotes: { a: remote('a') }, shards: { s1: { remotes: ['a'] } } });
    expect(task).toMatchObject({ status: 'succeeded', details: { movedDocuments: 0, message: 'Finished' } });
    expect(await held('a')).toEqual(ALL);
  });

  it('moves the documents of a new shard to its remote, creating the index there with its settings', async () => {
    const { task, remoteTasks } = await change({ remotes: { b: remote('b') }, shards: { s2: { remotes: ['b'] } } });
    const toB = inShard(['s1', 's2'], 's2');
    expect(toB.length).toBeGreaterThan(50);
    expect(task).toMatchObject({ type: 'networkTopologyChange', status: 'succeeded', error: null, details: { movedDocuments: toB.length, message: 'Finished' } });
    // The leader's task ended after b's own change had.
    const onB = (await nodes.b.client.tasks.getTask(remoteTasks['b']!.taskUid!)) as unknown as Record<string, any>;
    expect(onB).toMatchObject({ type: 'networkTopologyChange', status: 'succeeded' });
    expect(await held('b')).toEqual(toB);
    expect(await held('a')).toEqual(inShard(['s1', 's2'], 's1'));
    expect(await nodes.b.client.index('movies').getFilterableAttributes()).toEqual(['genre']);
    expect(await nodes.b.client.index('movies').getSearchableAttributes()).toEqual(['title']);
    expect((await nodes.b.client.index('movies').getRawInfo()).primaryKey).toBe('id');
    // b's tasks say where the documents came from, and for which change.
    const imports = (await raw('b', 'GET', '/tasks?types=documentAdditionOrUpdate')).body['results'] as Record<string, any>[];
    expect(imports.length).toBeGreaterThan(0);
    const version = (await nodes.a.client.getNetwork()).version;
    expect(imports[0]!['network']).toEqual({ importFrom: { remoteName: 'a', indexName: 'movies', documentCount: toB.length }, networkChange: { remoteName: 'a', taskUid: task['uid'], networkVersion: version } });
    expect(imports[0]!['details']).toMatchObject({ receivedDocuments: toB.length, indexedDocuments: toB.length });
    // Read as one index, the network still holds every document once.
    const all = (await nodes.a.client.index('movies').search('movie', { limit: 1000 })) as unknown as Record<string, any>;
    expect(all['estimatedTotalHits']).toBe(200);
    expect(new Set((all['hits'] as { id: number }[]).map((h) => h.id)).size).toBe(200);
    expect((await nodes.a.client.index('movies').search('', { filter: 'genre = drama', limit: 1000 })).hits).toHaveLength(ALL.filter((i) => i % 3 === 0).length);
  });

  it('copies a shard to a remote added to it, and the leader waits for that copy', async () => {
    const { task, remoteTasks } = await change({ remotes: { c: remote('c') }, shards: { s2: { addRemotes: ['c'] } } }, 'add-c');
    expect(task['customMetadata']).toBe('add-c');
    // a gave nothing away; b sent s2 to c and kept it (it still owns it).
    expect(task).toMatchObject({ status: 'succeeded', details: { movedDocuments: 0 } });
    const onB = (await nodes.b.client.tasks.getTask(remoteTasks['b']!.taskUid!)) as unknown as Record<string, any>;
    expect(onB).toMatchObject({ status: 'succeeded', details: { movedDocuments: 0, message: 'Finished' } });
    const s2 = inShard(['s1', 's2'], 's2');
    expect(await held('c')).toEqual(s2);
    expect(await held('b')).toEqual(s2);
    expect(await nodes.c.client.index('movies').getFilterableAttributes()).toEqual(['genre']);
  });

  it('takes the documents of a removed remote off it once the others hold them', async () => {
    const before = await held('b');
    const { task, remoteTasks } = await change({ remotes: { b: null } });
    expect(task).toMatchObject({ status: 'succeeded' });
    // b was told, and deleted what c already holds.
    const onB = (await nodes.b.client.tasks.getTask(remoteTasks['b']!.taskUid!)) as unknown as Record<string, any>;
    expect(onB).toMatchObject({ status: 'succeeded', details: { movedDocuments: before.length } });
    expect(await held('b')).toEqual([]);
    expect(await held('c')).toEqual(before);
    expect((await nodes.a.client.getNetwork()).shards).toEqual({ s1: { remotes: ['a'] }, s2: { remotes: ['c'] } });
  });

  it('sends a removed shard back from another remote to the leader', async () => {
    const fromC = await held('c');
    const { task, remoteTasks } = await change({ shards: { s2: null } });
    expect(task).toMatchObject({ status: 'succeeded', details: { movedDocuments: 0 } });
    const onC = (await nodes.c.client.tasks.getTask(remoteTasks['c']!.taskUid!)) as unknown as Record<string, any>;
    expect(onC).toMatchObject({ status: 'succeeded', details: { movedDocuments: fromC.length, message: 'Finished' } });
    expect(await held('a')).toEqual(ALL);
    expect(await held('c')).toEqual([]);
    // a's import task names c and c's task (the change's own task there).
    const imports = (await raw('a', 'GET', '/tasks?types=documentAdditionOrUpdate&limit=1')).body['results'] as Record<string, any>[];
    expect(imports[0]!['network']).toMatchObject({ importFrom: { remoteName: 'c', indexName: 'movies', documentCount: fromC.length }, networkChange: { remoteName: 'a', taskUid: task['uid'] } });
  });

  it('fails, and keeps every document where it was, when a new owner cannot be reached', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const { task } = await change({ remotes: { d: { url: closed, writeApiKey: 'x' } }, shards: { s3: { remotes: ['d'] } } });
    expect(task).toMatchObject({ status: 'failed', details: { movedDocuments: 0 } });
    expect(task['error']).toMatchObject({ code: 'remote_could_not_send_request', type: 'system' });
    expect(task['error']['message']).toMatch(/^The new network is in effect, but the documents it gives to other remotes could not be sent to them, so they stay on this instance: could not reach remote `d`: /);
    expect(await held('a')).toEqual(ALL);
    // Taking the remote out again leaves nothing to move.
    const { task: back } = await change({ remotes: { d: null } });
    expect(back).toMatchObject({ status: 'succeeded', details: { movedDocuments: 0 } });
    expect(await held('a')).toEqual(ALL);
  });

  it('refuses documents sent for a network version this instance has not applied', async () => {
    const r = await raw('c', 'POST', '/indexes/movies/documents', [{ id: 1 }], {
      [IMPORT_REMOTE_HEADER]: 'b',
      [IMPORT_DOCS_HEADER]: '1',
      [ORIGIN_REMOTE_HEADER]: 'a',
      [ORIGIN_TASK_UID_HEADER]: '1',
      [ORIGIN_NETWORK_VERSION_HEADER]: '01900000-0000-7000-8000-000000000000',
    });
    expect(r.status).toBe(412);
    expect(r.body).toMatchObject({ code: 'network_version_mismatch', type: 'invalid_request' });
    expect(r.body['message']).toMatch(/send them again once this instance has applied that network change/);
    const bare = await raw('c', 'POST', '/indexes/movies/documents', [{ id: 1 }], { [`x-${IMPORT_REMOTE_HEADER}`]: 'b' });
    expect(bare.status).toBe(400);
  });
});

describe('a move under way when the leader stops', () => {
  const KEY_X = 'move-x-master-key-0123456789';
  const KEY_Y = 'move-y-master-key-0123456789';
  let x: TestNode;
  let y: TestNode;
  let proxy: Server;
  let held_: (() => void) | null = null;
  let seen = 0;

  beforeAll(async () => {
    [x, y] = await Promise.all([startTestNode(['--master-key', KEY_X]), startTestNode(['--master-key', KEY_Y])]);
    for (const [n, name] of [[x, 'x'], [y, 'y']] as const) {
      await n.client.updateExperimentalFeatures({ network: true });
      await n.client.updateNetwork({ self: name });
    }
    // y is reached through this proxy, which holds the first document import until released.
    const target = new URL(y.url);
    proxy = createServer((req: IncomingMessage, res: ServerResponse) => {
      const forward = () => {
        const out = request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        out.on('error', () => res.destroy());
        req.pipe(out);
      };
      if (req.method === 'POST' && req.url?.includes('/documents') && seen++ === 0) {
        held_ = () => res.destroy();
        req.resume();
        return;
      }
      forward();
    });
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  });
  afterAll(async () => {
    await Promise.all([x?.close(), y?.close()]);
    held_?.();
    await new Promise((r) => proxy?.close(r));
  });

  it('is finished by the node when it leads again after a restart', async () => {
    const viaProxy = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    await x.client.index('movies').addDocuments(DOCS).waitTask();
    await x.client.initializeNetwork({ self: 'x', remotes: { x: { url: x.url, writeApiKey: KEY_X } }, shards: { s1: { remotes: ['x'] } } } as never).waitTask();
    const r = await fetch(`${x.url}/network`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${KEY_X}`, 'content-type': 'application/json' },
      body: JSON.stringify({ remotes: { y: { url: viaProxy, writeApiKey: KEY_Y, searchApiKey: KEY_Y } }, shards: { s2: { remotes: ['y'] } } }),
    });
    const taskUid = ((await r.json()) as { taskUid: number }).taskUid;
    // The first import is held: the task stays processing, the network is in effect.
    for (let i = 0; i < 200 && held_ === null; i++) await new Promise((res) => setTimeout(res, 25));
    expect(held_).not.toBeNull();
    expect(await x.client.tasks.getTask(taskUid)).toMatchObject({ status: 'processing', details: { movedDocuments: 0, message: 'Exporting documents' } });
    expect((await x.client.getNetwork()).shards).toHaveProperty('s2');

    const dir = x.dir;
    await x.close({ keepData: true });
    held_!();
    x = await startTestNode(['--master-key', KEY_X], dir);
    const task = (await x.client.tasks.waitForTask(taskUid, { timeout: 30_000 })) as unknown as Record<string, any>;
    const toY = inShard(['s1', 's2'], 's2');
    expect(task).toMatchObject({ status: 'succeeded', error: null, details: { movedDocuments: toY.length, message: 'Finished' } });
    // Noted through the log while its first batch ran, the task's network outlived the restart.
    expect(task['network']).toMatchObject({ remoteTasks: { y: { taskUid: expect.any(Number), error: null } } });
    const ids = async (n: TestNode) => (await n.client.index('movies').getDocuments({ limit: 1000, fields: ['id'], useNetwork: false } as object)).results.map((d) => (d as { id: number }).id).sort((p, q) => p - q);
    expect(await ids(y)).toEqual(toY);
    expect(await ids(x)).toEqual(inShard(['s1', 's2'], 's1'));
    // The task ended in a second batch of its own.
    const batches = (await (await fetch(`${x.url}/batches?limit=2`, { headers: { authorization: `Bearer ${KEY_X}` } })).json()) as Record<string, any>;
    expect(batches['results'][0]['details']).toBeDefined();
    expect(task['batchUid']).toBe(batches['results'][0]['uid']);
  }, 60_000);
});
