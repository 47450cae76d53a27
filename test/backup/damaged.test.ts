import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataset } from '../fixtures/index.js';
import { MAIN, freePort, nodeEnv, startTestNode, tempDir, type TestNode } from '../helpers/node.js';

const work = tempDir('trine-damaged-');
let dumpFile: string;
let snapshotFile: string;
let node: TestNode;

beforeAll(async () => {
  node = await startTestNode(['--dump-dir', join(work, 'dumps'), '--snapshot-dir', join(work, 'snapshots')], join(work, 'source'));
  await node.client.index('movies').addDocuments(dataset('movies')).waitTask();
  await node.client.index('products').addDocuments(dataset('products'), { primaryKey: 'id' }).waitTask();
  const dump = await node.client.createDump().waitTask();
  dumpFile = join(work, 'dumps', `${(dump.details as { dumpUid: string }).dumpUid}.dump`);
  expect((await node.client.createSnapshot().waitTask()).status).toBe('succeeded');
  snapshotFile = join(work, 'snapshots', `${basename(node.dir)}.snapshot`);
});

afterAll(async () => {
  await node?.close();
  rmSync(work, { recursive: true, force: true });
});

/** Starts the real binary on a fresh database; resolves with its exit code and output (or kills it once it serves). */
async function start(flags: string[], db: string): Promise<{ code: number | null; out: string }> {
  const port = await freePort();
  const proc = spawn(process.execPath, [MAIN, '--db-path', db, '--http-addr', `127.0.0.1:${port}`, '--log-level', 'warn', ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: nodeEnv(),
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number | null>((r) => proc.once('exit', (c) => r(c)));
  const deadline = Date.now() + 20_000;
  while (proc.exitCode === null && Date.now() < deadline) {
    const up = await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false);
    if (up) {
      proc.kill('SIGKILL');
      await exited;
      return { code: null, out: `${out}(it started)` };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return { code: await exited, out };
}

function variant(name: string, from: string, change: (b: Buffer) => Buffer): string {
  const path = join(work, name);
  writeFileSync(path, change(readFileSync(from)));
  return path;
}

/** Refused with exit code 1, a message matching `why`, and no database left behind. */
async function expectRefused(flag: string, file: string, why: RegExp): Promise<void> {
  const db = join(work, `db-${basename(file)}`);
  const r = await start([flag, file], db);
  expect(r.code, r.out).toBe(1);
  expect(r.out).toMatch(why);
  expect(r.out).toContain(file);
  expect(existsSync(db)).toBe(false);
  expect(readdirSync(work).filter((f) => f.endsWith('.importing'))).toEqual([]);
}

describe('damaged backups are refused at start, and nothing is imported', () => {
  it('a truncated dump', async () => {
    const cut = variant('cut.dump', dumpFile, (b) => b.subarray(0, Math.floor(b.length / 2)));
    await expectRefused('--import-dump', cut, /dump .* is truncated/);
    // A dump whose compression is intact but whose last lines are missing.
    const lines = gunzipSync(readFileSync(dumpFile)).toString().split('\n');
    const short = variant('short.dump', dumpFile, () => gzipSync(lines.slice(0, -3).join('\n') + '\n'));
    await expectRefused('--import-dump', short, /is truncated: it has no end record/);
  });

  it('a corrupted dump', async () => {
    const flipped = variant('flipped.dump', dumpFile, (b) => {
      const c = Buffer.from(b);
      c[Math.floor(c.length / 2)]! ^= 0xff;
      return c;
    });
    await expectRefused('--import-dump', flipped, /dump .* is corrupted/);
    // Well-formed JSON in a valid gzip stream, but not what was written: only the checksum tells.
    const text = gunzipSync(readFileSync(dumpFile)).toString().replace('Captain Marvel', 'Captain Marvle');
    const edited = variant('edited.dump', dumpFile, () => gzipSync(text));
    await expectRefused('--import-dump', edited, /is corrupted: its SHA-256 checksum does not match/);
    const notDump = variant('notes.dump', dumpFile, () => Buffer.from('hello\n'));
    await expectRefused('--import-dump', notDump, /is not a Trine dump/);
  });

  it('a newer dump format version', async () => {
    const text = gunzipSync(readFileSync(dumpFile)).toString().replace('"version":1,', '"version":99,');
    const newer = variant('newer.dump', dumpFile, () => gzipSync(text));
    await expectRefused('--import-dump', newer, /format version 99.*reads version 1/);
  });

  it('a truncated snapshot', async () => {
    const cut = variant('cut.snapshot', snapshotFile, (b) => b.subarray(0, b.length - 100));
    await expectRefused('--import-snapshot', cut, /snapshot .* is truncated/);
  });

  it('a corrupted snapshot', async () => {
    const flipped = variant('flipped.snapshot', snapshotFile, (b) => {
      const c = Buffer.from(b);
      c[Math.floor(c.length / 2)]! ^= 0x01;
      return c;
    });
    await expectRefused('--import-snapshot', flipped, /snapshot .* is corrupted: its SHA-256 checksum does not match/);
    const dumpAsSnapshot = join(work, 'dump-as.snapshot');
    copyFileSync(dumpFile, dumpAsSnapshot);
    await expectRefused('--import-snapshot', dumpAsSnapshot, /is not a Trine snapshot/);
  });

  it('the intact files are accepted by the same binary', async () => {
    expect((await start(['--import-dump', dumpFile], join(work, 'ok-dump'))).out).toContain('(it started)');
    expect((await start(['--import-snapshot', snapshotFile], join(work, 'ok-snapshot'))).out).toContain('(it started)');
  });
});

describe('a backup that cannot be written', () => {
  it('fails its task with dump_process_failed, and the node goes on', async () => {
    const blocker = join(work, 'not-a-dir');
    writeFileSync(blocker, 'a file where the dump directory should be');
    const n = await startTestNode(['--dump-dir', join(blocker, 'dumps')], join(work, 'unwritable'));
    try {
      const t = await n.client.createDump().waitTask();
      expect(t.status).toBe('failed');
      expect(t.error?.code).toBe('dump_process_failed');
      expect(t.error?.message).toMatch(/could not write the dump/);
      expect((t.details as { dumpUid: unknown }).dumpUid).toBeNull();
      expect((await n.client.index('after').addDocuments([{ id: 1 }]).waitTask()).status).toBe('succeeded');
    } finally {
      await n.close();
    }
  });
});
