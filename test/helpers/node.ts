import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { Meilisearch } from 'meilisearch';
import { parseOptions } from '../../src/config/options.js';
import { startNode, type NodeDeps, type RunningNode } from '../../src/server/node.js';

// Run from source by vitest, or compiled under dist/ by the benchmarks.
const UP = resolve(import.meta.dirname, '../..');
export const ROOT = basename(UP) === 'dist' ? dirname(UP) : UP;
export const MAIN = join(ROOT, 'dist/src/main.js');

/**
 * The environment `npm start` gives a node: glibc's allocator settings from package.json's
 * `config.glibcTunables` unless GLIBC_TUNABLES is set (empty: glibc's defaults), and Node's
 * options from `config.nodeOptions` unless NODE_OPTIONS is set. Spawned nodes run with them,
 * so that tests and benchmarks run what users run.
 */
export function nodeEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return {
    ...env,
    GLIBC_TUNABLES: env.GLIBC_TUNABLES ?? glibcTunables(),
    NODE_OPTIONS: env.NODE_OPTIONS ?? nodeOptions(),
  };
}

function config(): { glibcTunables: string; nodeOptions: string } {
  return (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { config: { glibcTunables: string; nodeOptions: string } }).config;
}

/** package.json's `config.glibcTunables`. */
export function glibcTunables(): string {
  return config().glibcTunables;
}

/** package.json's `config.nodeOptions`. */
export function nodeOptions(): string {
  return config().nodeOptions;
}

export function tempDir(prefix = 'trine-test-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/**
 * A port no socket holds, below the kernel's ephemeral range (32768 and up on Linux): a port the
 * kernel handed out by `listen(0)` and released can be taken again as the source port of any
 * outgoing connection before the node meant to bind it starts (a cluster's nodes connect to each
 * other while the later ones start). Ports are drawn at random so that test files running side
 * by side rarely draw the same one, and each is checked by binding it.
 */
const handedOut = new Set<number>();
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (handedOut.has(port)) continue;
    const free = await new Promise<boolean>((res) => {
      const srv = createServer();
      srv.once('error', () => res(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => res(true)));
    });
    if (free) {
      handedOut.add(port);
      return port;
    }
  }
}

/** Dumps and snapshots of a test node go inside its own directory, not the working directory (flags given later win). */
function backupDirs(dir: string): string[] {
  return ['--dump-dir', join(dir, 'dumps'), '--snapshot-dir', join(dir, 'snapshots')];
}

export interface TestNode {
  url: string;
  client: Meilisearch;
  node: RunningNode;
  dir: string;
  close(opts?: { keepData?: boolean }): Promise<void>;
}

/** A real node (real RocksDB in a temp dir, real HTTP on a free port) inside the test process. */
export async function startTestNode(flags: string[] = [], dir = tempDir(), deps: NodeDeps = {}): Promise<TestNode> {
  const port = await freePort();
  const options = parseOptions(['--db-path', dir, '--http-addr', `127.0.0.1:${port}`, '--log-level', 'warn', ...backupDirs(dir), ...flags], {});
  const node = await startNode(options, deps);
  const masterKey = options.masterKey ?? undefined;
  return {
    url: node.url,
    client: new Meilisearch({ host: node.url, ...(masterKey ? { apiKey: masterKey } : {}) }),
    node,
    dir,
    async close(opts = {}) {
      await node.close();
      if (!opts.keepData) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface NodeProcess {
  url: string;
  port: number;
  proc: ChildProcess;
  dir: string;
  output(): string;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

// Node processes still running when this test process ends (a failed test that never reached
// its cleanup, a timeout) are killed with it instead of lingering on the machine.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) p.kill('SIGKILL');
});

/** A node as its own process from the built `dist/` (run `npm run build` first; `npm test` does). */
export async function spawnNode(flags: string[] = [], dir = tempDir(), port?: number, startTimeoutMs = 20_000): Promise<NodeProcess> {
  const p = port ?? (await freePort());
  const proc = spawn(process.execPath, [MAIN, '--db-path', dir, '--http-addr', `127.0.0.1:${p}`, '--log-level', 'warn', ...backupDirs(dir), ...flags], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: nodeEnv(),
  });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  let out = '';
  proc.stdout!.on('data', (d) => (out += d));
  proc.stderr!.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${p}`;
  const started = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`node exited with ${proc.exitCode}: ${out}`);
    try {
      const r = await fetch(`${url}/health`);
      if (r.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() - started > startTimeoutMs) {
      proc.kill('SIGKILL');
      throw new Error(`node did not start: ${out}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port: p,
    proc,
    dir,
    output: () => out,
    kill: (signal = 'SIGTERM') =>
      new Promise((res) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return res();
        proc.once('exit', () => res());
        proc.kill(signal);
      }),
  };
}
