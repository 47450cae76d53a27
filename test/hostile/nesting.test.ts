import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { readState } from '../helpers/cluster-state.js';

// Bodies nesting deeper than the parser's limit (127 levels, as serde_json's recursion limit)
// are refused before anything reads them; documents within the limit are indexed, searched,
// highlighted, filtered and dumped like any other.

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('deep').updateFilterableAttributes(['tag', 'nested']).waitTask();
  await t.client.index('deep').addDocuments([{ id: 0, title: 'shallow' }]).waitTask();
});
afterAll(async () => {
  await t.close();
});

const arrays = (n: number, inner = '0') => '['.repeat(n) + inner + ']'.repeat(n);
const objects = (n: number, inner = '0') => '{"a":'.repeat(n) + inner + '}'.repeat(n);

async function send(method: string, path: string, body: string, headers: Record<string, string> = {}) {
  const r = await fetch(`${t.url}${path}`, { method, headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : null) as Record<string, unknown> | null };
}

/** The refusal of a documents payload (`format` quoted, as the reference words it) or of any other JSON body. */
function tooDeep(where: string, format?: 'json' | 'ndjson') {
  const payload = format ? `\`${format}\`` : 'json';
  return {
    message: `The ${payload} payload provided is malformed. \`${format ? "Couldn't serialize document value: " : ''}recursion limit exceeded at ${where}\`.`,
    code: 'malformed_payload',
    type: 'invalid_request',
    link: 'https://docs.meilisearch.com/errors#malformed_payload',
  };
}

describe('JSON nesting limit', () => {
  it('refuses documents nested thousands of levels deep, as JSON and as NDJSON, and enqueues nothing', async () => {
    const before = await readState(t.url);
    // `[{"id":1,"x":` puts the first nested bracket at column 14, on level 3.
    expect((await send('POST', '/indexes/deep/documents', `[{"id":1,"x":${arrays(5000)}}]`)).body).toEqual(tooDeep('line 1 column 139', 'json'));
    expect((await send('POST', '/indexes/deep/documents', `[{"id":1,"x":${objects(5000)}}]`)).body).toEqual(
      tooDeep(`line 1 column ${14 + 125 * 5}`, 'json'),
    );
    const ndjson = `{"id":1}\n{"id":2,"x":${arrays(5000)}}\n`;
    for (const method of ['POST', 'PUT']) {
      const r = await send(method, '/indexes/deep/documents', ndjson, { 'content-type': 'application/x-ndjson' });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(tooDeep('line 2 column 139', 'ndjson'));
    }
    expect(await readState(t.url)).toEqual(before);
  });

  it('refuses every other body nested too deeply: delete-batch, settings, search, multi-search, facet search, filters', async () => {
    const before = await readState(t.url);
    const deep = arrays(10_000);
    const cases: [string, string, string][] = [
      ['POST', '/indexes/deep/documents/delete-batch', `[${deep}]`],
      ['POST', '/indexes/deep/documents/delete', `{"filter":${deep}}`],
      ['POST', '/indexes/deep/documents/fetch', `{"filter":${deep}}`],
      ['PATCH', '/indexes/deep/settings', `{"synonyms":{"a":${deep}}}`],
      ['PUT', '/indexes/deep/settings/stop-words', deep],
      ['POST', '/indexes/deep/search', `{"q":"a","filter":${deep}}`],
      ['POST', '/indexes/deep/search', `{"q":${objects(10_000)}}`],
      ['POST', '/multi-search', `{"queries":[{"indexUid":"deep","filter":${deep}}]}`],
      ['POST', '/indexes/deep/facet-search', `{"facetName":"tag","filter":${deep}}`],
      ['POST', '/indexes', `{"uid":${deep}}`],
      ['POST', '/swap-indexes', `[{"indexes":${deep}}]`],
    ];
    for (const [method, path, body] of cases) {
      const r = await send(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body!['code'], `${method} ${path}`).toBe('malformed_payload');
      expect(r.body!['message'], `${method} ${path}`).toMatch(/`recursion limit exceeded at line 1 column \d+`\.$/);
    }
    expect((await send('POST', '/indexes/deep/documents/delete-batch', `[${deep}]`)).body).toEqual(tooDeep('line 1 column 128'));
    expect(await readState(t.url)).toEqual(before);
  });

  it('refuses a deeply nested filter in a query string or as an expression, with the filter error', async () => {
    const get = await fetch(`${t.url}/indexes/deep/search?filter=${encodeURIComponent(arrays(2000))}`);
    expect(get.status).toBe(400);
    expect(await get.json()).toMatchObject({ code: 'invalid_search_filter' });
    const docs = await fetch(`${t.url}/indexes/deep/documents?filter=${encodeURIComponent(arrays(2000))}`);
    expect(docs.status).toBe(400);
    expect(await docs.json()).toMatchObject({ code: 'invalid_document_filter' });
    const parens = await send('POST', '/indexes/deep/search', JSON.stringify({ filter: '('.repeat(5000) + 'tag = a' + ')'.repeat(5000) }));
    expect(parens.status).toBe(400);
    expect(parens.body!['message']).toMatch(/^The filter exceeded the maximum depth limit/);
    const nots = await send('POST', '/indexes/deep/search', JSON.stringify({ filter: 'NOT '.repeat(10_000) + 'tag = a' }));
    expect(nots.status).toBe(400);
    expect(nots.body!['code']).toBe('invalid_search_filter');
  });

  it('indexes a document nested up to the limit, and searches, filters, formats, fetches and dumps it', async () => {
    // Levels: the array of documents (1), the document (2), then 125 more.
    const doc = `{"id":"d","tag":"t","nested":${objects(124, '{"word":"abyssal"}')},"list":${arrays(125, '"abyssal"')}}`;
    const ok = await send('POST', '/indexes/deep/documents', `[${doc}]`);
    expect(ok.status).toBe(202);
    const task = await t.client.tasks.waitForTask(ok.body!['taskUid'] as number);
    expect(task.status).toBe('succeeded');
    // One level more is refused: `[{"id":"e","list":` opens level 3 at column 19.
    expect((await send('POST', '/indexes/deep/documents', `[{"id":"e","list":${arrays(126, '"x"')}}]`)).body).toEqual(
      tooDeep('line 1 column 144', 'json'),
    );
    expect((await send('POST', '/indexes/deep/documents', `[{"id":"e","list":${arrays(125, '"x"')}}]`)).status).toBe(202);

    const hits = await t.client.index('deep').search('abyssal', {
      attributesToHighlight: ['*'],
      attributesToCrop: ['*'],
      cropLength: 3,
      showMatchesPosition: true,
      filter: 'tag = t AND nested EXISTS',
    });
    expect(hits.hits.map((h) => h['id'])).toEqual(['d']);
    const formatted = hits.hits[0]!['_formatted'] as Record<string, unknown>;
    expect(JSON.stringify(formatted)).toContain('<em>abyssal</em>');
    expect(await t.client.index('deep').getDocument('d')).toEqual(JSON.parse(doc));
    const fetched = await t.client.index('deep').getDocuments({ filter: 'tag = t', fields: ['nested'] });
    expect(fetched.results).toEqual([{ nested: JSON.parse(doc)['nested'] }]);
    const dump = await t.client.createDump().waitTask();
    expect(dump.status).toBe('succeeded');
  });
});
