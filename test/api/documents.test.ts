import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { dataset } from '../fixtures/index.js';

const movies = dataset<{ id: number; title: string }>('movies');

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

async function post(path: string, body: string | Buffer, headers: Record<string, string>) {
  const r = await fetch(t.url + path, { method: 'POST', body, headers });
  return { status: r.status, body: (await r.json()) as { code: string; taskUid: number } };
}

describe('documents through the official client', () => {
  it('adds JSON documents, infers the primary key and reads them back', async () => {
    const index = t.client.index('movies');
    const task = await index.addDocuments(movies).waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ receivedDocuments: movies.length, indexedDocuments: movies.length });
    const info = await index.getRawInfo();
    expect(info.primaryKey).toBe('id');
    const docs = await index.getDocuments({ limit: 100 });
    expect(docs.total).toBe(movies.length);
    expect(docs.results.map((d) => d['id'])).toEqual(movies.map((m) => m.id));
    const one = await index.getDocument(String(movies[0]!.id), { fields: ['title'] });
    expect(one).toEqual({ title: movies[0]!.title });
  });

  it('replaces with POST and merges with PUT', async () => {
    const index = t.client.index('merge');
    await index.addDocuments([{ id: 1, a: 1, b: 2 }]).waitTask();
    await index.updateDocuments([{ id: 1, b: 3, c: 4 }]).waitTask();
    expect(await index.getDocument(1)).toEqual({ id: 1, a: 1, b: 3, c: 4 });
    await index.addDocuments([{ id: 1, z: 0 }]).waitTask();
    expect(await index.getDocument(1)).toEqual({ id: 1, z: 0 });
  });

  it('accepts NDJSON and typed CSV', async () => {
    const index = t.client.index('formats');
    await index.addDocumentsFromString('{"id":1,"n":"a"}\n{"id":2,"n":"b"}\n', 'application/x-ndjson').waitTask();
    const csv = 'id,price:number,ok:boolean,name\n3,1.5,true,"x, y"\n4,,false,z\n';
    const task = await index.addDocumentsFromString(csv, 'text/csv').waitTask();
    expect(task.status).toBe('succeeded');
    expect(await index.getDocument(3)).toEqual({ id: '3', price: 1.5, ok: true, name: 'x, y' });
    expect(await index.getDocument(4)).toEqual({ id: '4', price: null, ok: false, name: 'z' });
    expect((await index.getDocuments()).total).toBe(4);
  });

  it('accepts a gzip-compressed body', async () => {
    const body = gzipSync(JSON.stringify([{ id: 'g1', v: 1 }]));
    const r = await post('/indexes/gz/documents', body, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(r.status).toBe(202);
    await t.client.tasks.waitForTask(r.body.taskUid);
    expect(await t.client.index('gz').getDocument('g1')).toEqual({ id: 'g1', v: 1 });
  });

  it('deletes by id, by batch and all', async () => {
    const index = t.client.index('del');
    await index.addDocuments([1, 2, 3, 4, 5].map((id) => ({ id }))).waitTask();
    await index.deleteDocument(1).waitTask();
    const batch = await index.deleteDocuments([2, 3, 99]).waitTask();
    expect(batch.details).toMatchObject({ providedIds: 3, deletedDocuments: 2 });
    expect((await index.getDocuments()).results).toEqual([{ id: 4 }, { id: 5 }]);
    const all = await index.deleteAllDocuments().waitTask();
    expect(all.type).toBe('documentDeletion');
    expect(all.details).toMatchObject({ deletedDocuments: 2 });
    expect((await index.getDocuments()).total).toBe(0);
  });

  it('fails the task when the primary key cannot be inferred', async () => {
    const none = await t.client.index('nopk').addDocuments([{ title: 'x' }]).waitTask();
    expect(none.status).toBe('failed');
    expect(none.error?.code).toBe('index_primary_key_no_candidate_found');
    const many = await t.client.index('manypk').addDocuments([{ uid: 1, productId: 2 }]).waitTask();
    expect(many.error?.code).toBe('index_primary_key_multiple_candidates_found');
    // A field named exactly `id` is chosen among several candidates, as the reference does.
    const both = await t.client.index('bothpk').addDocuments([{ id: 1, product_id: 2 }]).waitTask();
    expect(both.status).toBe('succeeded');
    expect((await t.client.index('bothpk').getRawInfo()).primaryKey).toBe('id');
  });

  it('fails the whole task on an invalid document id and writes nothing', async () => {
    const index = t.client.index('badid');
    const task = await index.addDocuments([{ id: 1 }, { id: 'not valid!' }]).waitTask();
    expect(task.status).toBe('failed');
    expect(task.error?.code).toBe('invalid_document_id');
    expect(task.details).toMatchObject({ receivedDocuments: 2, indexedDocuments: 0 });
    const err = await index.getDocument(1).catch((e) => e);
    expect(err).toBeInstanceOf(MeilisearchApiError);
    expect((err as MeilisearchApiError).cause?.code).toBe('document_not_found');
  });

  it('refuses malformed payloads at once, enqueuing nothing', async () => {
    const before = (await t.client.tasks.getTasks()).total;
    const bad = await post('/indexes/x/documents', '[{"id":1},', { 'content-type': 'application/json' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe('malformed_payload');
    const invalidUtf8 = await post('/indexes/x/documents', Buffer.from([0x5b, 0x22, 0xff, 0x22, 0x5d]), {
      'content-type': 'application/json',
    });
    expect(invalidUtf8.body.code).toBe('malformed_payload');
    const ragged = await post('/indexes/x/documents', 'id,a\n1,2,3\n', { 'content-type': 'text/csv' });
    expect(ragged.body.code).toBe('malformed_payload');
    const truncated = gzipSync(JSON.stringify([{ id: 1 }])).subarray(0, 10);
    const gz = await post('/indexes/x/documents', truncated, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(gz.status).toBe(400);
    expect(gz.body.code).toBe('malformed_payload');
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const nested = await post('/indexes/x/documents', deep, { 'content-type': 'application/json' });
    expect(nested.status).toBe(400);
    const noType = await fetch(t.url + '/indexes/x/documents', { method: 'POST', body: '[]', headers: { 'content-type': '' } });
    expect(noType.status).toBe(415);
    expect((await t.client.tasks.getTasks()).total).toBe(before);
  });
});
