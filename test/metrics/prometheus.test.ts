// A real Prometheus, started by `cluster/monitor.sh` as `npm run cluster:monitor` does, scrapes a
// node protected by a master key with an API key holding only metrics.get, and answers instant
// queries over trine_ metrics with the node's data.

import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, freePort, startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { ensurePrometheus } from './helpers.js';

interface Vector {
  metric: Record<string, string>;
  value: [number, string];
}

let node: TestNode;
let prometheus: ChildProcess;
let promUrl: string;
let output = '';
const dataDir = tempDir('trine-prometheus-');

async function query(promql: string): Promise<Vector[]> {
  const r = await fetch(`${promUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
  const body = (await r.json()) as { status: string; data: { resultType: string; result: Vector[] }; error?: string };
  if (body.status !== 'success') throw new Error(`query ${promql} failed: ${body.error}`);
  return body.data.result;
}

/** Polls until Prometheus has scraped the node once: the scrape interval is seconds long. */
async function firstScrape(): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (prometheus.exitCode !== null) throw new Error(`prometheus exited with ${prometheus.exitCode}: ${output}`);
    try {
      if ((await query('trine_node_info')).length > 0) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`prometheus scraped nothing within a minute: ${output}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

beforeAll(async () => {
  ensurePrometheus();
  node = await startTestNode(['--master-key', 'a-master-key-for-the-scrape-test']);
  await node.client.index('books').addDocuments([{ id: 1, title: 'Dune' }, { id: 2, title: 'Emma' }]).waitTask();
  const key = await node.client.createKey({ actions: ['metrics.get'], indexes: ['*'], expiresAt: null });
  const addr = `127.0.0.1:${await freePort()}`;
  promUrl = `http://${addr}`;
  prometheus = spawn('bash', [join(ROOT, 'cluster/monitor.sh')], {
    env: {
      ...process.env,
      TRINE_PROMETHEUS_ADDR: addr,
      TRINE_PROMETHEUS_DATA: dataDir,
      TRINE_MONITOR_TARGETS: new URL(node.url).host,
      TRINE_METRICS_KEY: key.key,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  prometheus.stdout!.on('data', (d) => (output += d));
  prometheus.stderr!.on('data', (d) => (output += d));
  await firstScrape();
}, 120_000);

afterAll(async () => {
  // monitor.sh execs prometheus: this is its pid.
  if (prometheus && prometheus.exitCode === null) {
    const exited = new Promise((r) => prometheus.once('exit', r));
    prometheus.kill('SIGTERM');
    await exited;
  }
  await node?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Prometheus scraping a node', () => {
  it('reaches the node with the metrics key and finds it healthy', async () => {
    const r = await fetch(`${promUrl}/api/v1/targets`);
    const targets = ((await r.json()) as { data: { activeTargets: { health: string; lastError: string; scrapeUrl: string }[] } }).data.activeTargets;
    expect(targets).toHaveLength(1);
    expect(targets[0]!.scrapeUrl).toBe(`${node.url}/metrics`);
    expect(targets[0]!.lastError).toBe('');
    expect(targets[0]!.health).toBe('up');
  });

  it('answers instant queries over trine_ metrics with the node\'s data', async () => {
    const families = await query('count by (__name__) ({__name__=~"trine_.+"})');
    expect(families.length).toBeGreaterThan(40);
    const docs = await query('trine_index_documents{index="books"}');
    expect(docs.map((v) => v.value[1])).toEqual(['2']);
    expect(docs[0]!.metric.job).toBe('trine');
    const leader = await query('trine_raft_role{role="leader"}');
    expect(leader.map((v) => v.value[1])).toEqual(['1']);
    const indexed = await query('sum(trine_documents_indexed_total)');
    expect(indexed.map((v) => v.value[1])).toEqual(['2']);
  });
});
