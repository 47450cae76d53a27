import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, freePort, startTestNode, tempDir, type TestNode } from '../helpers/node.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text exposition into samples (comments skipped). */
export function parseExposition(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export async function scrape(url: string, apiKey?: string): Promise<{ status: number; contentType: string | null; text: string }> {
  const r = await fetch(`${url}/metrics`, apiKey ? { headers: { Authorization: `Bearer ${apiKey}` } } : {});
  return { status: r.status, contentType: r.headers.get('content-type'), text: await r.text() };
}

/** The value of the one sample with this name and (at least) these labels, or undefined. */
export function valueOf(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (hits.length > 1) throw new Error(`${hits.length} samples of ${name} match ${JSON.stringify(labels)}`);
  return hits[0]?.value;
}

/**
 * Runs the project's installer when promtool or prometheus is missing (CI runs as root on
 * Debian), and fails with the reason when that is impossible.
 */
export function ensurePrometheus(): void {
  const r = spawnSync('bash', [join(ROOT, 'cluster/ensure-prometheus.sh')], { encoding: 'utf8' });
  if (r.status !== 0) {
    throw new Error(`prometheus and promtool are required by this test and could not be installed: ${r.stderr || r.error?.message}`);
  }
}

/** Runs promtool with input on stdin; returns its exit status and output. */
export function promtool(args: string[], input?: string): { status: number; output: string } {
  const r = spawnSync('promtool', args, { input, encoding: 'utf8' });
  return { status: r.status ?? -1, output: `${r.stdout}${r.stderr}` };
}

// ---- Dashboards ------------------------------------------------------------------------------

export const DASHBOARDS = join(ROOT, 'grafana/dashboards');

export interface DashboardQuery {
  dashboard: string;
  where: string;
  expr: string;
}

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}

/** Every PromQL expression of every dashboard: panel targets and variable queries. */
export function dashboardQueries(): DashboardQuery[] {
  const out: DashboardQuery[] = [];
  for (const file of readdirSync(DASHBOARDS).filter((f) => f.endsWith('.json'))) {
    const d = JSON.parse(readFileSync(join(DASHBOARDS, file), 'utf8')) as {
      panels?: Panel[];
      templating?: { list?: { name: string; type: string; query?: string | { query?: string } }[] };
    };
    const walk = (panels: Panel[]) => {
      for (const p of panels) {
        for (const t of p.targets ?? []) if (t.expr) out.push({ dashboard: file, where: `panel "${p.title}"`, expr: t.expr });
        walk(p.panels ?? []);
      }
    };
    walk(d.panels ?? []);
    for (const v of d.templating?.list ?? []) {
      if (v.type !== 'query') continue;
      const q = typeof v.query === 'string' ? v.query : v.query?.query;
      if (q) out.push({ dashboard: file, where: `variable $${v.name}`, expr: q });
    }
  }
  return out;
}

/**
 * Turns a Grafana query into plain PromQL: `label_values(selector, label)` becomes its selector,
 * range variables a duration, other variables a regex matching anything.
 */
export function toPromql(expr: string): string {
  const lv = /^\s*label_values\((.*),\s*[a-zA-Z_][a-zA-Z0-9_]*\s*\)\s*$/s.exec(expr);
  const q = lv ? lv[1]! : expr;
  return q.replace(/\$__(rate_interval|interval|range)\b/g, '5m').replace(/\$\{?[a-zA-Z_][a-zA-Z0-9_]*(?::[a-z]+)?\}?/g, '.*');
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'inf', 'nan']);

/** Metric names a PromQL expression reads (functions, keywords, labels and literals left out). */
export function metricNames(promql: string): string[] {
  const s = promql
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\boffset\s+\S+/g, ' ')
    .replace(/(?<![a-zA-Z_:0-9])\d[\d.]*(?:e[+-]?\d+)?/gi, ' ');
  const names = new Set<string>();
  for (const m of s.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*(?=\s*(\(?))/g)) {
    if (m[1] === '(' || KEYWORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}

// ---- A three-node cluster in this process -----------------------------------------------------

export interface TestCluster {
  nodes: TestNode[];
  leader(): TestNode;
  followers(): TestNode[];
  close(): Promise<void>;
}

async function until(what: string, ok: () => boolean, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Three real nodes (RocksDB, HTTP, gRPC Raft transport) in this process; resolves once one leads. */
export async function startCluster(extra: string[] = []): Promise<TestCluster> {
  const ids = ['n1', 'n2', 'n3'];
  const raftPorts = await Promise.all(ids.map(() => freePort()));
  const peers = ids.map((id, i) => `${id}=127.0.0.1:${raftPorts[i]}`).join(',');
  const nodes = await Promise.all(
    ids.map((id, i) =>
      startTestNode(['--node-id', id, '--raft-addr', `127.0.0.1:${raftPorts[i]}`, '--peers', peers, ...extra], tempDir(`trine-metrics-${id}-`)),
    ),
  );
  const cluster: TestCluster = {
    nodes,
    leader: () => {
      const l = nodes.find((n) => n.node.ctx.replicator.isLeader());
      if (!l) throw new Error('no leader');
      return l;
    },
    followers: () => nodes.filter((n) => !n.node.ctx.replicator.isLeader()),
    close: async () => {
      await Promise.all(nodes.map((n) => n.close()));
    },
  };
  await until('a leader known to every node', () => nodes.some((n) => n.node.ctx.replicator.isLeader()) && nodes.every((n) => n.node.ctx.replicator.status().self.leader !== null));
  return cluster;
}

export { until };

/** `promtool check metrics` over a scrape; its lint findings are part of the output. */
export function checkMetrics(text: string): { status: number; output: string } {
  return promtool(['check', 'metrics'], text);
}

/** Writes recording rules for the expressions and asks promtool to parse them. */
export function checkExpressions(exprs: string[]): { status: number; output: string } {
  const dir = tempDir('trine-rules-');
  try {
    const rules = exprs.map((e, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(e)}`).join('\n');
    const file = join(dir, 'rules.yml');
    writeFileSync(file, `groups:\n  - name: dashboards\n    rules:\n${rules}\n`);
    return promtool(['check', 'rules', file]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
