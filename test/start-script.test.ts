// `npm start` gives the node glibc's allocator settings and Node's options from package.json
// (see the README's "Memory"); a GLIBC_TUNABLES or NODE_OPTIONS of the user's own, even an empty
// one, wins.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { freePort, glibcTunables, nodeOptions, ROOT, tempDir } from './helpers/node.js';

const tunables = glibcTunables();

let started: { proc: ChildProcess; dir: string } | null = null;

afterEach(async () => {
  if (!started) return;
  const { proc, dir } = started;
  started = null;
  // npm, its shell and the node share the process group npm leads.
  if (proc.exitCode === null) {
    const exited = new Promise((r) => proc.once('exit', r));
    process.kill(-proc.pid!, 'SIGKILL');
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

/** Runs `npm start` with its database in `dir` until the node answers; returns the database path. */
async function npmStart(dir: string, env: NodeJS.ProcessEnv): Promise<string> {
  const port = await freePort();
  const db = join(dir, 'db');
  const proc = spawn('npm', ['start', '--', '--db-path', db, '--http-addr', `127.0.0.1:${port}`, '--log-level', 'warn'], {
    cwd: ROOT,
    env,
    stdio: 'ignore',
    detached: true,
  });
  started = { proc, dir };
  const deadline = Date.now() + 30_000;
  while (!(await fetch(`http://127.0.0.1:${port}/health`).then((r) => r.ok, () => false))) {
    if (proc.exitCode !== null) throw new Error(`npm start exited with ${proc.exitCode}`);
    if (Date.now() > deadline) throw new Error('npm start did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return db;
}

// A preload (NODE_OPTIONS reaches npm and the node it starts) that writes each process's script
// and GLIBC_TUNABLES as glibc left it in the environment the process reads (glibc may rewrite
// /proc/<pid>/environ in place, so that file does not say).
const PRELOAD = `const { appendFileSync } = require('node:fs');
appendFileSync(process.env.TRINE_TEST_ENV_OUT, JSON.stringify({ script: process.argv[1] ?? '', tunables: process.env.GLIBC_TUNABLES ?? null }) + '\\n');`;

/** GLIBC_TUNABLES as the node process `npm start` runs sees it, once the node answers (null: unset). */
async function startEnv(env: NodeJS.ProcessEnv): Promise<string | null> {
  const dir = tempDir();
  const preload = join(dir, 'preload.cjs');
  const out = join(dir, 'env.ndjson');
  writeFileSync(preload, PRELOAD);
  await npmStart(dir, { ...env, NODE_OPTIONS: `--require ${preload}`, TRINE_TEST_ENV_OUT: out });
  const lines = readFileSync(out, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { script: string; tunables: string | null });
  const node = lines.find((l) => l.script.endsWith(join('dist', 'src', 'main.js')));
  if (!node) throw new Error(`no node process under npm start: ${JSON.stringify(lines)}`);
  return node.tunables;
}

/**
 * NODE_OPTIONS of the node `npm start` runs (null: unset), read from /proc: the preload above
 * travels in NODE_OPTIONS, which would then be the user's own.
 */
async function startNodeOptions(env: NodeJS.ProcessEnv): Promise<string | null> {
  const dir = tempDir();
  const db = await npmStart(dir, env);
  for (const pid of readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    let args: string[];
    try {
      args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      continue; // gone meanwhile
    }
    if (!args.some((a) => a.endsWith(join('dist', 'src', 'main.js'))) || !args.includes(db)) continue;
    const vars = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    const found = vars.find((v) => v.startsWith('NODE_OPTIONS='));
    return found === undefined ? null : found.slice('NODE_OPTIONS='.length);
  }
  throw new Error('no node process under npm start');
}

describe.runIf(process.platform === 'linux')('npm start', () => {
  it('runs the node with the allocator settings of package.json', async () => {
    expect(tunables).toMatch(/^glibc\.malloc\./);
    const env = { ...process.env };
    delete env.GLIBC_TUNABLES;
    expect(await startEnv(env)).toBe(tunables);
  }, 60_000);

  it('keeps a GLIBC_TUNABLES of the user, an empty one included', async () => {
    expect(await startEnv({ ...process.env, GLIBC_TUNABLES: '' })).toBe('');
  }, 60_000);

  it('runs the node with the Node options of package.json', async () => {
    expect(nodeOptions()).toMatch(/^--v8-pool-size=\d+$/);
    const env = { ...process.env };
    delete env.NODE_OPTIONS;
    expect(await startNodeOptions(env)).toBe(nodeOptions());
  }, 60_000);

  it('keeps a NODE_OPTIONS of the user, an empty one included', async () => {
    expect(await startNodeOptions({ ...process.env, NODE_OPTIONS: '' })).toBe('');
  }, 60_000);
});
