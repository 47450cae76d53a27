import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { readState } from '../helpers/cluster-state.js';

// The input limits the README lists: each is refused just past it with a clear error, and
// accepted at it.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('lim').updateFilterableAttributes(['n', 'tag']).waitTask();
  await t.client.index('lim').addDocuments(Array.from({ length: 50 }, (_, i) => ({ id: i, n: i, tag: `t${i % 5}` }))).waitTask();
});
afterAll(async () => {
  await t.close();
});

async function send(method: string, path: string, body: unknown) {
  const r = await fetch(`${t.url}${path}`, { method, headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

const inList = (n: number) => `n IN [${Array.from({ length: n }, (_, i) => i).join(',')}]`;

describe('input limits', () => {
  it('JSON bodies of routes other than document uploads: 2 MiB by default', async () => {
    const before = await readState(t.url);
    const big = { stopWords: Array.from({ length: 300_000 }, (_, i) => `w${i}`) };
    expect(JSON.stringify(big).length).toBeGreaterThan(2 * 1024 * 1024);
    for (const [method, path] of [
      ['PATCH', '/indexes/lim/settings'],
      ['PUT', '/indexes/lim/settings/stop-words'],
      ['POST', '/indexes/lim/search'],
      ['POST', '/multi-search'],
    ] as const) {
      const r = await send(method, path, path.endsWith('stop-words') ? big.stopWords : big);
      expect(r.status, path).toBe(413);
      expect(r.body).toMatchObject({
        code: 'payload_too_large',
        message: 'The provided payload reached the size limit. The maximum accepted payload size is 2 MiB.',
      });
    }
    expect(await readState(t.url)).toEqual(before);
    // Document uploads keep the payload limit.
    const docs = Array.from({ length: 50_000 }, (_, i) => ({ id: 1000 + i, text: 'some words to fill the body up' }));
    expect(JSON.stringify(docs).length).toBeGreaterThan(2 * 1024 * 1024);
    const upload = await send('POST', '/indexes/lim-big/documents', docs);
    expect(upload.status).toBe(202);
    expect((await t.client.tasks.waitForTask(upload.body['taskUid'] as number, { timeout: 60_000 })).status).toBe('succeeded');
  });

  it('the JSON limit follows --http-json-payload-size-limit, and never exceeds the payload limit', async () => {
    const small = await startTestNode(['--http-json-payload-size-limit', '1 KiB']);
    const capped = await startTestNode(['--http-payload-size-limit', '1 KB', '--http-json-payload-size-limit', '1 GiB']);
    try {
      const body = JSON.stringify({ q: 'x'.repeat(2000) });
      for (const [node, shown] of [
        [small, '1 KiB'],
        [capped, '1 KB'],
      ] as const) {
        const r = await fetch(`${node.url}/indexes/x/search`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        expect(r.status).toBe(413);
        expect(((await r.json()) as { message: string }).message).toBe(`The provided payload reached the size limit. The maximum accepted payload size is ${shown}.`);
      }
    } finally {
      await small.close();
      await capped.close();
    }
  });

  it('a filter names at most 100,000 values: conditions and IN entries together', async () => {
    const ok = await send('POST', '/indexes/lim/search', { filter: inList(100_000), limit: 1 });
    expect(ok.status).toBe(200);
    expect(ok.body['estimatedTotalHits']).toBe(50);
    const over = await send('POST', '/indexes/lim/search', { filter: [inList(99_999), 'tag = t1'] });
    expect(over.status).toBe(200);
    const tooMany = await send('POST', '/indexes/lim/search', { filter: [inList(100_000), 'tag = t1'] });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({
      code: 'invalid_search_filter',
      message: 'Too many values in the filter: the filter names 100001 values (conditions and `IN` list entries together), and at most 100000 can be processed in one request.',
    });
    const docs = await send('POST', '/indexes/lim/documents/fetch', { filter: inList(100_001) });
    expect(docs.body['code']).toBe('invalid_document_filter');
    const del = await send('POST', '/indexes/lim/documents/delete', { filter: inList(100_001) });
    expect(del.body['code']).toBe('invalid_document_filter');
    const conditions = await send('POST', '/indexes/lim/search', { filter: Array.from({ length: 2001 }, (_, i) => `n = ${i}`).join(' OR ') });
    expect(conditions.body).toMatchObject({ code: 'invalid_search_filter', message: "Too many filter conditions, can't process more than 2000 filters." });
  });

  it('a multi-search holds at most 100 queries, whose filters name at most 100,000 values together', async () => {
    const query = { indexUid: 'lim', q: '', limit: 1 };
    expect((await send('POST', '/multi-search', { queries: Array.from({ length: 100 }, () => query) })).status).toBe(200);
    const over = await send('POST', '/multi-search', { queries: Array.from({ length: 101 }, () => query) });
    expect(over.status).toBe(400);
    expect(over.body).toMatchObject({
      code: 'bad_request',
      message: 'Too many queries: a multi-search holds at most 100 queries, and this one holds 101. Send them in several requests.',
    });
    const filtered = (n: number) => ({ ...query, filter: inList(n) });
    expect((await send('POST', '/multi-search', { queries: [filtered(60_000), filtered(40_000)] })).status).toBe(200);
    const together = await send('POST', '/multi-search', { queries: [filtered(60_000), query, filtered(40_001)] });
    expect(together.status).toBe(400);
    expect(together.body).toMatchObject({
      code: 'invalid_search_filter',
      message: 'Inside `.queries[2]`: Too many values in the filter: the filters of the queries up to this one name 100001 values (conditions and `IN` list entries together), and at most 100000 can be processed in one request.',
    });
    const federated = await send('POST', '/multi-search', { federation: {}, queries: [filtered(60_000), filtered(40_001)] });
    expect(federated.body['code']).toBe('invalid_search_filter');
  });

  it('indexes and filters documents whose arrays hold more values than a function call takes arguments', async () => {
    const wide = t.client.index('wide');
    await wide.updateFilterableAttributes(['a', '_geojson']).waitTask();
    const many = Array.from({ length: 200_000 }, (_, i) => i);
    const points = Array.from({ length: 200_000 }, (_, i) => [(i % 360) - 180, ((i * 7) % 180) - 90]);
    const task = await wide
      .addDocuments([
        { id: 1, a: { b: many, c: 'x' } },
        { id: 2, a: { b: [1] }, _geojson: { type: 'MultiPoint', coordinates: points } },
      ])
      .waitTask({ timeout: 60_000 });
    expect(task.status).toBe('succeeded');
    expect((await wide.search('', { filter: 'a.b = 199999' })).hits.map((h) => h['id'])).toEqual([1]);
    expect((await wide.search('', { filter: 'a EXISTS' })).hits.map((h) => h['id']).sort()).toEqual([1, 2]);
    const polygon = `_geoPolygon(${Array.from({ length: 40_000 }, (_, i) => `[${Math.sin(i / 6366) * 80}, ${Math.cos(i / 6366) * 170}]`).join(',')})`;
    expect((await wide.search('', { filter: polygon })).hits.map((h) => h['id'])).toEqual([2]);
  });

  it('a deletion by id names at most 1,000,000 ids', async () => {
    const before = await readState(t.url);
    const ids = Array.from({ length: 1_000_001 }, (_, i) => i);
    const r = await send('POST', '/indexes/lim/documents/delete-batch', ids);
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      code: 'bad_request',
      message: 'Too many document ids: one deletion takes at most 1000000 ids, and this one names 1000001. Send them in several requests.',
    });
    expect(await readState(t.url)).toEqual(before);
  });
});
