// The Grafana dashboards against a live three-node cluster: every query parses (promtool), and
// every metric it reads is one the nodes export, with samples, after writes and searches.
// promtool also lints each node's exposition.

import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/node.js';
import {
  DASHBOARDS,
  checkExpressions,
  checkMetrics,
  dashboardQueries,
  ensurePrometheus,
  metricNames,
  parseExposition,
  scrape,
  startCluster,
  toPromql,
  until,
  type TestCluster,
} from './helpers.js';

let cluster: TestCluster;
const scrapes: string[] = [];
let writer = -1;

beforeAll(async () => {
  ensurePrometheus();
  cluster = await startCluster();
  // Written through a follower: forwarded to the leader, replicated, applied everywhere.
  const follower = cluster.followers()[0]!;
  writer = cluster.nodes.indexOf(follower);
  const books = follower.client.index('books');
  await books.addDocuments([{ id: 1, title: 'Dune' }, { id: 2, title: 'Emma' }, { id: 3, title: 'Ulysses' }]).waitTask();
  await books.deleteDocument(3).waitTask();
  await cluster.leader().client.createIndex('books').waitTask(); // fails: the index exists
  for (const n of cluster.nodes) {
    await until('the documents on every node', () => n.node.ctx.engine.indexes.get('books')?.meta.docCount === 2);
    const r = await fetch(`${n.url}/indexes/books/search`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: '{"q":"dune"}' });
    expect(r.status).toBe(200);
  }
  for (const n of cluster.nodes) {
    const r = await scrape(n.url);
    expect(r.status).toBe(200);
    scrapes.push(r.text);
  }
});

afterAll(async () => {
  await cluster?.close();
});

describe('metric names in PromQL', () => {
  it('are told apart from functions, keywords, labels, literals and Grafana variables', () => {
    const q = toPromql(
      'histogram_quantile(0.99, sum by (le, instance) (rate(a_seconds_bucket{instance=~"$instance", route=~".*/search"}[$__rate_interval]))) / on(instance) group_left(node_id) b_info offset 5m > bool 2 or c_total unless ignoring(x) vector(1)',
    );
    expect(metricNames(q).sort()).toEqual(['a_seconds_bucket', 'b_info', 'c_total']);
    expect(metricNames(toPromql('label_values(d_info{instance=~"$instance"}, instance)'))).toEqual(['d_info']);
    expect(metricNames('sum(rate(e_total[5m])) by (le) * 1e3 - time()')).toEqual(['e_total']);
  });
});

describe('Grafana dashboards', () => {
  const queries = dashboardQueries();

  it('cover the cluster, search, indexing and resources', () => {
    const files = readdirSync(DASHBOARDS).filter((f) => f.endsWith('.json')).sort();
    expect(files).toEqual(['cluster.json', 'indexing.json', 'resources.json', 'search.json']);
    const uids = files.map((f) => (JSON.parse(readFileSync(join(DASHBOARDS, f), 'utf8')) as { uid: string }).uid);
    expect(new Set(uids).size).toBe(files.length);
    for (const f of files) expect(queries.filter((q) => q.dashboard === f).length).toBeGreaterThan(5);
  });

  it('query only metrics the nodes export, each with samples after writes and searches', () => {
    const exported = new Set(scrapes.flatMap((t) => parseExposition(t).map((s) => s.name)));
    const missing: string[] = [];
    for (const q of queries) {
      const names = metricNames(toPromql(q.expr));
      expect(names.length, `${q.dashboard} ${q.where} reads no metric: ${q.expr}`).toBeGreaterThan(0);
      for (const name of names) if (!exported.has(name)) missing.push(`${q.dashboard} ${q.where}: ${name}`);
    }
    expect(missing).toEqual([]);
  });

  it('show each node\'s lag behind the leader and its consistent-read waits on the cluster dashboard', () => {
    const cluster = queries.filter((q) => q.dashboard === 'cluster.json').flatMap((q) => metricNames(toPromql(q.expr)));
    for (const m of ['trine_replica_lag_entries', 'trine_replica_lag_seconds', 'trine_read_barrier_waits_total', 'trine_read_barrier_wait_seconds_bucket', 'trine_node_ready']) {
      expect(cluster).toContain(m);
    }
  });

  it('hold queries that Prometheus parses', () => {
    const r = checkExpressions(queries.map((q) => toPromql(q.expr)));
    expect(r.output).toContain('SUCCESS');
    expect(r.status).toBe(0);
  });

  it('use the data source chosen in the dashboard, which provisioning makes the local Prometheus', () => {
    for (const f of readdirSync(DASHBOARDS).filter((x) => x.endsWith('.json'))) {
      const text = readFileSync(join(DASHBOARDS, f), 'utf8');
      const uids = new Set([...text.matchAll(/"uid":\s*"([^"]*)"/g)].map((m) => m[1]));
      uids.delete(JSON.parse(text).uid);
      expect([...uids]).toEqual(['${datasource}']);
    }
    const ds = readFileSync(join(ROOT, 'grafana/provisioning/datasources/trine.yml'), 'utf8');
    expect(ds).toMatch(/type: prometheus/);
    expect(ds).toMatch(/isDefault: true/);
    const provider = readFileSync(join(ROOT, 'grafana/provisioning/dashboards/trine.yml'), 'utf8');
    expect(provider).toMatch(/type: file/);
  });
});

describe('exposition of a cluster node', () => {
  it('passes promtool check metrics on every node', () => {
    for (const text of scrapes) {
      const r = checkMetrics(text);
      expect(r.output).toBe('');
      expect(r.status).toBe(0);
    }
  });

  it('shows the leader\'s view of its followers, every node\'s Raft state and its gRPC calls', () => {
    const leader = cluster.nodes.indexOf(cluster.leader());
    scrapes.forEach((text, i) => {
      const s = parseExposition(text);
      const lag = s.filter((x) => x.name === 'trine_raft_replication_lag_entries');
      expect(lag.map((x) => x.labels.peer).sort()).toEqual(i === leader ? cluster.nodes.filter((_, j) => j !== i).map((n) => n.node.ctx.options.nodeId).sort() : []);
      const role = s.find((x) => x.name === 'trine_raft_role' && x.value === 1)?.labels.role;
      expect(role).toBe(i === leader ? 'leader' : 'follower');
      // The leader sends entries with Send calls and followers serve them; small messages
      // (heartbeats, acknowledgements) travel on long-lived streams, counted when they end.
      const metric = i === leader ? 'trine_grpc_client_calls_total' : 'trine_grpc_server_calls_total';
      expect(s.some((x) => x.name === metric && x.labels.method === 'Send' && x.labels.code === 'OK')).toBe(true);
    });
    // Writes through a follower are forwarded to the leader with the cluster service's Propose.
    const forwarded = parseExposition(scrapes[writer]!).find(
      (x) => x.name === 'trine_grpc_client_calls_total' && x.labels.method === 'Propose' && x.labels.code === 'OK',
    );
    expect(forwarded?.value).toBeGreaterThanOrEqual(2);
    // And the leader counts them among the calls it served.
    const served = parseExposition(scrapes[leader]!).find(
      (x) => x.name === 'trine_grpc_server_calls_total' && x.labels.method === 'Propose' && x.labels.code === 'OK',
    );
    expect(served?.value).toBeGreaterThanOrEqual(forwarded!.value);
  });

  it('shows every node\'s lag, whether it is ready for the balancer, and the reads that waited to be consistent', () => {
    const leader = cluster.nodes.indexOf(cluster.leader());
    scrapes.forEach((text, i) => {
      const s = parseExposition(text);
      const value = (name: string, labels: Record<string, string> = {}) =>
        s.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v)).reduce((sum, x) => sum + x.value, 0);
      expect(value('trine_replica_lag_entries')).toBe(0);
      expect(value('trine_replica_lag_seconds')).toBeGreaterThanOrEqual(0);
      expect(value('trine_node_ready')).toBe(1);
      // Each node answered a search and polled tasks: each made them consistent first.
      expect(value('trine_read_barrier_waits_total', { outcome: 'ok' })).toBeGreaterThan(0);
      expect(value('trine_read_barrier_waits_total', { outcome: 'timeout' })).toBe(0);
      expect(value('trine_read_barrier_wait_seconds_count')).toBe(value('trine_read_barrier_waits_total', { outcome: 'ok' }));
      // Followers, their leases renewed every heartbeat, read from their own logs.
      if (i !== leader) expect(value('trine_read_barrier_waits_total', { outcome: 'ok', via: 'lease' })).toBeGreaterThan(0);
    });
  });
});
