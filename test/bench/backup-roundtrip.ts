import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseOptions } from '../../src/config/options.js';
import { startNode, type RunningNode } from '../../src/server/node.js';
import { digests, readBackupState, waitTask } from '../backup/state.js';

/**
 * `npm run bench:backup [documents]`: a dump and a snapshot of a large index (100,000
 * documents by default) round-trip exactly, and how long each step takes. Exits non-zero if
 * any digest differs or the whole run exceeds its time budget. Kept out of `npm test`, which
 * must stay fast on two cores.
 */

const MASTER = 'a-master-key-for-the-benchmark';
const COUNT = Number(process.argv[2] ?? 100_000);
const BUDGET_MS = 15 * 60_000;
const GENRES = ['drama', 'comedy', 'horror', 'western', 'documentary', 'animation', 'thriller'];
const WORDS = 'the quick brown fox jumps over lazy dog river mountain city night story light shadow house road'.split(' ');

function doc(i: number): Record<string, unknown> {
  const w = (k: number) => WORDS[(i * 7 + k * 13) % WORDS.length];
  return { id: i, title: `${w(1)} ${w(2)} ${w(3)} ${i}`, genre: GENRES[i % GENRES.length], year: 1950 + (i % 70), tags: [w(4), w(5)] };
}

async function start(dir: string, flags: string[]): Promise<RunningNode> {
  const options = parseOptions(['--db-path', join(dir, 'db'), '--http-addr', '127.0.0.1:0', '--log-level', 'error', '--master-key', MASTER, ...flags], {});
  return startNode(options);
}

async function call(url: string, method: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(`${url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${MASTER}`, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return (await r.json()) as Record<string, unknown>;
}

async function timed<T>(label: string, fn: () => Promise<T>): Promise<T> {
  const t0 = Date.now();
  const v = await fn();
  console.log(`${label.padEnd(36)} ${((Date.now() - t0) / 1000).toFixed(2)} s`);
  return v;
}

async function main(): Promise<void> {
  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'trine-bench-backup-'));
  let failed = false;
  try {
    const source = await start(join(work, 'source'), ['--dump-dir', join(work, 'dumps'), '--snapshot-dir', join(work, 'snaps')]);
    const url = source.url;
    await timed(`index ${COUNT} documents`, async () => {
      await call(url, 'PATCH', '/indexes/bench/settings', { filterableAttributes: ['genre', 'year'], sortableAttributes: ['year'] });
      let last = 0;
      for (let from = 0; from < COUNT; from += 10_000) {
        const docs = Array.from({ length: Math.min(10_000, COUNT - from) }, (_, k) => doc(from + k));
        last = (await call(url, 'POST', '/indexes/bench/documents?primaryKey=id', docs))['taskUid'] as number;
      }
      await waitTask(url, last, MASTER, BUDGET_MS);
    });
    const dumpTask = await timed('write the dump', async () => waitTask(url, (await call(url, 'POST', '/dumps'))['taskUid'] as number, MASTER, BUDGET_MS));
    // Each backup is compared with the state right after its own task.
    const atDump = digests(await readBackupState(url, MASTER));
    const snapTask = await timed('write the snapshot', async () => waitTask(url, (await call(url, 'POST', '/snapshots'))['taskUid'] as number, MASTER, BUDGET_MS));
    if (dumpTask['status'] !== 'succeeded' || snapTask['status'] !== 'succeeded') throw new Error('a backup task failed');
    const atSnapshot = digests(await readBackupState(url, MASTER));
    await source.close();
    const dumpFile = join(work, 'dumps', `${(dumpTask['details'] as { dumpUid: string }).dumpUid}.dump`);
    const snapFile = join(work, 'snaps', `${basename(join(work, 'source', 'db'))}.snapshot`);
    console.log(`dump ${(statSync(dumpFile).size / 1e6).toFixed(1)} MB, snapshot ${(statSync(snapFile).size / 1e6).toFixed(1)} MB`);

    const runs = [['dump', '--import-dump', dumpFile, atDump], ['snapshot', '--import-snapshot', snapFile, atSnapshot]] as const;
    for (const [kind, flag, file, before] of runs) {
      const node = await timed(`start from the ${kind}`, () => start(join(work, kind), [flag, file]));
      const after = digests(await readBackupState(node.url, MASTER));
      await node.close();
      for (const part of Object.keys(before) as (keyof typeof before)[]) {
        if (before[part] !== after[part]) {
          failed = true;
          console.error(`${kind}: ${part} differs after the round trip`);
        }
      }
      if (!failed) console.log(`${kind}: documents, settings, keys, features, tasks and batches identical`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const total = Date.now() - started;
  console.log(`total ${(total / 1000).toFixed(1)} s`);
  if (failed || total > BUDGET_MS) process.exit(1);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
