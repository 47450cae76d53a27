// GET /metrics on a real node: every family moves with what the node did, labels stay bounded
// (route templates, existing indexes only), and deleted indexes leave no series behind.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { parseExposition, scrape, valueOf, type Sample } from './helpers.js';

let n: TestNode;

async function samples(): Promise<Sample[]> {
  const r = await scrape(n.url);
  expect(r.status).toBe(200);
  return parseExposition(r.text);
}

beforeAll(async () => {
  n = await startTestNode();
  const movies = n.client.index('movies');
  await movies.addDocuments([{ id: 1, title: 'Carol' }, { id: 2, title: 'Heat' }, { id: 3, title: 'Ran' }]).waitTask();
  await movies.addDocuments([{ id: 4, title: 'Alien' }, { id: 5, title: 'Brazil' }]).waitTask();
  await movies.deleteDocument(2).waitTask();
  // Creating an index that exists fails inside its task, as in the reference.
  await n.client.createIndex('movies').waitTask();
  expect((await fetch(`${n.url}/indexes/movies/documents/1`)).status).toBe(200);
  expect((await fetch(`${n.url}/indexes/movies/documents/404`)).status).toBe(404);
  expect((await fetch(`${n.url}/no/such/route`)).status).toBe(404);
});

afterAll(async () => {
  await n?.close();
});

describe('GET /metrics with a master key', () => {
  it('needs a key holding the metrics.get action', async () => {
    const masterKey = 'a-master-key-of-some-length';
    const secured = await startTestNode(['--master-key', masterKey]);
    try {
      expect((await scrape(secured.url)).status).toBe(401);
      const keys = secured.client;
      const reader = await keys.createKey({ actions: ['metrics.get'], indexes: ['*'], expiresAt: null });
      const searcher = await keys.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null });
      expect((await scrape(secured.url, searcher.key)).status).toBe(403);
      const ok = await scrape(secured.url, reader.key);
      expect(ok.status).toBe(200);
      expect(ok.text).toContain('trine_node_info');
      expect((await scrape(secured.url, masterKey)).status).toBe(200);
    } finally {
      await secured.close();
    }
  });
});

describe('GET /metrics', () => {
  it('answers the Prometheus text format and is declared with the metrics.get action', async () => {
    const r = await scrape(n.url);
    expect(r.status).toBe(200);
    expect(r.contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(n.node.app.routeDocs.find((x) => x.method === 'GET' && x.url === '/metrics')?.action).toBe('metrics.get');
    const names = new Set(parseExposition(r.text).map((s) => s.name));
    for (const name of names) expect(name).toMatch(/^trine_/);
  });

  it('counts HTTP requests by route template and status, never by raw URL', async () => {
    const s = await samples();
    const route = '/indexes/:indexUid/documents/:documentId';
    expect(valueOf(s, 'trine_http_requests_total', { method: 'GET', route, status: '200' })).toBe(1);
    expect(valueOf(s, 'trine_http_requests_total', { method: 'GET', route, status: '404' })).toBe(1);
    expect(valueOf(s, 'trine_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' })).toBe(1);
    expect(valueOf(s, 'trine_http_request_duration_seconds_count', { method: 'GET', route, status: '200' })).toBe(1);
    const routes = new Set(s.filter((x) => x.labels.route !== undefined).map((x) => x.labels.route!));
    for (const r of routes) expect(r === 'unmatched' || n.node.app.routeDocs.some((x) => x.url === r)).toBe(true);
    expect([...routes].some((r) => r.includes('movies'))).toBe(false);
  });

  it('mirrors documents, sizes and indexing throughput per index', async () => {
    const s = await samples();
    expect(valueOf(s, 'trine_index_documents', { index: 'movies' })).toBe(4);
    expect(valueOf(s, 'trine_documents_indexed_total', { index: 'movies' })).toBe(5);
    expect(valueOf(s, 'trine_documents_deleted_total', { index: 'movies' })).toBe(1);
    expect(valueOf(s, 'trine_index_size_bytes', { index: 'movies' })).toBeGreaterThan(0);
    expect(valueOf(s, 'trine_database_size_bytes')).toBeGreaterThan(0);
  });

  it('counts tasks enqueued and finished by type and status, and times them', async () => {
    const s = await samples();
    const add = 'documentAdditionOrUpdate';
    expect(valueOf(s, 'trine_tasks_enqueued_total', { type: add })).toBe(2);
    expect(valueOf(s, 'trine_tasks_enqueued_total', { type: 'indexCreation' })).toBe(1);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: add, status: 'succeeded' })).toBe(2);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'documentDeletion', status: 'succeeded' })).toBe(1);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'indexCreation', status: 'failed' })).toBe(1);
    expect(valueOf(s, 'trine_tasks', { type: add, status: 'succeeded' })).toBe(2);
    expect(valueOf(s, 'trine_tasks', { type: 'indexCreation', status: 'failed' })).toBe(1);
    expect(valueOf(s, 'trine_tasks', { type: add, status: 'enqueued' })).toBe(0);
    expect(valueOf(s, 'trine_task_duration_seconds_count', { type: add })).toBe(2);
    expect(valueOf(s, 'trine_task_wait_seconds_count', { type: add })).toBe(2);
    expect(valueOf(s, 'trine_batch_duration_seconds_count')).toBe(4);
  });

  it('exports the Raft state of a single node as the leader of a group of one', async () => {
    const s = await samples();
    expect(valueOf(s, 'trine_raft_role', { role: 'leader' })).toBe(1);
    for (const role of ['follower', 'preCandidate', 'candidate', 'learner']) expect(valueOf(s, 'trine_raft_role', { role })).toBe(0);
    expect(valueOf(s, 'trine_raft_term')).toBeGreaterThanOrEqual(1);
    expect(valueOf(s, 'trine_raft_leader_changes_total')).toBe(1);
    expect(valueOf(s, 'trine_raft_elections_total')).toBe(1);
    const applied = valueOf(s, 'trine_raft_applied_index')!;
    expect(applied).toBe(n.node.ctx.replicator.status().self.appliedIndex);
    expect(valueOf(s, 'trine_raft_commit_index')).toBeGreaterThanOrEqual(applied);
    expect(valueOf(s, 'trine_raft_last_index')).toBeGreaterThanOrEqual(valueOf(s, 'trine_raft_commit_index')!);
    expect(s.some((x) => x.name === 'trine_raft_replication_lag_entries')).toBe(false);
    expect(valueOf(s, 'trine_raft_snapshots_installed_total')).toBe(0);
    expect(valueOf(s, 'trine_node_info', { node_id: 'n1' })).toBe(1);
  });

  it('exports process metrics under the same prefix', async () => {
    const s = await samples();
    expect(valueOf(s, 'trine_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(valueOf(s, 'trine_nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(valueOf(s, 'trine_process_open_fds')).toBeGreaterThan(0);
    expect(valueOf(s, 'trine_nodejs_eventloop_lag_p99_seconds')).toBeGreaterThanOrEqual(0);
  });

  it('shows how many vectors the approximate graph has yet to link, down to 0 once it is built', async () => {
    const vecs = n.client.index('vecs');
    await vecs.updateEmbedders({ e: { source: 'userProvided', dimensions: 3 } }).waitTask();
    // Small sets are searched exactly and need no graph; past 4096 vectors one is built.
    const docs = Array.from({ length: 4200 }, (_, i) => ({ id: i, _vectors: { e: [Math.cos(i), Math.sin(i), (i % 7) / 7] } }));
    await vecs.addDocuments(docs).waitTask();
    let pending = valueOf(await samples(), 'trine_vector_graph_pending_vectors', { index: 'vecs' });
    expect(pending).toBeDefined();
    for (let i = 0; i < 300 && pending !== 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pending = valueOf(await samples(), 'trine_vector_graph_pending_vectors', { index: 'vecs' });
    }
    expect(pending).toBe(0);
    expect(valueOf(await samples(), 'trine_vector_graph_pending_vectors', { index: 'movies' })).toBe(0);
  }, 60_000);

  it('records search latency for existing indexes only', async () => {
    const m = n.node.ctx.metrics;
    m.searchTimer('movies')();
    m.observeSearch('no-such-index', 0.01);
    const s = await samples();
    expect(valueOf(s, 'trine_search_duration_seconds_count', { index: 'movies' })).toBeGreaterThanOrEqual(1);
    expect(s.some((x) => x.labels.index === 'no-such-index')).toBe(false);
  });

  it('drops every series of an index once it is deleted', async () => {
    await n.client.index('movies').delete().waitTask();
    const s = await samples();
    expect(s.filter((x) => x.labels.index === 'movies')).toEqual([]);
    expect(valueOf(s, 'trine_tasks_finished_total', { type: 'indexDeletion', status: 'succeeded' })).toBe(1);
  });
});
