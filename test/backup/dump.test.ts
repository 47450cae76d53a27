import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataset } from '../fixtures/index.js';
import { spawnNode, startTestNode, tempDir, type NodeProcess, type TestNode } from '../helpers/node.js';
import { digests, readBackupState, reader, waitTask, type BackupState } from './state.js';

const MASTER = 'a-master-key-for-backups';
const work = tempDir('trine-dump-');
const dumpDir = join(work, 'dumps');
let source: TestNode;
let imported: NodeProcess | null = null;

beforeAll(async () => {
  source = await startTestNode(['--master-key', MASTER, '--dump-dir', dumpDir], join(work, 'source'));
});

afterAll(async () => {
  await imported?.kill('SIGKILL');
  await source?.close();
  rmSync(work, { recursive: true, force: true });
});

async function post(url: string, path: string, body?: unknown, method = 'POST'): Promise<Record<string, unknown>> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${MASTER}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return (await r.json()) as Record<string, unknown>;
}

/** Webhooks, dynamic search rules, chat workspaces and the network, as the API shows them. */
async function readNodeWide(url: string): Promise<unknown> {
  const get = reader(url, MASTER);
  const out = {
    webhooks: await get('/webhooks'),
    rules: await post(url, '/dynamic-search-rules', {}),
    chats: await get('/chats'),
    chat: await get('/chats/support/settings'),
    network: await get('/network'),
  };
  expect((out.webhooks as { results: unknown[] }).results).toHaveLength(1);
  expect((out.rules as { results: unknown[] }).results).toHaveLength(1);
  return out;
}

function searchable(r: Record<string, unknown>): unknown {
  const { processingTimeMs: _p, requestUid: _r, ...rest } = r;
  return rest;
}

describe('dumps', () => {
  let before: BackupState;
  let dumpUid: string;
  let dumpTaskUid: number;
  // Answered from the indexes' search structures (facet postings), which the import rebuilds.
  const queries: [string, unknown][] = [
    ['/indexes/movies/documents/fetch', { filter: 'color = red AND NOT color = green' }],
    ['/indexes/movies/facet-search', { facetName: 'color', facetQuery: 'bl' }],
    ['/indexes/products/documents/fetch', { sort: ['id:desc'], limit: 5 }],
  ];
  const answers: unknown[] = [];
  let nodeWide: unknown;

  it('POST /dumps through the official client writes <dump-dir>/<dumpUid>.dump', async () => {
    const c = source.client;
    await c.createIndex('movies', { primaryKey: 'id' }).waitTask();
    await c
      .index('movies')
      .updateSettings({
        filterableAttributes: ['color'],
        sortableAttributes: ['title'],
        synonyms: { marvel: ['avengers'] },
        stopWords: ['the'],
        typoTolerance: { minWordSizeForTypos: { oneTypo: 4, twoTypos: 8 } },
        pagination: { maxTotalHits: 500 },
      })
      .waitTask();
    await c.index('movies').addDocuments(dataset('movies')).waitTask();
    // An invalid document id fails this one, and a failed task must survive the round trip too.
    const failed = await c.index('products').addDocuments([{ id: 'not valid!' }], { primaryKey: 'id' }).waitTask();
    expect(failed.status).toBe('failed');
    await c.index('products').addDocuments(dataset('products'), { primaryKey: 'id' }).waitTask();
    await c.index('products').updateSettings({ sortableAttributes: ['id'], displayedAttributes: ['id', 'description', 'brand'] }).waitTask();
    await c.index('products').deleteDocument(3).waitTask();
    await c.createKey({ name: 'reader', description: 'reads movies', actions: ['search', 'documents.get'], indexes: ['movies'], expiresAt: null });
    await post(source.url, '/experimental-features', { containsFilter: true, dynamicSearchRules: true, chatCompletions: true, network: true }, 'PATCH');
    // The node-wide state a dump carries besides keys and features.
    await c.createWebhook({ url: 'http://127.0.0.1:9/hook', headers: { 'X-Team': 'search' } });
    await c.updateDynamicSearchRule('pin-one', { actions: [{ selector: { indexUid: 'movies', id: '1' }, action: { type: 'pin', position: 0 } }] } as never).waitTask();
    await c.chat('support').update({ source: 'mistral', apiKey: 'a-chat-api-key-0123456789' } as never);
    await c.updateNetwork({ self: 'here', remotes: { here: { url: source.url }, there: { url: 'http://127.0.0.1:9', searchApiKey: 'k' } } });
    nodeWide = await readNodeWide(source.url);
    for (const [path, body] of queries) answers.push(searchable(await post(source.url, path, body)));

    const task = await c.createDump().waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.type).toBe('dumpCreation');
    dumpUid = (task.details as { dumpUid: string }).dumpUid;
    dumpTaskUid = task.uid;
    expect(dumpUid).toMatch(/^\d{8}-\d{9}$/);
    expect(existsSync(join(dumpDir, `${dumpUid}.dump`))).toBe(true);
    before = await readBackupState(source.url, MASTER);
    expect(before.tasks.at(-1)!['uid']).toBe(dumpTaskUid);
  });

  it('--import-dump on a fresh node recreates documents, settings, keys, features and the task list exactly', async () => {
    imported = await spawnNode(['--master-key', MASTER, '--import-dump', join(dumpDir, `${dumpUid}.dump`)], join(work, 'restored'));
    const after = await readBackupState(imported.url, MASTER);
    expect(digests(after)).toEqual(digests(before));
    // The keys are the same keys: same uids, hence the same values under the same master key.
    expect(after.keys.map((k) => k['key'])).toEqual(before.keys.map((k) => k['key']));
    const got: unknown[] = [];
    for (const [path, body] of queries) got.push(searchable(await post(imported.url, path, body)));
    expect(got).toEqual(answers);
    expect((answers[0] as { results: unknown[] }).results.length).toBeGreaterThan(0);
    expect(await readNodeWide(imported.url)).toEqual(nodeWide);
  });

  it('the imported node goes on with the next task uid and is writable', async () => {
    const task = await post(imported!.url, '/indexes/movies/documents', [{ id: '1', title: 'After the import' }]);
    expect(task['taskUid']).toBe(dumpTaskUid + 1);
    const done = await waitTask(imported!.url, task['taskUid'] as number, MASTER);
    expect(done['status']).toBe('succeeded');
    const doc = await reader(imported!.url, MASTER)('/indexes/movies/documents/1');
    expect(doc['title']).toBe('After the import');
  });

  it('refuses a database that already exists, unless told to ignore the dump', async () => {
    await imported!.kill();
    const dir = join(work, 'restored');
    const file = join(dumpDir, `${dumpUid}.dump`);
    await expect(spawnNode(['--master-key', MASTER, '--import-dump', file], dir)).rejects.toThrow(/already exists.*--ignore-dump-if-db-exists/s);
    imported = await spawnNode(['--master-key', MASTER, '--import-dump', file, '--ignore-dump-if-db-exists'], dir);
    // The existing database was kept: it has the task written after the import.
    const t = await reader(imported.url, MASTER)(`/tasks/${dumpTaskUid + 1}`);
    expect(t['status']).toBe('succeeded');
    await imported.kill();
    imported = null;
    await expect(spawnNode(['--import-dump', join(work, 'nope.dump')], join(work, 'fresh'))).rejects.toThrow(/does not exist.*--ignore-missing-dump/s);
    expect(existsSync(join(work, 'fresh'))).toBe(false);
  });
});

describe('a dump taken while tasks wait', () => {
  it('carries the waiting tasks with their documents; the importing node processes them to the same result', async () => {
    const dir = join(work, 'waiting');
    const n = await startTestNode(['--master-key', MASTER, '--dump-dir', join(dir, 'dumps')], join(dir, 'source'));
    let restored: NodeProcess | null = null;
    try {
      const docs = (from: number, count: number) => Array.from({ length: count }, (_, i) => ({ id: from + i, title: `doc ${from + i}`, n: i % 7 }));
      // With processing paused, the first task's batch is decided and the others wait behind
      // it; once resumed, the dump is decided before them (dumps go first), so they are still
      // enqueued while it is written.
      await n.node.ctx.executor.halt();
      const uids: number[] = [];
      for (let i = 0; i < 5; i++) uids.push((await post(n.url, '/indexes/big/documents', docs(i * 10_000, 200)))['taskUid'] as number);
      const dump = await post(n.url, '/dumps');
      n.node.ctx.executor.resume();
      const dumpTask = await waitTask(n.url, dump['taskUid'] as number, MASTER);
      for (const u of uids) await waitTask(n.url, u, MASTER);
      const file = join(dir, 'dumps', `${(dumpTask['details'] as { dumpUid: string }).dumpUid}.dump`);
      const waiting = gunzipSync(readFileSync(file)).toString().split('\n').filter((l) => l.startsWith('{"kind":"payload"')).length;
      expect(waiting).toBeGreaterThan(0);
      const expected = await readBackupState(n.url, MASTER);

      restored = await spawnNode(['--master-key', MASTER, '--import-dump', file], join(dir, 'restored'));
      for (const u of uids) expect((await waitTask(restored.url, u, MASTER))['status']).toBe('succeeded');
      const got = await readBackupState(restored.url, MASTER);
      expect(got.documents).toEqual(expected.documents);
      expect(got.settings).toEqual(expected.settings);
      const outcome = (t: Record<string, unknown>) => [t['uid'], t['type'], t['status'], t['details']];
      expect(got.tasks.map(outcome)).toEqual(expected.tasks.map(outcome));
    } finally {
      await restored?.kill('SIGKILL');
      await n.close();
    }
  });
});
