import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  await t.client.index('meta').addDocuments([{ id: 1, genre: 'a' }, { id: 2, genre: 'b' }, { id: 3, genre: 'c' }]).waitTask();
  await t.client.index('meta').updateFilterableAttributes(['genre']).waitTask();
  await t.client.createIndex('other').waitTask();
});
afterAll(async () => {
  await t.close();
});

async function write(method: string, path: string, body?: unknown) {
  const r = await fetch(t.url + path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  return { status: r.status, body: (await r.json()) as Record<string, unknown> };
}

describe('customMetadata', () => {
  it('is kept in the task of every write made through the client', async () => {
    const index = t.client.index('meta');
    const tasks = [
      await index.addDocuments([{ id: 4 }], { customMetadata: 'add' }).waitTask(),
      await index.updateDocuments([{ id: 4, genre: 'd' }], { customMetadata: 'update' }).waitTask(),
      await index.deleteDocument(4, { customMetadata: 'delete-one' }).waitTask(),
      await index.deleteDocuments([3], { customMetadata: 'delete-batch' }).waitTask(),
      await index.deleteDocuments({ filter: 'genre = b' }, { customMetadata: 'delete-filter' }).waitTask(),
    ];
    expect(tasks.map((x) => [x.status, x.customMetadata])).toEqual([
      ['succeeded', 'add'],
      ['succeeded', 'update'],
      ['succeeded', 'delete-one'],
      ['succeeded', 'delete-batch'],
      ['succeeded', 'delete-filter'],
    ]);
    const summary = await index.addDocuments([{ id: 9 }], { customMetadata: 'summary' });
    expect((summary as { customMetadata?: string }).customMetadata).toBe('summary');
    expect((await t.client.tasks.getTask(summary.taskUid)).customMetadata).toBe('summary');
    const cleared = await index.deleteAllDocuments({ customMetadata: 'clear' }).waitTask();
    expect(cleared.customMetadata).toBe('clear');
  });

  it('is kept in the task of every other task-creating route, answered in the summary and listed', async () => {
    const m = (v: string) => `?customMetadata=${encodeURIComponent(v)}`;
    const routes: [string, string, unknown?][] = [
      ['POST', '/indexes' + m('create'), { uid: 'made' }],
      ['PATCH', '/indexes/made' + m('update-index'), { primaryKey: 'id' }],
      ['POST', '/swap-indexes' + m('swap'), [{ indexes: ['made', 'other'] }]],
      ['PATCH', '/indexes/meta/settings' + m('settings'), { stopWords: ['the'] }],
      ['PUT', '/indexes/meta/settings/sortable-attributes' + m('one-setting'), ['genre']],
      ['DELETE', '/indexes/meta/settings/sortable-attributes' + m('reset-one')],
      ['DELETE', '/indexes/meta/settings' + m('reset-all')],
      ['POST', '/dumps' + m('dump')],
      ['POST', '/snapshots' + m('snapshot')],
      ['POST', '/tasks/cancel' + '?uids=999&customMetadata=cancel'],
      ['DELETE', '/tasks' + '?uids=999&customMetadata=delete-tasks'],
      ['DELETE', '/indexes/made' + m('delete-index')],
      // Nothing matches the pattern, so nothing is sent to the (unreachable) other instance.
      ['POST', '/export' + m('export'), { url: 'http://127.0.0.1:9', indexes: { 'nothing-here': {} } }],
    ];
    for (const [method, path, body] of routes) {
      const r = await write(method, path, body);
      expect(r.status, `${method} ${path}`).toBeLessThan(300);
      const expected = new URLSearchParams(path.split('?')[1]).get('customMetadata');
      expect(r.body['customMetadata'], `${method} ${path}`).toBe(expected);
      const task = await t.client.tasks.waitForTask(r.body['taskUid'] as number, { timeout: 20_000 });
      expect(task.customMetadata, `${method} ${path}`).toBe(expected);
      expect(task.status, `${method} ${path}: ${JSON.stringify(task.error)}`).toBe('succeeded');
    }
    const listed = await t.client.tasks.getTasks({ types: ['dumpCreation'] });
    expect(listed.results[0]!.customMetadata).toBe('dump');
  });

  it('is absent from tasks written without it, and an empty string is kept as such', async () => {
    const plain = await t.client.index('meta').addDocuments([{ id: 5 }]).waitTask();
    expect('customMetadata' in plain).toBe(false);
    const empty = await write('POST', '/indexes/meta/documents?customMetadata=', [{ id: 6 }]);
    expect(empty.body['customMetadata']).toBe('');
  });
});
