import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

// Behaviours where the spec is silent and the reference decides: each was seen to differ
// from the reference by its clients and tests.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

async function send(method: string, path: string, body?: string, contentType = 'application/json') {
  const r = await fetch(`${t.url}${path}`, { method, ...(body !== undefined ? { body, headers: { 'content-type': contentType } } : {}) });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> };
}

const task = (uid: number) => t.client.tasks.waitForTask(uid, { timeout: 30_000 });

describe('documents', () => {
  it('refuses an empty body as JSON, NDJSON and CSV with missing_payload', async () => {
    for (const [type, name] of [
      ['application/json', 'json'],
      ['application/x-ndjson', 'ndjson'],
      ['text/csv', 'csv'],
    ] as const) {
      for (const method of ['POST', 'PUT']) {
        const r = await send(method, '/indexes/empty/documents', ' \n', type);
        expect(r.status).toBe(400);
        expect(r.body).toMatchObject({ code: 'missing_payload', message: `A ${name} payload is missing.` });
      }
    }
  });

  it('adds `[]` successfully, with no document', async () => {
    const r = await send('POST', '/indexes/nothing/documents', '[]');
    const done = await task(r.body['taskUid'] as number);
    expect(done.status).toBe('succeeded');
    expect(done.details).toMatchObject({ receivedDocuments: 0, indexedDocuments: 0 });
  });

  it('refuses csvDelimiter with another content type as an invalid delimiter (400)', async () => {
    const r = await send('POST', '/indexes/csv/documents?csvDelimiter=%3B', '[]');
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ code: 'invalid_document_csv_delimiter' });
  });

  it('skips new documents with skipCreation for replacements as for updates', async () => {
    await t.client.index('skip').addDocuments([{ id: 1, a: 'x' }]).waitTask();
    for (const method of ['POST', 'PUT']) {
      const r = await send(method, '/indexes/skip/documents?skipCreation=true', JSON.stringify([{ id: 1, a: method }, { id: 2, a: method }]));
      const done = await task(r.body['taskUid'] as number);
      expect(done.details).toMatchObject({ receivedDocuments: 2, indexedDocuments: 1 });
    }
    expect((await t.client.index('skip').getDocuments()).results).toEqual([{ id: 1, a: 'PUT' }]);
  });
});

describe('indexes and settings', () => {
  it('names immutable index fields with their own codes', async () => {
    await t.client.createIndex('immutable').waitTask();
    for (const [field, code] of [
      ['createdAt', 'immutable_index_created_at'],
      ['updatedAt', 'immutable_index_updated_at'],
    ] as const) {
      const r = await send('PATCH', '/indexes/immutable', JSON.stringify({ [field]: '2020-01-01T00:00:00Z' }));
      expect(r.status).toBe(400);
      expect(r.body).toMatchObject({ code, message: `Immutable field \`${field}\`: expected one of \`primaryKey\`, \`uid\`` });
    }
  });

  it('says "a" before the type found in a type error', async () => {
    const r = await send('POST', '/indexes', JSON.stringify({ uid: true }));
    expect(r.body).toMatchObject({ code: 'invalid_index_uid', message: 'Invalid value type at `.uid`: expected a string, but found a boolean: `true`' });
  });

  it('fails a settings reset on an index that does not exist, and creates nothing', async () => {
    for (const path of ['/indexes/ghost/settings', '/indexes/ghost/settings/stop-words']) {
      const r = await send('DELETE', path);
      expect(r.status).toBe(202);
      const done = await task(r.body['taskUid'] as number);
      expect(done.status).toBe('failed');
      expect(done.error).toMatchObject({ code: 'index_not_found', message: 'Index `ghost` not found.' });
    }
    expect((await send('GET', '/indexes/ghost')).status).toBe(404);
    // An update still creates the index.
    const r = await send('PATCH', '/indexes/ghost/settings', JSON.stringify({ stopWords: ['a'] }));
    expect((await task(r.body['taskUid'] as number)).status).toBe('succeeded');
  });
});

describe('search', () => {
  it('searches an empty index with restricted searchable attributes', async () => {
    await t.client.index('blank').updateSearchableAttributes(['title']).waitTask();
    const r = await send('POST', '/indexes/blank/search', JSON.stringify({ q: 'hello', attributesToSearchOn: ['title'] }));
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ hits: [], estimatedTotalHits: 0 });
  });

  it('truncates processingTimeMs, as the reference does: a sub-millisecond search reads 0', async () => {
    await t.client.index('fast').addDocuments([{ id: 1, title: 'x' }]).waitTask();
    const times: number[] = [];
    for (let i = 0; i < 20; i++) times.push((await send('POST', '/indexes/fast/search', JSON.stringify({ q: 'x' }))).body['processingTimeMs'] as number);
    expect(times.every((x) => Number.isInteger(x))).toBe(true);
    expect(times).toContain(0);
  });

  it('filters nested values with IS NULL', async () => {
    const idx = t.client.index('nested-null');
    await idx.updateFilterableAttributes(['a']).waitTask();
    await idx.addDocuments([{ id: 1, a: { b: null } }, { id: 2, a: { b: 1 } }, { id: 3, a: { c: 1 } }]).waitTask();
    expect((await idx.search('', { filter: 'a.b IS NULL' })).hits.map((h) => h['id'])).toEqual([1]);
    expect((await idx.search('', { filter: 'a.b IS NOT NULL' })).hits.map((h) => h['id'])).toEqual([2, 3]);
  });
});
