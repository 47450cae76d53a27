import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

let t: TestNode;
let index: Index;

const MOVIES = [
  { id: 1, title: 'Dune', genre: 'scifi', year: 1965, tags: ['desert'] },
  { id: 2, title: 'Carol', genre: 'drama', year: 2015, tags: [] },
  { id: 3, title: 'Arrival', genre: 'scifi', year: 2016, tags: ['aliens'] },
];

beforeAll(async () => {
  t = await startTestNode();
  index = t.client.index('movies');
});
afterAll(async () => {
  await t.close();
});

async function reset() {
  await index.deleteAllDocuments().waitTask();
  await index.updateFilterableAttributes(['genre', 'year']).waitTask();
  await index.addDocuments(MOVIES, { primaryKey: 'id' }).waitTask();
}

async function docs() {
  return (await index.getDocuments({ limit: 100 })).results;
}

describe('POST /indexes/{uid}/documents/edit', () => {
  it('needs the editDocumentsByFunction experimental feature', async () => {
    await reset();
    expect(await apiError(index.updateDocumentsByFunction({ function: 'doc.x = 1;' }))).toMatchObject({
      status: 400,
      code: 'feature_not_enabled',
      message: 'Using the documents edit route requires enabling the `edit documents by function` experimental feature. See https://github.com/orgs/meilisearch/discussions/762',
    });
    await t.client.updateExperimentalFeatures({ editDocumentsByFunction: true });
  });

  it('edits every document, or those the filter keeps, with the context in scope', async () => {
    await reset();
    const all = await index.updateDocumentsByFunction({ function: 'doc.title = doc.title.to_upper();' }).waitTask();
    expect(all).toMatchObject({
      status: 'succeeded',
      type: 'documentEdition',
      details: { deletedDocuments: 0, editedDocuments: 3, originalFilter: null, context: null, function: 'doc.title = doc.title.to_upper();' },
    });
    expect((await docs()).map((d) => d['title'])).toEqual(['DUNE', 'CAROL', 'ARRIVAL']);

    const some = await index
      .updateDocumentsByFunction({ function: 'doc.tags.push(context.tag); doc.decade = doc.year / 10 * 10;', filter: 'genre = scifi', context: { tag: 'classic' } })
      .waitTask();
    expect(some).toMatchObject({ status: 'succeeded', details: { editedDocuments: 2, originalFilter: '"genre = scifi"', context: { tag: 'classic' } } });
    expect(await index.getDocument(1)).toEqual({ decade: 1960, genre: 'scifi', id: 1, tags: ['desert', 'classic'], title: 'DUNE', year: 1965 });
    expect(await index.getDocument(2)).toEqual({ id: 2, title: 'CAROL', genre: 'drama', year: 2015, tags: [] });
    // The edited documents are indexed again: searches and filters see the new values.
    expect((await index.search('dune', { filter: 'year = 1965' })).hits.map((h) => h['decade'])).toEqual([1960]);
  });

  it('deletes the documents set to (), and leaves unchanged ones alone', async () => {
    await reset();
    const task = await index.updateDocumentsByFunction({ function: 'if doc.year < 2000 { doc = (); } else if doc.id == 3 { doc.seen = true; }' }).waitTask();
    expect(task).toMatchObject({ status: 'succeeded', details: { deletedDocuments: 1, editedDocuments: 1 } });
    expect((await docs()).map((d) => d['id'])).toEqual([2, 3]);
    expect((await index.search('dune')).hits).toEqual([]);
    expect((await index.getStats()).numberOfDocuments).toBe(2);
  });

  it('fails the whole task, changing nothing, on a runtime error, a limit, or a changed primary key', async () => {
    await reset();
    const cases: [string, RegExp][] = [
      ['if doc.id == 3 { doc.x = 1 / 0; } else { doc.y = 1; }', /^Document edition runtime error encountered while running the function: Division by zero: 1 \/ 0 \(line 1, position 28\)$/],
      ['loop { }', /^Document edition runtime error encountered while running the function: Too many operations/],
      ['doc.id = 99;', /^Document editions cannot modify a document's primary key$/],
      ['doc = 5;', /^Document editions must keep documents as objects$/],
      ['doc.t = timestamp();', /Function 'timestamp' is not available: a document edition must give the same result on every node of a cluster/],
    ];
    for (const [fn, message] of cases) {
      const task = await index.updateDocumentsByFunction({ function: fn }).waitTask();
      expect(task.status, fn).toBe('failed');
      expect(task.error).toMatchObject({ code: 'edit_documents_by_function_error', type: 'invalid_request' });
      expect(task.error!.message, fn).toMatch(message);
      expect(task.details).toMatchObject({ editedDocuments: 0, deletedDocuments: 0 });
    }
    expect(await docs()).toEqual(MOVIES);
  });

  it('refuses bad requests at once', async () => {
    const bad = async (body: unknown) => {
      const r = await fetch(`${t.url}/indexes/movies/documents/edit`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: r.status, ...((await r.json()) as { code: string; message: string }) };
    };
    expect(await bad({})).toMatchObject({ status: 400, code: 'missing_document_edition_function', message: 'Missing field `function`' });
    expect(await bad({ function: 3 })).toMatchObject({ code: 'invalid_document_edition_function_filter' });
    expect(await bad({ function: 'doc.x = ' })).toMatchObject({ code: 'bad_request', message: 'Script is incomplete: an expression is missing (line 1, position 9)' });
    expect(await bad({ function: 'switch doc.x { }' })).toMatchObject({ code: 'bad_request', message: '`switch` expressions are not supported in document edition functions (line 1, position 1)' });
    expect(await bad({ function: 'doc.x = 1;', context: [1] })).toMatchObject({ code: 'invalid_document_edition_context', message: 'The context must be an object' });
    expect(await bad({ function: 'doc.x = 1;', filter: '  ' })).toMatchObject({ code: 'invalid_document_filter', message: 'Sending an empty filter is forbidden.' });
    expect(await bad({ function: 'doc.x = 1;', filter: 'title = (' })).toMatchObject({ status: 400, code: 'invalid_document_filter' });
    expect(await bad({ function: 'doc.x = 1;', other: 1 })).toMatchObject({ code: 'bad_request', message: 'Unknown field `other`: expected one of `function`, `filter`, `context`' });
  });

  it('fails the task, as the reference does, for a filter on an attribute the index does not filter by', async () => {
    const task = await index.updateDocumentsByFunction({ function: 'doc.x = 1;', filter: 'title = x' }).waitTask();
    expect(task).toMatchObject({ status: 'failed', error: { code: 'invalid_document_filter', type: 'invalid_request' }, details: { editedDocuments: 0 } });
    expect(task.error!.message).toMatch(/Attribute `title` is not filterable/);
    expect(await docs()).toEqual(MOVIES);
  });

  it('refuses a function too slow for the clock limit when the request arrives', async () => {
    await reset();
    // Within the operation limit, but each comparison of two long arrays walks them whole.
    const slow = 'let a = []; for i in 0..10000 { a.push(i); } let n = 0; for i in 0..150000 { if a == a { n += 1; } } doc.n = n;';
    expect(await apiError(index.updateDocumentsByFunction({ function: slow }))).toMatchObject({
      status: 400,
      code: 'edit_documents_by_function_error',
      message: 'The function takes more than 1000 ms on a document: make it simpler, or edit fewer documents at once with a `filter`.',
    });
    expect(await docs()).toEqual(MOVIES);
  });

  it('fails the task for an index that does not exist', async () => {
    const task = await t.client.index('nowhere').updateDocumentsByFunction({ function: 'doc.x = 1;' }).waitTask();
    expect(task).toMatchObject({ status: 'failed', error: { code: 'index_not_found' } });
  });
});
