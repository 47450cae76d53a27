import { existsSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseOptions } from '../../src/config/options.js';
import { dataset } from '../fixtures/index.js';
import { spawnNode, startTestNode, tempDir, type NodeProcess, type TestNode } from '../helpers/node.js';
import { digests, readBackupState, reader, waitTask, type BackupState } from './state.js';

const MASTER = 'a-master-key-for-snapshots';
const work = tempDir('trine-snapshot-');
const snapshotDir = join(work, 'snapshots');
let source: TestNode;
let imported: NodeProcess | null = null;

beforeAll(async () => {
  source = await startTestNode(['--master-key', MASTER, '--snapshot-dir', snapshotDir], join(work, 'source'));
});

afterAll(async () => {
  await imported?.kill('SIGKILL');
  await source?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('snapshots', () => {
  let before: BackupState;
  let file: string;
  let snapshotTaskUid: number;

  it('POST /snapshots through the official client writes <snapshot-dir>/<db name>.snapshot', async () => {
    const c = source.client;
    await c.index('genres').addDocuments(dataset('genres')).waitTask();
    await c.index('genres').updateSettings({ filterableAttributes: ['genres'], rankingRules: ['words', 'sort', 'typo'] }).waitTask();
    await c.index('nested').addDocuments(dataset('nested')).waitTask();
    await c.index('nested').deleteDocuments([1, 2]).waitTask();
    await c.createKey({ uid: '9f4b5c1e-0000-4000-8000-000000000001', actions: ['search'], indexes: ['genres'], expiresAt: null });
    const task = await c.createSnapshot().waitTask();
    expect(task.status).toBe('succeeded');
    expect(task.type).toBe('snapshotCreation');
    expect(task.details).toBeUndefined();
    snapshotTaskUid = task.uid;
    file = join(snapshotDir, `${basename(source.dir)}.snapshot`);
    expect(existsSync(file)).toBe(true);
    before = await readBackupState(source.url, MASTER);
  });

  it('--import-snapshot starts a node holding the same documents, settings, keys and tasks', async () => {
    imported = await spawnNode(['--master-key', MASTER, '--import-snapshot', file], join(work, 'restored'));
    const after = await readBackupState(imported.url, MASTER);
    expect(after.tasks).toEqual(before.tasks);
    expect(after.batches).toEqual(before.batches);
    expect(digests(after)).toEqual(digests(before));
    // The snapshot task was processing when the copy was taken; in the copy it is finished, not run again.
    const t = await reader(imported.url, MASTER)(`/tasks/${snapshotTaskUid}`);
    expect(t['status']).toBe('succeeded');
  });

  it('the node started from a snapshot takes writes, from the next task uid on', async () => {
    const r = await fetch(`${imported!.url}/indexes/genres/documents`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${MASTER}`, 'Content-Type': 'application/json' },
      body: JSON.stringify([{ id: 999, title: 'New', genres: ['Drama'] }]),
    });
    const task = (await r.json()) as { taskUid: number };
    expect(task.taskUid).toBe(snapshotTaskUid + 1);
    expect((await waitTask(imported!.url, task.taskUid, MASTER))['status']).toBe('succeeded');
    const fetched = await fetch(`${imported!.url}/indexes/genres/documents/fetch`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${MASTER}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ filter: 'genres = Drama', fields: ['id'] }),
    });
    const ids = ((await fetched.json()) as { results: { id: number }[] }).results.map((d) => d.id);
    expect(ids).toContain(999);
  });

  it('refuses a database that already exists unless --ignore-snapshot-if-db-exists', async () => {
    await imported!.kill();
    imported = null;
    const dir = join(work, 'restored');
    await expect(spawnNode(['--master-key', MASTER, '--import-snapshot', file], dir)).rejects.toThrow(/already exists.*--ignore-snapshot-if-db-exists/s);
    imported = await spawnNode(['--master-key', MASTER, '--import-snapshot', file, '--ignore-snapshot-if-db-exists'], dir);
    expect((await reader(imported.url, MASTER)(`/tasks/${snapshotTaskUid + 1}`))['status']).toBe('succeeded');
  });
});

describe('scheduled snapshots', () => {
  it('--schedule-snapshot alone means daily; with seconds, a snapshot task is enqueued that often', async () => {
    expect(parseOptions(['--schedule-snapshot'], {}).scheduleSnapshot).toBe(86_400);
    expect(parseOptions(['--schedule-snapshot', '--log-level', 'info'], {}).scheduleSnapshot).toBe(86_400);
    expect(parseOptions(['--schedule-snapshot', '60'], {}).scheduleSnapshot).toBe(60);
    expect(parseOptions([], {}).scheduleSnapshot).toBeNull();
    expect(() => parseOptions(['--schedule-snapshot', '0'], {})).toThrow(/positive number of seconds/);
    const dir = join(work, 'scheduled');
    const n = await startTestNode(['--schedule-snapshot', '1', '--snapshot-dir', join(dir, 'snaps')], join(dir, 'db'));
    try {
      const deadline = Date.now() + 10_000;
      let done: unknown[] = [];
      while (done.length < 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
        done = (await n.client.tasks.getTasks({ types: ['snapshotCreation'], statuses: ['succeeded'] })).results;
      }
      expect(done.length).toBeGreaterThanOrEqual(2);
      expect(existsSync(join(dir, 'snaps', 'db.snapshot'))).toBe(true);
    } finally {
      await n.close();
    }
  });
});
