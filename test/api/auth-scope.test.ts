import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Meilisearch } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';

const MASTER = 'a-master-key-long-enough-1234';
let t: TestNode;

beforeAll(async () => {
  t = await startTestNode(['--master-key', MASTER]);
});
afterAll(async () => {
  await t.close();
});

async function keyFor(actions: string[], indexes: string[]): Promise<Meilisearch> {
  const k = await t.client.createKey({ actions, indexes, expiresAt: null });
  return new Meilisearch({ host: t.url, apiKey: k.key });
}

describe('what a scoped key may do beyond its routes', () => {
  it('does not create an index through a write without indexes.create', async () => {
    const writer = await keyFor(['documents.add', 'settings.update', 'tasks.get'], ['*']);
    const missing = await writer.index('nocreate').addDocuments([{ id: 1 }]).waitTask();
    expect(missing.status).toBe('failed');
    expect(missing.error?.code).toBe('index_not_found');
    const settings = await writer.index('nocreate2').updateSettings({ stopWords: ['a'] }).waitTask();
    expect(settings.error?.code).toBe('index_not_found');
    await t.client.createIndex('exists').waitTask();
    const ok = await writer.index('exists').addDocuments([{ id: 1 }]).waitTask();
    expect(ok.status).toBe('succeeded');
    const creator = await keyFor(['documents.add', 'indexes.create', 'tasks.get'], ['*']);
    expect((await creator.index('created').addDocuments([{ id: 1 }]).waitTask()).status).toBe('succeeded');
  });

  it('cancels and deletes only the tasks of its own indexes', async () => {
    await t.client.index('mine').addDocuments([{ id: 1 }]).waitTask();
    await t.client.index('theirs').addDocuments([{ id: 1 }]).waitTask();
    const scoped = await keyFor(['tasks.delete', 'tasks.get'], ['mine']);
    const del = await scoped.tasks.deleteTasks({ statuses: ['succeeded'] }).waitTask();
    expect(del.status).toBe('succeeded');
    const remaining = await t.client.tasks.getTasks({ limit: 1000 });
    expect(remaining.results.some((x) => x.indexUid === 'mine' && x.uid !== del.uid)).toBe(false);
    expect(remaining.results.some((x) => x.indexUid === 'theirs')).toBe(true);
    expect(del.details?.deletedTasks).toBe(del.details?.matchedTasks);
  });
});
