import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { READ_PATHS, type ReadPath } from '../replication/consistent-reads.js';
import { VERSION } from '../version.js';

/** Every metric this server exports starts with it, process metrics included. */
export const METRIC_PREFIX = 'trine_';

let processRegistry: Registry | null = null;

/**
 * Process metrics (CPU, RSS, heap, GC, event-loop lag, open files) describe the process, not a
 * node: tests run several nodes in one process, and prom-client's collectors install observers
 * that are never removed, so they are registered once per process and shared.
 */
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: METRIC_PREFIX, eventLoopMonitoringPrecision: 10 });
    // Gauges named like counters break the naming rules (promtool flags them); each is the sum
    // of a gauge that prom-client also exports by type (`trine_nodejs_active_handles{type}`...).
    for (const name of ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total']) {
      processRegistry.removeSingleMetric(`${METRIC_PREFIX}${name}`);
    }
  }
  return processRegistry;
}

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
// Tasks range from a millisecond (an empty settings update) to many minutes (a large re-index).
const TASK_BUCKETS = [0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600];

/** Labels that hold an index uid; their series are dropped when the index goes away. */
type IndexLabelled = { remove(labels: { index: string }): void };

/**
 * The instruments of one node. Counters and histograms are updated where things happen; gauges
 * that mirror state are filled in when scraped (see `sources.ts`), so they cost nothing between
 * scrapes and are never stale.
 */
export class Metrics {
  readonly registry = new Registry();

  readonly nodeInfo = this.gauge('node_info', 'Always 1; labels name the node and its version', ['node_id', 'version']);

  // HTTP. `route` is the route's URL template (or "unmatched"), never the raw URL.
  readonly httpRequests = this.counter('http_requests_total', 'HTTP requests answered', ['method', 'route', 'status']);
  readonly httpDuration = this.histogram('http_request_duration_seconds', 'Time from receiving an HTTP request to finishing its response', ['method', 'route', 'status'], LATENCY_BUCKETS);
  readonly httpInFlight = this.gauge('http_requests_in_flight', 'HTTP requests being answered', []);

  // Search.
  readonly searchDuration = this.histogram('search_duration_seconds', 'Time to answer a search on an existing index, by index uid', ['index'], LATENCY_BUCKETS);

  // Indexes.
  readonly indexDocuments = this.gauge('index_documents', 'Documents stored in the index', ['index']);
  readonly vectorGraphPending = this.gauge(
    'vector_graph_pending_vectors',
    'Vectors stored but not yet linked into the approximate search graph (searched exactly meanwhile)',
    ['index'],
  );
  readonly indexSize = this.gauge('index_size_bytes', 'Approximate size on disk of the index', ['index']);
  readonly databaseSize = this.gauge('database_size_bytes', 'Size on disk of the node\'s database', []);
  readonly documentsIndexed = this.counter('documents_indexed_total', 'Documents added or updated by succeeded tasks', ['index']);
  readonly documentsDeleted = this.counter('documents_deleted_total', 'Documents deleted by succeeded tasks', ['index']);

  // Tasks.
  readonly tasks = this.gauge('tasks', 'Tasks held by the node, by type and status', ['type', 'status']);
  readonly tasksEnqueued = this.counter('tasks_enqueued_total', 'Tasks registered in the log and applied by this node', ['type']);
  readonly tasksFinished = this.counter('tasks_finished_total', 'Tasks that reached a final status on this node', ['type', 'status']);
  readonly taskDuration = this.histogram('task_duration_seconds', 'Processing time of succeeded and failed tasks (the time of the batch that held them)', ['type'], TASK_BUCKETS);
  readonly taskWait = this.histogram('task_wait_seconds', 'Time tasks waited in the queue, from enqueuedAt to startedAt', ['type'], TASK_BUCKETS);
  readonly batchDuration = this.histogram('batch_duration_seconds', 'Processing time of batches', [], TASK_BUCKETS);

  // Raft.
  readonly raftRole = this.gauge('raft_role', '1 for the role this node has now, 0 for the others', ['role']);
  readonly raftTerm = this.gauge('raft_term', 'Current Raft term', []);
  readonly raftCommitIndex = this.gauge('raft_commit_index', 'Highest log index known to be committed', []);
  readonly raftAppliedIndex = this.gauge('raft_applied_index', 'Highest log index applied to this node\'s state', []);
  readonly raftLastIndex = this.gauge('raft_last_index', 'Last index of this node\'s log', []);
  readonly raftLag = this.gauge(
    'raft_replication_lag_entries',
    'Log entries a follower lacks, as the leader sees it (exported by the leader only)',
    ['peer'],
  );
  readonly raftLeaderChanges = this.counter('raft_leader_changes_total', 'Times this node saw a new leader', []);
  readonly raftElections = this.counter('raft_elections_total', 'Elections this node started as a candidate', []);
  readonly raftAppendEntries = this.histogram('raft_append_entries_duration_seconds', 'Round trip of a batch of Raft messages (AppendEntries, heartbeats, votes) sent to a peer', [], LATENCY_BUCKETS);
  readonly snapshotsSent = this.counter('raft_snapshots_sent_total', 'Snapshots streamed to followers, by outcome', ['result']);
  readonly snapshotsInstalled = this.counter('raft_snapshots_installed_total', 'Snapshots from the leader installed on this node', []);

  // Consistent reads and lag.
  readonly readWaits = this.counter(
    'read_barrier_waits_total',
    'Reads that waited to reflect every write the cluster reported done, by outcome (ok, timeout) and by what they waited for (lease: a follower\'s own log under its read lease; read_index: the leader\'s commit index)',
    ['outcome', 'via'],
  );
  readonly readWaitDuration = this.histogram('read_barrier_wait_seconds', 'Time a read waited to reflect every write the cluster reported done', [], LATENCY_BUCKETS);
  readonly replicaLagEntries = this.gauge('replica_lag_entries', 'Log entries between the leader\'s commit index and what this node reflects', []);
  readonly replicaLagSeconds = this.gauge('replica_lag_seconds', 'How long the oldest entry or finished batch this node has yet to reflect has been waiting here', []);
  readonly nodeReady = this.gauge('node_ready', '1 while GET /cluster/health answers 200 (a quorum in reach, lag within bounds), else 0', []);

  // gRPC, client side: every call this node made to another.
  readonly grpcCalls = this.counter('grpc_client_calls_total', 'gRPC calls to other nodes, by method and status code', ['method', 'code']);
  readonly grpcDuration = this.histogram('grpc_client_call_duration_seconds', 'Duration of gRPC calls to other nodes', ['method'], LATENCY_BUCKETS);

  // gRPC, server side: every call another node made to this one.
  readonly grpcServed = this.counter('grpc_server_calls_total', 'gRPC calls served to other nodes, by method and status code', ['method', 'code']);
  readonly grpcServedDuration = this.histogram('grpc_server_call_duration_seconds', 'Duration of gRPC calls served to other nodes', ['method'], LATENCY_BUCKETS);

  private readonly indexLabelled: IndexLabelled[] = [this.searchDuration, this.documentsIndexed, this.documentsDeleted];
  private readonly seenIndexes = new Set<string>();
  /** Whether an index uid may become a label value: only existing indexes, so the set stays bounded. */
  indexExists: (uid: string) => boolean = () => false;

  constructor(nodeId: string) {
    this.nodeInfo.set({ node_id: nodeId, version: VERSION.pkgVersion }, 1);
    for (const result of ['ok', 'failed']) this.snapshotsSent.inc({ result }, 0);
    for (const outcome of ['ok', 'timeout']) for (const via of READ_PATHS) this.readWaits.inc({ outcome, via }, 0);
    processMetrics();
  }

  private counter<L extends string>(name: string, help: string, labelNames: L[]): Counter<L> {
    return new Counter({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers: [this.registry] });
  }

  private histogram<L extends string>(name: string, help: string, labelNames: L[], buckets: number[]): Histogram<L> {
    return new Histogram({ name: `${METRIC_PREFIX}${name}`, help, labelNames, buckets, registers: [this.registry] });
  }

  private gauge<L extends string>(name: string, help: string, labelNames: L[]): Gauge<L> {
    return new Gauge({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers: [this.registry] });
  }

  /** Records one search's latency; searches on an index that does not exist are not recorded. */
  observeSearch(index: string, seconds: number): void {
    if (!this.indexExists(index)) return;
    this.seenIndexes.add(index);
    this.searchDuration.observe({ index }, seconds);
  }

  /** Starts timing a search; call the returned function once the answer is ready. */
  searchTimer(index: string): () => void {
    const started = process.hrtime.bigint();
    return () => this.observeSearch(index, Number(process.hrtime.bigint() - started) / 1e9);
  }

  /** Counts documents written by a task into an existing index. */
  countDocuments(kind: 'indexed' | 'deleted', index: string, n: number): void {
    if (n <= 0 || !this.indexExists(index)) return;
    this.seenIndexes.add(index);
    (kind === 'indexed' ? this.documentsIndexed : this.documentsDeleted).inc({ index }, n);
  }

  /** Drops the series of indexes that no longer exist (deleted or renamed). */
  pruneIndexes(): void {
    for (const index of [...this.seenIndexes]) {
      if (this.indexExists(index)) continue;
      this.seenIndexes.delete(index);
      for (const m of this.indexLabelled) m.remove({ index });
    }
  }

  /** One read that waited to be consistent. */
  observeReadWait(outcome: 'ok' | 'timeout', seconds: number, via: ReadPath): void {
    this.readWaits.inc({ outcome, via });
    this.readWaitDuration.observe(seconds);
  }

  /** One gRPC call served to another node. */
  observeGrpcServed(method: string, code: string, seconds: number): void {
    this.grpcServed.inc({ method, code });
    this.grpcServedDuration.observe({ method }, seconds);
  }

  /** One outgoing gRPC call, as reported by the transport. */
  observeGrpcCall(method: string, code: string, seconds: number): void {
    this.grpcCalls.inc({ method, code });
    this.grpcDuration.observe({ method }, seconds);
    if (method === 'Send') this.raftAppendEntries.observe(seconds);
    if (method === 'InstallSnapshot') this.snapshotsSent.inc({ result: code === 'OK' ? 'ok' : 'failed' });
  }

  /** The text exposition of this node's metrics followed by the process's. */
  async expose(): Promise<{ contentType: string; body: string }> {
    const [node, proc] = await Promise.all([this.registry.metrics(), processMetrics().metrics()]);
    return { contentType: this.registry.contentType, body: `${node}\n${proc}` };
  }
}
