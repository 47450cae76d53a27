import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MeilisearchApiError, type Index } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { fakeProvider, type FakeProvider } from '../helpers/vector-api.js';

// A provider that embeds any JSON by the words it contains: each known word adds its vector,
// so what a request carried can be read back from the embedding.
const WORDS: [string, number[]][] = [
  ['kefir', [0.5, -0.5, 0]],
  ['intel', [1, 1, 0]],
  ['dustin', [-0.5, 0.5, 0]],
  ['bulldog', [0, 0, 1]],
  ['labrador', [0, 0, -1]],
];
function embed(value: unknown): number[] {
  const text = JSON.stringify(value);
  const v = [0, 0, 0];
  for (const [w, x] of WORDS) if (text.includes(w)) x.forEach((n, i) => (v[i]! += n));
  return v;
}

let t: TestNode;
let single: FakeProvider;
let batched: FakeProvider;
let dogs: Index;

const FRAGMENTS = {
  indexingFragments: {
    withBreed: { value: '{{ doc.name }} is a {{ doc.breed }}' },
    basic: { value: '{{ doc.name }} is a dog' },
  },
  searchFragments: {
    justBreed: { value: "It's a {{ media.breed }}" },
    justName: { value: '{{ media.name }} is a dog' },
    query: { value: 'Some pre-prompt for query {{ q }}' },
  },
};

const DOGS = [
  { id: 0, name: 'kefir' },
  { id: 1, name: 'echo', _vectors: { rest: [1, 1, 1] } },
  { id: 2, name: 'intel', breed: 'labrador' },
  { id: 3, name: 'dustin', breed: 'bulldog' },
];

async function apiError(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(MeilisearchApiError);
  const body = (e as MeilisearchApiError).cause as { code: string; message: string };
  return { code: body.code, message: body.message };
}

beforeAll(async () => {
  t = await startTestNode();
  single = await fakeProvider((_p, body) => ({ data: embed(body) }));
  batched = await fakeProvider((_p, body) => ({ data: body.input.map((x: unknown) => ({ embedding: embed(x) })) }));
  await t.client.updateExperimentalFeatures({ multimodal: true });
  dogs = t.client.index('dogs');
  await dogs
    .updateSettings({
      filterableAttributes: ['breed'],
      embedders: { rest: { source: 'rest', url: single.url, dimensions: 3, request: '{{fragment}}', response: { data: '{{embedding}}' }, ...FRAGMENTS } as never },
    })
    .waitTask()
    .then((task) => expect(task.status, JSON.stringify(task.error)).toBe('succeeded'));
  const task = await dogs.addDocuments(DOGS, { primaryKey: 'id' }).waitTask();
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
});
afterAll(async () => {
  await t.close();
  await Promise.all([single.close(), batched.close()]);
});

/** `_vectors.<embedder>` of every document, by id. */
const vectorsOf = async (index: Index, embedder = 'rest') =>
  Object.fromEntries((await index.getDocuments({ retrieveVectors: true })).results.map((d) => [d['id'], d['_vectors'][embedder]]));

describe('indexing fragments', () => {
  it('embeds each fragment that renders, one request per fragment, in the order of the fragment names', async () => {
    const sent = single.received.map((r) => r.body).sort();
    expect(sent).toEqual(['dustin is a bulldog', 'dustin is a dog', 'intel is a dog', 'intel is a labrador', 'kefir is a dog'].sort());
    expect(await vectorsOf(dogs)).toEqual({
      0: { embeddings: [[0.5, -0.5, 0]], regenerate: true },
      1: { embeddings: [[1, 1, 1]], regenerate: false },
      2: { embeddings: [[1, 1, 0], [1, 1, -1]], regenerate: true },
      3: { embeddings: [[-0.5, 0.5, 0], [-0.5, 0.5, 1]], regenerate: true },
    });
  });

  it('embeds again only the fragments whose rendering changed', async () => {
    const before = single.received.length;
    await dogs.updateDocuments([{ id: 3, breed: 'labrador' }, { id: 2, name: 'intel', breed: 'labrador' }]).waitTask();
    expect(single.received.slice(before).map((r) => r.body)).toEqual(['dustin is a labrador']);
    expect((await vectorsOf(dogs))[3]).toEqual({ embeddings: [[-0.5, 0.5, 0], [-0.5, 0.5, -1]], regenerate: true });
    await dogs.updateDocuments([{ id: 3, breed: 'bulldog' }]).waitTask();
  });

  it('after a change of the fragments, embeds only what renders differently', async () => {
    const before = single.received.length;
    const task = await dogs
      .updateEmbedders({ rest: { indexingFragments: { useless: { value: 'This fragment is useless' } } } } as never)
      .waitTask();
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    expect(single.received.slice(before).map((r) => r.body)).toEqual(['This fragment is useless']);
    expect((await vectorsOf(dogs))[2]).toEqual({ embeddings: [[1, 1, 0], [0, 0, 0], [1, 1, -1]], regenerate: true });
    await dogs.updateEmbedders({ rest: { indexingFragments: { useless: null } } } as never).waitTask();
    expect((await vectorsOf(dogs))[2]).toEqual({ embeddings: [[1, 1, 0], [1, 1, -1]], regenerate: true });
  });

  it('sends fragments in batches through `{{..}}`, with JSON fragment values rendered', async () => {
    const index = t.client.index('batched');
    const task = await index
      .updateSettings({
        embedders: {
          b: {
            source: 'rest',
            url: batched.url,
            request: { input: ['{{fragment}}', '{{..}}'], model: 'm' },
            response: { data: [{ embedding: '{{embedding}}' }, '{{..}}'] },
            indexingFragments: { card: { value: { title: '{{ doc.name }}', tags: ['{{ doc.breed }}'] } }, name: { value: '{{ doc.name }}' } },
            searchFragments: { q: { value: '{{ q }}' } },
          } as never,
        },
      })
      .waitTask();
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    await index.addDocuments(DOGS.map(({ _vectors, ...d }) => d), { primaryKey: 'id' }).waitTask();
    expect(batched.received.map((r) => r.body)).toEqual([
      {
        model: 'm',
        input: ['kefir', 'echo', { title: 'intel', tags: ['labrador'] }, 'intel', { title: 'dustin', tags: ['bulldog'] }, 'dustin'],
      },
    ]);
    expect((await vectorsOf(index, 'b'))[2]).toEqual({ embeddings: [[1, 1, -1], [1, 1, 0]], regenerate: true });
  });
});

describe('search through fragments', () => {
  it('embeds `media` with the first search fragment that renders', async () => {
    const before = single.received.length;
    const r = await dogs.search(null, { media: { breed: 'labrador' } as never, hybrid: { embedder: 'rest', semanticRatio: 1 }, limit: 1 });
    expect(r.hits).toEqual([{ id: 2, name: 'intel', breed: 'labrador' }]);
    expect((r as { semanticHitCount?: number }).semanticHitCount).toBe(1);
    expect(single.received.slice(before).map((x) => x.body)).toEqual(["It's a labrador"]);
  });

  it('embeds `q` through the search fragment that reads it', async () => {
    const before = single.received.length;
    const r = await dogs.search('bulldog', { hybrid: { embedder: 'rest', semanticRatio: 1 }, limit: 1 });
    expect(r.hits).toEqual([{ id: 3, name: 'dustin', breed: 'bulldog' }]);
    expect(single.received.slice(before).map((x) => x.body)).toEqual(['Some pre-prompt for query bulldog']);
  });

  it('scores a document by its best fragment, and works with filters, hybrid and retrieveVectors', async () => {
    const r = await dogs.search('dustin', {
      media: { name: 'dustin' } as never,
      hybrid: { embedder: 'rest', semanticRatio: 0.5 },
      filter: 'breed EXISTS',
      retrieveVectors: true,
      showRankingScore: true,
    });
    expect(r.hits[0]!['id']).toBe(3);
    expect(r.hits.map((h) => h['id']).sort()).toEqual([2, 3]);
    expect(r.hits[0]!['_vectors']).toEqual({ rest: { embeddings: [[-0.5, 0.5, 0], [-0.5, 0.5, 1]], regenerate: true } });
  });

  it('searches fragment embeddings with a vector too', async () => {
    const r = await dogs.search(null, { vector: [1, 1, 1], hybrid: { embedder: 'rest', semanticRatio: 1 }, limit: 1 });
    expect(r.hits).toEqual([{ id: 1, name: 'echo' }]);
  });

  it('refuses `media` without `hybrid`, with `vector`, with an embedder without fragments, or not an object', async () => {
    expect(await apiError(dogs.search(null, { media: { breed: 'x' } as never }))).toEqual({
      code: 'missing_search_hybrid',
      message: 'Invalid request: missing `hybrid` parameter when `media` is present.',
    });
    expect(await apiError(dogs.search(null, { media: { breed: 'x' } as never, vector: [1, 1, 1], hybrid: { embedder: 'rest' } }))).toEqual({
      code: 'invalid_search_media_and_vector',
      message: 'Invalid request: both `media` and `vector` parameters are present.',
    });
    const plain = t.client.index('plain');
    await plain.updateEmbedders({ manual: { source: 'userProvided', dimensions: 3 } }).waitTask();
    await plain.addDocuments([{ id: 1, _vectors: { manual: [1, 0, 0] } }]).waitTask();
    const e = await apiError(plain.search(null, { media: { breed: 'x' } as never, hybrid: { embedder: 'manual' } }));
    expect(e.code).toBe('invalid_search_media');
    expect(e.message).toContain('embedder `manual` has no `searchFragments`');
    expect((await apiError(dogs.search(null, { media: ['x'] as never, hybrid: { embedder: 'rest' } }))).code).toBe('invalid_search_media');
  });

  it('answers an error when no search fragment renders', async () => {
    const e = await apiError(dogs.search(null, { media: { ticker: 'GME' } as never, hybrid: { embedder: 'rest', semanticRatio: 1 } }));
    expect(e).toEqual({
      code: 'vector_embedding_error',
      message: 'Error while generating embeddings: user error: Query matches no search fragment.\n  - Note: {"q":null,"media":{"ticker":"GME"}}',
    });
  });
});

describe('_vectors filters', () => {
  const ids = async (index: Index, filter: string) => (await index.search(null, { filter, limit: 50 })).hits.map((h) => h['id']).sort();

  it('select documents by embedder, origin and fragment, in search', async () => {
    expect(await ids(dogs, '_vectors EXISTS')).toEqual([0, 1, 2, 3]);
    expect(await ids(dogs, '_vectors.rest EXISTS')).toEqual([0, 1, 2, 3]);
    expect(await ids(dogs, '_vectors.rest.userProvided EXISTS')).toEqual([1]);
    expect(await ids(dogs, '_vectors.rest.documentTemplate EXISTS')).toEqual([]);
    expect(await ids(dogs, '_vectors.rest.regenerate EXISTS')).toEqual([0, 2, 3]);
    expect(await ids(dogs, '_vectors.rest.fragments.withBreed EXISTS')).toEqual([2, 3]);
    expect(await ids(dogs, '_vectors.rest.fragments.basic EXISTS')).toEqual([0, 2, 3]);
    expect(await ids(dogs, '_vectors.rest.fragments.withBreed NOT EXISTS')).toEqual([0, 1]);
    expect(await ids(dogs, 'NOT _vectors.rest.regenerate EXISTS AND breed NOT EXISTS')).toEqual([1]);
  });

  it('tell template, user-provided and opted-out documents apart, in document fetch and delete', async () => {
    const mixed = t.client.index('mixed');
    const task = await mixed
      .updateEmbedders({
        manual: { source: 'userProvided', dimensions: 3 },
        tmpl: { source: 'rest', url: single.url, dimensions: 3, request: '{{text}}', response: { data: '{{embedding}}' }, documentTemplate: '{{ doc.name }}' } as never,
      })
      .waitTask();
    expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
    await mixed
      .addDocuments(
        [
          { id: 1, name: 'kefir', _vectors: { manual: [1, 0, 0] } },
          { id: 2, name: 'intel', _vectors: { manual: null } },
          { id: 3, name: 'dustin', _vectors: { manual: [0, 1, 0], tmpl: [1, 1, 1] } },
        ],
        { primaryKey: 'id' },
      )
      .waitTask();
    const fetched = async (filter: string) => (await mixed.getDocuments({ filter })).results.map((d) => d['id']).sort();
    expect(await fetched('_vectors.manual EXISTS')).toEqual([1, 3]);
    expect(await fetched('_vectors.manual NOT EXISTS')).toEqual([2]);
    expect(await fetched('_vectors.manual.userProvided EXISTS')).toEqual([1, 2, 3]);
    expect(await fetched('_vectors.tmpl.documentTemplate EXISTS')).toEqual([1, 2]);
    expect(await fetched('_vectors.tmpl.userProvided EXISTS')).toEqual([3]);
    const deleted = await mixed.deleteDocuments({ filter: '_vectors.tmpl.userProvided EXISTS' }).waitTask();
    expect(deleted.status, JSON.stringify(deleted.error)).toBe('succeeded');
    expect(await fetched('_vectors EXISTS')).toEqual([1, 2]);
  });

  it('name an unknown embedder or fragment, and refuse other operators', async () => {
    expect(await apiError(dogs.search(null, { filter: '_vectors.nope EXISTS' }))).toEqual({
      code: 'invalid_search_filter',
      message: 'Index `dogs`: The embedder `nope` does not exist. Available embedders are: `rest`.\n1:14 _vectors.nope EXISTS',
    });
    const e = await apiError(dogs.getDocuments({ filter: '_vectors.rest.fragments.nope EXISTS' }));
    expect(e.code).toBe('invalid_document_filter');
    expect(e.message).toContain('The fragment `nope` does not exist on embedder `rest`. Available fragments on this embedder are: `basic`, `withBreed`.');
    const op = await apiError(dogs.search(null, { filter: '_vectors.rest = 1' }));
    expect(op.code).toBe('invalid_search_filter');
    expect(op.message).toContain('vector filters only accept `EXISTS` and `NOT EXISTS`');
  });
});

describe('after a restart', () => {
  it('keeps the fragment embeddings and still re-embeds only changed renderings', async () => {
    const dir = t.dir;
    await t.close({ keepData: true });
    t = await startTestNode([], dir);
    dogs = t.client.index('dogs');
    expect((await vectorsOf(dogs))[2]).toEqual({ embeddings: [[1, 1, 0], [1, 1, -1]], regenerate: true });
    const before = single.received.length;
    await dogs.updateDocuments([{ id: 2, breed: 'bulldog' }]).waitTask();
    expect(single.received.slice(before).map((r) => r.body)).toEqual(['intel is a bulldog']);
    expect((await vectorsOf(dogs))[2]).toEqual({ embeddings: [[1, 1, 0], [1, 1, 1]], regenerate: true });
  });
});
