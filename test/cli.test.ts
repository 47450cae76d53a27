import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { envVarName, FLAGS, parseOptions } from '../src/config/options.js';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { MAIN, ROOT, spawnNode } from './helpers/node.js';

function run(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [MAIN, ...args], { encoding: 'utf8', env: { PATH: process.env['PATH'] ?? '', ...env }, timeout: 20_000 });
  return { code: r.status, out: r.stdout + r.stderr };
}

describe('command line', () => {
  it('refuses bad flags with a clear message and exit code 1', () => {
    const unknown = run(['--nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.out).toContain('Unknown flag `--nope`');
    const badAddr = run(['--http-addr', 'localhost']);
    expect(badAddr.code).toBe(1);
    expect(badAddr.out).toContain('--http-addr: expected host:port');
    const badEnv = run(['--env', 'staging']);
    expect(badEnv.code).toBe(1);
    const size = run(['--http-payload-size-limit', 'lots']);
    expect(size.code).toBe(1);
    const queue = run(['--task-queue-limit', '0']);
    expect(queue.code).toBe(1);
    expect(queue.out).toContain('--task-queue-limit: expected a positive number of tasks, got `0`.');
    const consistency = run(['--read-consistency', 'eventual']);
    expect(consistency.code).toBe(1);
    expect(consistency.out).toContain('--read-consistency: expected consistent or stale, got `eventual`.');
    const readTimeout = run(['--read-timeout', 'soon']);
    expect(readTimeout.code).toBe(1);
    expect(readTimeout.out).toContain('--read-timeout: expected a duration');
    const lag = run(['--health-max-lag-entries', '-1']);
    expect(lag.code).toBe(1);
    expect(lag.out).toContain('--health-max-lag-entries: expected a number of log entries, got `-1`.');
  });

  it('refuses production without a master key, and short keys in production', () => {
    const prod = run(['--env', 'production']);
    expect(prod.code).toBe(1);
    expect(prod.out).toContain('master key');
    const short = run(['--env', 'production', '--master-key', 'short']);
    expect(short.code).toBe(1);
    expect(short.out).toContain('at least 16 bytes');
  });

  it('starts in development with a short master key, warning about it (the official clients test with `masterKey`)', async () => {
    expect(parseOptions(['--master-key', 'masterKey'], {}).masterKey).toBe('masterKey');
    const node = await spawnNode(['--master-key', 'masterKey', '--log-level', 'info']);
    try {
      const keys = await fetch(`${node.url}/keys`, { headers: { authorization: 'Bearer masterKey' } });
      expect(keys.status).toBe(200);
      expect(node.output()).toContain('The master key is shorter than 16 bytes');
    } finally {
      await node.kill();
      rmSync(node.dir, { recursive: true, force: true });
    }
  });

  it('writes readable logs under a banner by default in development, one JSON object a line with --experimental-logs-mode json', async () => {
    expect(parseOptions([], {}).logsMode).toBe('human');
    expect(parseOptions(['--env', 'production', '--master-key', 'a-master-key-of-32-bytes-at-least'], {}).logsMode).toBe('json');
    expect(() => parseOptions(['--experimental-logs-mode', 'pretty'], {})).toThrow(/expected human or json, got `pretty`/);
    const human = await spawnNode(['--log-level', 'info']);
    const json = await spawnNode(['--log-level', 'info', '--experimental-logs-mode', 'json']);
    try {
      const out = human.output();
      expect(out).toContain(`Server listening on:  "${human.url}"`);
      expect(out).toContain('No master key was given');
      expect(out).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z  INFO trine: Server listening at/m);
      expect(out).toContain(`the API is open to anyone who can reach it url=${human.url} `);
      const lines = json.output().split('\n').filter((l) => l.trim() !== '');
      expect(lines.length).toBeGreaterThan(2);
      for (const l of lines) expect(() => JSON.parse(l)).not.toThrow();
      expect(json.output()).not.toContain('Server listening on:');
    } finally {
      await Promise.all([human.kill(), json.kill()]);
      rmSync(human.dir, { recursive: true, force: true });
      rmSync(json.dir, { recursive: true, force: true });
    }
  });

  it('prints every flag with --help, and the README lists every flag with its variable', () => {
    const help = run(['--help']);
    expect(help.code).toBe(0);
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    for (const f of FLAGS) {
      expect(help.out).toContain(`--${f.name}`);
      expect(readme).toContain(`| \`--${f.name}\` | \`${envVarName(f.name)}\` |`);
    }
  });

  it('reads TRINE_* environment variables, flags winning over them', () => {
    const o = parseOptions(['--log-level', 'debug'], { TRINE_HTTP_ADDR: '0.0.0.0:8000', TRINE_LOG_LEVEL: 'error', TRINE_HTTP_PAYLOAD_SIZE_LIMIT: '1 GiB' });
    expect(o.httpAddr).toEqual({ host: '0.0.0.0', port: 8000 });
    expect(o.logLevel).toBe('debug');
    expect(o.httpPayloadSizeLimit).toBe(1024 ** 3);
    const d = parseOptions([], {});
    expect(d.dbPath).toBe('./data');
    expect(d.httpAddr).toEqual({ host: '127.0.0.1', port: 7700 });
    expect(d.httpPayloadSizeLimit).toBe(100_000_000);
  });
});
