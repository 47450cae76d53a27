import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { apiError } from '../helpers/api-error.js';

// `_foreign(field, filter)`: documents whose foreign key field refers to a document of the
// foreign index that the inner filter selects.

let t: TestNode;

const AUTHORS = [
  { id: 'a1', name: 'Alice', birthday: '1990-01-01', popularity: 2.0 },
  { id: 'a2', name: 'Bob', birthday: '1958-06-15', popularity: 4.5 },
  { id: 'a3', name: 'Charlie', birthday: '1940-05-05', popularity: 4.8 },
  { id: 'a4', name: 'Diana', birthday: '1985-03-20', popularity: 3.2 },
  { id: 'a5', name: 'Ethan', birthday: '1972-11-30', popularity: 3.9 },
  { id: 'a6', name: 'Fiona', birthday: '1988-07-14', popularity: 2.8 },
];

const BOOKS = [
  { id: 'b1', title: 'Rust in action', author: 'a1', related: ['a2', 'a3'], genres: ['tech'] },
  { id: 'b2', title: 'Captain Marvel story', author: 'a2', related: ['a3', 'a4'], genres: ['action', 'fiction'] },
  { id: 'b3', title: 'The Great Gatsby', author: 'a3', related: ['a4', 'a5'], genres: ['action', 'classic'] },
  { id: 'b4', title: 'To Kill a Mockingbird', author: 'a4', related: ['a5', 'a6'], genres: ['classic', 'drama'] },
  { id: 'b5', title: '1984', author: 'a5', related: ['a6'], genres: ['dystopia'] },
];

beforeAll(async () => {
  t = await startTestNode();
  await t.client.updateExperimentalFeatures({ foreignKeys: true });
  await t.client.index('authors').addDocuments(AUTHORS, { primaryKey: 'id' }).waitTask();
  await t.client.index('authors').updateFilterableAttributes(['id', 'birthday', 'popularity']).waitTask();
  await t.client
    .index('books')
    .updateSettings({
      foreignKeys: [
        { foreignIndexUid: 'authors', fieldName: 'author' },
        { foreignIndexUid: 'authors', fieldName: 'related' },
      ],
      filterableAttributes: ['genres', 'author', 'related', 'title'],
    })
    .waitTask();
  await t.client.index('books').addDocuments(BOOKS, { primaryKey: 'id' }).waitTask();
  // A foreign key whose field is not filterable here.
  await t.client.index('loose').addDocuments([{ id: 1, author: 'a1' }], { primaryKey: 'id' }).waitTask();
  await t.client.index('loose').updateSettings({ foreignKeys: [{ foreignIndexUid: 'authors', fieldName: 'author' }] }).waitTask();
});
afterAll(async () => {
  await t.close();
});

const ids = (hits: readonly object[]) => hits.map((h) => (h as Record<string, unknown>)['id']).sort();

describe('_foreign filters', () => {
  it('select documents through the foreign index, alone or with local conditions', async () => {
    const books = t.client.index('books');
    const one = await books.search('', { filter: 'genres = action AND _foreign(author, birthday STARTS WITH "1958-" AND popularity >= 3.5)' });
    expect(ids(one.hits)).toEqual(['b2']);
    // Hydration still shows the referenced author.
    expect(one.hits[0]!['author']).toEqual(AUTHORS[1]);
    const either = await books.search('', {
      filter: 'genres = classic AND (_foreign(author, birthday STARTS WITH "198") OR _foreign(related, birthday STARTS WITH "198"))',
    });
    expect(ids(either.hits)).toEqual(['b3', 'b4']);
    // Arrays of ids match when any of them does; NOT takes the complement.
    expect(ids((await books.search('', { filter: '_foreign(related, popularity > 4.6)' })).hits)).toEqual(['b1', 'b2']);
    expect(ids((await books.search('', { filter: 'NOT _foreign(related, popularity > 4.6)' })).hits)).toEqual(['b3', 'b4', 'b5']);
    // Nothing in the foreign index matches: nothing here either.
    expect((await books.search('', { filter: '_foreign(author, popularity > 100)' })).hits).toEqual([]);
  });

  it('work in multi-search, federated search, facet search and document fetches', async () => {
    const filter = '_foreign(author, popularity >= 4)';
    const multi = await t.client.multiSearch({ queries: [{ indexUid: 'books', q: '', filter }] });
    expect(ids(multi.results[0]!.hits)).toEqual(['b2', 'b3']);
    const fed = await t.client.multiSearch({ federation: {}, queries: [{ indexUid: 'books', q: '', filter }] });
    expect(ids(fed.hits)).toEqual(['b2', 'b3']);
    const facets = await t.client.index('books').searchForFacetValues({ facetName: 'genres', filter });
    expect(facets.facetHits).toEqual([
      { value: 'action', count: 2 },
      { value: 'classic', count: 1 },
      { value: 'fiction', count: 1 },
    ]);
    const docs = await t.client.index('books').getDocuments({ filter, fields: ['id'] });
    expect(ids(docs.results)).toEqual(['b2', 'b3']);
  });

  it('refuse a field that is not a foreign key, nested foreign filters, and bad inner filters, as the reference does', async () => {
    const books = t.client.index('books');
    expect(await apiError(books.search('', { filter: '_foreign(title, id = a1)' }))).toEqual({
      status: 400,
      code: 'invalid_search_filter',
      type: 'invalid_request',
      link: 'https://docs.meilisearch.com/errors#invalid_search_filter',
      message: 'Index `books`: Field `title` is not a foreign key\n10:15 _foreign(title, id = a1)',
    });
    expect((await apiError(books.search('', { filter: '_foreign(author, id = a1 AND _foreign(related, id = a2))' }))).message).toBe(
      'Nested foreign filters are not supported\n10:16 _foreign(author, id = a1 AND _foreign(related, id = a2))',
    );
    // The inner filter is checked against the foreign index's rules.
    expect((await apiError(books.search('', { filter: '_foreign(author, name = Bob)' }))).message).toBe(
      'Index `books`: Attribute `name` is not filterable. Available filterable attribute patterns are: `birthday`, `id`, `popularity`.\n18:22 _foreign(author, name = Bob)',
    );
    // The foreign key field itself must be filterable here: the error points into the condition it becomes.
    expect(await apiError(t.client.index('loose').search('', { filter: '_foreign(author, id = a1)' }))).toMatchObject({
      code: 'invalid_search_filter',
      message: 'Index `loose`: Attribute `author` is not filterable. This index does not have configured filterable attributes.\n2:8 "author" IN ["a1"]',
    });
    const multi = await apiError(t.client.multiSearch({ federation: {}, queries: [{ indexUid: 'books', filter: '_foreign(title, id = a1)' }] }));
    expect(multi.message).toBe('Inside `.queries[0]`: Index `books`: Field `title` is not a foreign key\n10:15 _foreign(title, id = a1)');
    expect((await apiError(books.getDocuments({ filter: '_foreign(title, id = a1)' }))).code).toBe('invalid_document_filter');
  });

  it('need the foreignKeys feature', async () => {
    await t.client.updateExperimentalFeatures({ foreignKeys: false });
    try {
      const filter = 'genres = action AND _foreign(author, popularity >= 3.5)';
      expect(await apiError(t.client.index('books').search('', { filter }))).toMatchObject({
        status: 400,
        code: 'feature_not_enabled',
        message: `using a foreign filter requires enabling the \`foreign_keys\` experimental feature. See https://github.com/orgs/meilisearch/discussions/873\n30:36 ${filter}`,
      });
      expect((await apiError(t.client.multiSearch({ queries: [{ indexUid: 'books', filter }] }))).message).toMatch(/^Inside `.queries\[0\]`: using a foreign filter requires/);
      expect((await apiError(t.client.index('books').searchForFacetValues({ facetName: 'genres', filter }))).code).toBe('feature_not_enabled');
      expect((await apiError(t.client.index('books').getDocuments({ filter }))).code).toBe('feature_not_enabled');
      // Writes too: refused when asked, so no task reads a foreign filter with the feature off.
      expect(await apiError(t.client.index('books').deleteDocuments({ filter }))).toMatchObject({ status: 400, code: 'feature_not_enabled' });
      await t.client.updateExperimentalFeatures({ editDocumentsByFunction: true });
      expect((await apiError(t.client.index('books').updateDocumentsByFunction({ function: 'doc.x = 1;', filter }))).code).toBe('feature_not_enabled');
    } finally {
      await t.client.updateExperimentalFeatures({ foreignKeys: true });
    }
  });

  it('select the documents a deletion by filter and an edition by function apply to', async () => {
    await t.client.updateExperimentalFeatures({ editDocumentsByFunction: true });
    const copy = t.client.index('books_w');
    await copy.updateSettings({ foreignKeys: [{ foreignIndexUid: 'authors', fieldName: 'author' }], filterableAttributes: ['author', 'genres'] }).waitTask();
    await copy.addDocuments(BOOKS.map(({ related: _, ...b }) => b), { primaryKey: 'id' }).waitTask();
    const edited = await copy.updateDocumentsByFunction({ function: 'doc.famous = true;', filter: '_foreign(author, popularity >= 4)' }).waitTask();
    expect(edited.status).toBe('succeeded');
    expect(edited.details).toMatchObject({ editedDocuments: 2, originalFilter: '"_foreign(author, popularity >= 4)"' });
    const all = await copy.getDocuments({ fields: ['id', 'famous'], limit: 10 });
    expect(all.results.filter((d) => d['famous'] === true).map((d) => d['id']).sort()).toEqual(['b2', 'b3']);
    const deleted = await copy.deleteDocuments({ filter: 'genres = classic AND _foreign(author, birthday STARTS WITH "198")' }).waitTask();
    expect(deleted.status).toBe('succeeded');
    expect(deleted.details).toMatchObject({ deletedDocuments: 1 });
    expect(ids((await copy.getDocuments({ fields: ['id'] })).results)).toEqual(['b1', 'b2', 'b3', 'b5']);
    // A field that is not a foreign key fails the task, with the error a search gets.
    const notKey = await copy.deleteDocuments({ filter: '_foreign(genres, id = a1)' }).waitTask();
    expect(notKey.status).toBe('failed');
    expect(notKey.error).toMatchObject({ code: 'invalid_document_filter', message: expect.stringContaining('Field `genres` is not a foreign key') });
    // A foreign index that is gone by the time the task runs fails the task, not the node.
    await t.client.index('writers').addDocuments([{ id: 'w1', era: 'old' }], { primaryKey: 'id' }).waitTask();
    await t.client.index('writers').updateFilterableAttributes(['era']).waitTask();
    await copy.updateSettings({ foreignKeys: [{ foreignIndexUid: 'writers', fieldName: 'author' }] }).waitTask();
    // Both enqueued before either runs: the index is deleted first.
    const gone = await t.client.index('writers').delete();
    const late = await copy.deleteDocuments({ filter: '_foreign(author, era = old)' });
    expect(late.taskUid).toBeGreaterThan(gone.taskUid);
    const failed = await t.client.tasks.waitForTask(late.taskUid);
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('index_not_found');
    expect((await copy.getStats()).numberOfDocuments).toBe(4);
  });
});
