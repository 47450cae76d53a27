import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.js';

// Integers past 2^53, which a double cannot hold, as the reference keeps them: any integer of
// the u64 and i64 ranges is a valid document id and a valid field value, stored and returned
// with the digits sent. The official client reads answers with JSON.parse, which rounds them,
// so where the digits are the point the raw text of the answer is read.

const U64_MAX = '18446744073709551615';
const I64_MIN = '-9223372036854775808';
// 2^53 + 1 and 2^53: one double, two documents.
const ABOVE = '9007199254740993';
const AT = '9007199254740992';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
});
afterAll(async () => {
  await t.close();
});

async function raw(method: string, path: string, body?: string, contentType = 'application/json') {
  const r = await fetch(`${t.url}${path}`, { method, ...(body !== undefined ? { body, headers: { 'content-type': contentType } } : {}) });
  return { status: r.status, text: await r.text() };
}

async function enqueue(method: string, path: string, body: string, contentType = 'application/json') {
  const r = await raw(method, path, body, contentType);
  expect(r.status).toBe(202);
  return t.client.tasks.waitForTask((JSON.parse(r.text) as { taskUid: number }).taskUid, { timeout: 30_000 });
}

/** The ids of a documents or search answer, read from its text with every digit. */
function idsIn(text: string): string[] {
  return [...text.matchAll(/"id":(-?\d+)/g)].map((m) => m[1]!);
}

describe('integer document ids past 2^53', () => {
  beforeAll(async () => {
    await t.client.createIndex('big', { primaryKey: 'id' }).waitTask();
    await t.client.index('big').updateSettings({ filterableAttributes: ['id', 'n'], sortableAttributes: ['n'] }).waitTask();
    const body = `[
      {"id": ${U64_MAX}, "title": "largest", "n": ${U64_MAX}},
      {"id": ${ABOVE}, "title": "above", "n": ${ABOVE}},
      {"id": ${AT}, "title": "at", "n": ${AT}},
      {"id": ${I64_MIN}, "title": "smallest", "n": ${I64_MIN}, "nested": {"list": [${I64_MIN}, 1.5, "${U64_MAX}"]}},
      {"id": 7, "title": "small", "n": 7}
    ]`;
    const task = await enqueue('POST', '/indexes/big/documents', body);
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ receivedDocuments: 5, indexedDocuments: 5 });
  });

  it('keeps ids that differ past a double\'s precision as two documents', async () => {
    expect((await t.client.index('big').getDocuments()).total).toBe(5);
    const r = await raw('GET', '/indexes/big/documents?limit=10');
    expect(idsIn(r.text).sort()).toEqual([U64_MAX, ABOVE, AT, I64_MIN, '7'].sort());
  });

  it('returns each document by its id in the path, the digits as a JSON number', async () => {
    for (const [id, title] of [[U64_MAX, 'largest'], [ABOVE, 'above'], [AT, 'at'], [I64_MIN, 'smallest']] as const) {
      const r = await raw('GET', `/indexes/big/documents/${id}`);
      expect(r.status).toBe(200);
      expect(r.text).toContain(`"id":${id},`);
      expect(r.text).toContain(`"title":"${title}"`);
      expect(r.text).toContain(`"n":${id}`);
    }
    const nested = await raw('GET', `/indexes/big/documents/${I64_MIN}?fields=nested`);
    expect(nested.text).toBe(`{"nested":{"list":[${I64_MIN},1.5,"${U64_MAX}"]}}`);
    // Through the client, which rounds the number but finds the document by its digits.
    expect((await t.client.index('big').getDocument(ABOVE)).title).toBe('above');
  });

  it('fetches by ids given as numbers in the body, strings, or the query string', async () => {
    const body = await raw('POST', '/indexes/big/documents/fetch', `{"ids": [${U64_MAX}, ${ABOVE}], "fields": ["id"]}`);
    expect(body.status).toBe(200);
    expect(idsIn(body.text).sort()).toEqual([U64_MAX, ABOVE].sort());
    const strings = await raw('POST', '/indexes/big/documents/fetch', JSON.stringify({ ids: [AT, I64_MIN] }));
    expect(idsIn(strings.text).sort()).toEqual([AT, I64_MIN].sort());
    const query = await raw('GET', `/indexes/big/documents?ids=${U64_MAX},${AT}&fields=id`);
    expect(idsIn(query.text).sort()).toEqual([U64_MAX, AT].sort());
    // The other numbers of the body read as before.
    const paged = await raw('POST', '/indexes/big/documents/fetch', `{"ids": [${U64_MAX}], "limit": 99999999999999999999}`);
    expect(paged.status).toBe(200);
    expect(idsIn(paged.text)).toEqual([U64_MAX]);
  });

  it('returns the digits in search hits, and finds the number as a word', async () => {
    const all = await raw('POST', '/indexes/big/search', '{"q": "", "limit": 10}');
    expect(idsIn(all.text).sort()).toEqual([U64_MAX, ABOVE, AT, I64_MIN, '7'].sort());
    const word = await raw('POST', '/indexes/big/search', `{"q": "${U64_MAX}", "attributesToSearchOn": ["n"], "attributesToHighlight": ["n"]}`);
    expect(idsIn(word.text)).toEqual([U64_MAX]);
    // `_formatted` shows numbers as text, as the reference does.
    expect(word.text).toContain(`"_formatted":{"id":"${U64_MAX}","title":"largest","n":"<em>${U64_MAX}</em>"}`);
    const hits = (await t.client.index('big').search('largest')).hits;
    expect(hits.map((h) => h['title'])).toEqual(['largest']);
  });

  it('filters and sorts on big integers as doubles, as the reference compares numbers', async () => {
    const eq = await raw('POST', '/indexes/big/search', `{"filter": "id = ${U64_MAX}"}`);
    expect(idsIn(eq.text)).toEqual([U64_MAX]);
    // 2^53 + 1 and 2^53 are one double: a filter on either matches both.
    const near = await raw('POST', '/indexes/big/search', `{"filter": "n = ${ABOVE}"}`);
    expect(idsIn(near.text).sort()).toEqual([ABOVE, AT].sort());
    const range = await raw('POST', '/indexes/big/documents/fetch', `{"filter": "n > 1000 AND n < ${U64_MAX}", "fields": ["id"]}`);
    expect(idsIn(range.text).sort()).toEqual([ABOVE, AT].sort());
    const sorted = await raw('POST', '/indexes/big/search', '{"sort": ["n:asc"], "attributesToRetrieve": ["id"]}');
    const order = idsIn(sorted.text);
    expect(order[0]).toBe(I64_MIN);
    expect(order[1]).toBe('7');
    expect(order.at(-1)).toBe(U64_MAX);
  });

  it('updates a document by its big id, keeping its other big values', async () => {
    const task = await enqueue('PUT', '/indexes/big/documents', `[{"id": ${ABOVE}, "title": "above, updated"}]`);
    expect(task.status).toBe('succeeded');
    const r = await raw('GET', `/indexes/big/documents/${ABOVE}`);
    expect(r.text).toBe(`{"id":${ABOVE},"title":"above, updated","n":${ABOVE}}`);
    const other = await raw('GET', `/indexes/big/documents/${AT}`);
    expect(other.text).toContain('"title":"at"');
  });

  it('deletes by id in the path and in a batch of numbers', async () => {
    await t.client.createIndex('gone', { primaryKey: 'id' }).waitTask();
    await enqueue('POST', '/indexes/gone/documents', `[{"id": ${U64_MAX}}, {"id": ${ABOVE}}, {"id": ${AT}}, {"id": 1}]`);
    const one = await t.client.index('gone').deleteDocument(U64_MAX).waitTask();
    expect(one.details).toMatchObject({ deletedDocuments: 1 });
    const batch = await enqueue('POST', '/indexes/gone/documents/delete-batch', `[${ABOVE}, 1]`);
    expect(batch.details).toMatchObject({ providedIds: 2, deletedDocuments: 2 });
    const left = await raw('GET', '/indexes/gone/documents');
    expect(idsIn(left.text)).toEqual([AT]);
  });

  it('reads big integers added to an index that held none before', async () => {
    await enqueue('POST', '/indexes/later/documents?primaryKey=id', '[{"id": 1, "n": 2}]');
    await enqueue('POST', '/indexes/later/documents', `[{"id": ${U64_MAX}, "n": ${I64_MIN}}]`);
    const r = await raw('GET', '/indexes/later/documents');
    expect(r.text).toContain(`"results":[{"id":1,"n":2},{"id":${U64_MAX},"n":${I64_MIN}}]`);
  });

  it('reads big integer ids from NDJSON and from CSV number columns', async () => {
    const nd = await enqueue('POST', '/indexes/lines/documents?primaryKey=id', `{"id": ${U64_MAX}, "v": ${I64_MIN}}\n{"id": ${ABOVE}}\n{"id": ${AT}}\n`, 'application/x-ndjson');
    expect(nd.details).toMatchObject({ indexedDocuments: 3 });
    expect((await raw('GET', `/indexes/lines/documents/${U64_MAX}`)).text).toBe(`{"id":${U64_MAX},"v":${I64_MIN}}`);
    const csv = await enqueue('POST', '/indexes/cells/documents?primaryKey=id', `id:number,v:number,s\n${U64_MAX},${ABOVE},${AT}\n${AT},+12,x\n`, 'text/csv');
    expect(csv.details).toMatchObject({ indexedDocuments: 2 });
    expect((await raw('GET', `/indexes/cells/documents/${U64_MAX}`)).text).toBe(`{"id":${U64_MAX},"v":${ABOVE},"s":"${AT}"}`);
    expect((await raw('GET', `/indexes/cells/documents/${AT}`)).text).toBe(`{"id":${AT},"v":12,"s":"x"}`);
  });

  it('refuses as ids the numbers beyond u64 and i64, which the reference reads as floats', async () => {
    for (const id of ['18446744073709551616', '-9223372036854775809', '1.5']) {
      const task = await enqueue('POST', '/indexes/refused/documents?primaryKey=id', `[{"id": ${id}}]`);
      expect(task.status).toBe('failed');
      expect(task.error?.code).toBe('invalid_document_id');
    }
    expect((await raw('GET', '/indexes/refused/documents')).text).toContain('"total":0');
  });

  it('shows the documents a task received with their digits', async () => {
    await t.client.updateExperimentalFeatures({ getTaskDocumentsRoute: true } as never);
    const r = await raw('POST', '/indexes/sent/documents', `[{"id": ${U64_MAX}, "n": ${I64_MIN}}]`);
    const uid = (JSON.parse(r.text) as { taskUid: number }).taskUid;
    await t.client.tasks.waitForTask(uid);
    const docs = await raw('GET', `/tasks/${uid}/documents`);
    expect(docs.text).toBe(`{"id":${U64_MAX},"n":${I64_MIN}}\n`);
  });

  it('pins a document named by its big id in a dynamic search rule', async () => {
    await t.client.updateExperimentalFeatures({ dynamicSearchRules: true } as never);
    const body = `{"conditions": {"query": {"isEmpty": true}}, "actions": [{"selector": {"indexUid": "big", "id": ${ABOVE}}, "action": {"type": "pin", "position": 0}}]}`;
    const task = await enqueue('PATCH', '/dynamic-search-rules/pin-above', body);
    expect(task.status).toBe('succeeded');
    const r = await raw('POST', '/indexes/big/search', '{"q": "", "attributesToRetrieve": ["id"]}');
    expect(idsIn(r.text)[0]).toBe(ABOVE);
    await enqueue('DELETE', '/dynamic-search-rules/pin-above', '');
  });

  it('lets a document edition keep and change big integers', async () => {
    await t.client.updateExperimentalFeatures({ editDocumentsByFunction: true });
    await enqueue('POST', '/indexes/edited/documents?primaryKey=id', `[{"id": ${U64_MAX}, "n": ${ABOVE}, "t": "a"}]`);
    const r = await raw('POST', '/indexes/edited/documents/edit', JSON.stringify({ function: 'doc.t = "b"; doc.m = doc.n + 1;' }));
    const task = await t.client.tasks.waitForTask((JSON.parse(r.text) as { taskUid: number }).taskUid);
    expect(task.status).toBe('succeeded');
    expect((await raw('GET', `/indexes/edited/documents/${U64_MAX}`)).text).toBe(`{"id":${U64_MAX},"m":9007199254740994,"n":${ABOVE},"t":"b"}`);
  });
});

describe('big integers beside vectors, geo points and templates', () => {
  it('finds documents similar to one named by its big id, with big integers as vector components', async () => {
    await t.client.index('vec').updateSettings({ embedders: { manual: { source: 'userProvided', dimensions: 2 } } }).waitTask();
    const task = await enqueue(
      'POST',
      '/indexes/vec/documents?primaryKey=id',
      `[{"id": ${U64_MAX}, "_vectors": {"manual": [1, 0]}}, {"id": ${ABOVE}, "_vectors": {"manual": [0.9, 0.1]}}, {"id": 3, "_vectors": {"manual": [1, ${U64_MAX}]}}]`,
    );
    expect(task.status).toBe('succeeded');
    const similar = await raw('POST', '/indexes/vec/similar', `{"id": ${U64_MAX}, "embedder": "manual"}`);
    expect(similar.status).toBe(200);
    expect(idsIn(similar.text)).toEqual([ABOVE, '3']);
    const vectors = await raw('GET', '/indexes/vec/documents/3?retrieveVectors=true');
    expect(vectors.text).toContain('"embeddings":[[1,18446744073709552000]]');
  });

  it('reads a big integer as a (far away) coordinate and names a big id in a geo error', async () => {
    await t.client.index('geo').updateSettings({ filterableAttributes: ['_geo'] }).waitTask();
    const bad = await enqueue('POST', '/indexes/geo/documents?primaryKey=id', `[{"id": ${U64_MAX}, "_geo": {"lat": "north", "lng": 2}}]`);
    expect(bad.status).toBe('failed');
    expect(bad.error?.message).toContain(`in the document with the id: \`"${U64_MAX}"\``);
    const far = await enqueue('POST', '/indexes/geo/documents?primaryKey=id', `[{"id": 1, "_geo": {"lat": ${U64_MAX}, "lng": 2}}]`);
    expect(far.status).toBe('succeeded');
  });

  it('prints big integers with every digit in document templates', async () => {
    await t.client.updateExperimentalFeatures({ renderRoute: true } as never);
    await enqueue('POST', '/indexes/tpl/documents?primaryKey=id', `[{"id": ${U64_MAX}, "n": ${I64_MIN}}]`);
    const r = await raw(
      'POST',
      '/render-template',
      JSON.stringify({
        template: { kind: 'inlineDocumentTemplate', inline: '{{ doc.id }} {{ doc.n }} {% if doc.id > 1 %}big{% endif %} {{ doc.id | plus: 0 }}' },
        input: { kind: 'indexDocument', indexUid: 'tpl', id: U64_MAX },
      }),
    );
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text)).toMatchObject({ rendered: `${U64_MAX} ${I64_MIN} big 18446744073709552000` });
  });
});

describe('big integers across a restart and a dump', () => {
  it('keeps the digits in the stored documents and in a dump imported elsewhere', async () => {
    const work = tempDir('trine-big-');
    let node: TestNode | null = await startTestNode(['--dump-dir', join(work, 'dumps')], join(work, 'a'));
    let imported: TestNode | null = null;
    try {
      const first = await fetch(`${node.url}/indexes/kept/documents?primaryKey=id`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: `[{"id": ${U64_MAX}, "n": ${I64_MIN}}, {"id": ${ABOVE}}, {"id": ${AT}}]`,
      });
      await node.client.tasks.waitForTask(((await first.json()) as { taskUid: number }).taskUid);
      const dump = await node.client.createDump().waitTask();
      expect(dump.status).toBe('succeeded');
      await node.close({ keepData: true });
      node = await startTestNode(['--dump-dir', join(work, 'dumps')], join(work, 'a'));
      const restarted = await (await fetch(`${node.url}/indexes/kept/documents/${U64_MAX}`)).text();
      expect(restarted).toBe(`{"id":${U64_MAX},"n":${I64_MIN}}`);

      const file = readdirSync(join(work, 'dumps')).find((f) => f.endsWith('.dump'))!;
      imported = await startTestNode(['--import-dump', join(work, 'dumps', file)], join(work, 'b'));
      const text = await (await fetch(`${imported.url}/indexes/kept/documents`)).text();
      expect(idsIn(text).sort()).toEqual([U64_MAX, ABOVE, AT].sort());
      expect(await (await fetch(`${imported.url}/indexes/kept/documents/${U64_MAX}`)).text()).toBe(`{"id":${U64_MAX},"n":${I64_MIN}}`);
    } finally {
      await imported?.close();
      await node?.close();
    }
  });
});
