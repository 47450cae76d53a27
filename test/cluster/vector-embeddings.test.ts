import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestCluster } from '../helpers/cluster.js';
import { call, fakeEmbedding, fakeProvider, waitTask, type FakeProvider } from '../helpers/vector-api.js';

let c: TestCluster;
let provider: FakeProvider;

beforeAll(async () => {
  provider = await fakeProvider((_p, body) => ({ vectors: body.texts.map((x: string) => fakeEmbedding(x)) }));
  c = await TestCluster.start();
});

afterAll(async () => {
  await c?.stop();
  await provider?.close();
});

describe('embeddings in a three-node cluster', () => {
  it('are asked of the provider once, by the leader, and stored the same on every node', async () => {
    const lead = await c.waitForLeader();
    const follower = [0, 1, 2].find((i) => i !== lead)!;
    const at = { url: c.url(follower) };
    const settings = await call(at, 'PATCH', '/indexes/docs/settings', {
      embedders: { r: { source: 'rest', url: provider.url, request: { texts: ['{{text}}', '{{..}}'] }, response: { vectors: ['{{embedding}}', '{{..}}'] }, documentTemplate: '{{doc.title}}' } },
    });
    expect((await waitTask(at, settings.body['taskUid']))['status']).toBe('succeeded');
    const docs = Array.from({ length: 30 }, (_, i) => ({ id: i, title: `title number ${i}` }));
    const add = await call(at, 'POST', '/indexes/docs/documents', docs);
    for (const i of [0, 1, 2]) expect((await waitTask({ url: c.url(i) }, add.body['taskUid']))['status']).toBe('succeeded');

    const texts = provider.received.flatMap((r) => r.body.texts as string[]);
    expect(texts.sort()).toEqual(docs.map((d) => d.title).sort());

    const views = await Promise.all([0, 1, 2].map((i) => call({ url: c.url(i) }, 'POST', '/indexes/docs/documents/fetch', { retrieveVectors: true, limit: 100 })));
    for (const v of views) expect(v.body['results']).toEqual(views[0]!.body['results']);
    expect(views[0]!.body['results'][7]['_vectors']['r']['embeddings']).toEqual([fakeEmbedding('title number 7')]);

    // A provider error fails the task on every node, the same way.
    provider.failNext(1, 400, 'nope');
    const bad = await call(at, 'POST', '/indexes/docs/documents', [{ id: 99, title: 'refused' }]);
    const outcomes = await Promise.all([0, 1, 2].map((i) => waitTask({ url: c.url(i) }, bad.body['taskUid'])));
    for (const o of outcomes) expect(o['error']).toEqual(outcomes[0]!['error']);
    expect(outcomes[0]!['error']['code']).toBe('vector_embedding_error');
  });
});
