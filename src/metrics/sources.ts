import type { FastifyInstance } from 'fastify';
import type { Engine } from '../engine/engine.js';
import { vectorPartOf } from '../engine/vector/semantic-search.js';
import type { SoftState, Status } from '../raft/core/index.js';
import type { BatchRecord } from '../tasks/batch.js';
import type { Executor } from '../tasks/executor.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import { TASK_STATUSES, TASK_TYPES, type TaskRecord } from '../tasks/task.js';
import type { Metrics } from './metrics.js';

/** The parts of a Raft node the metrics read. */
export interface RaftSource {
  /** The core's status, or null before the node started. */
  status(): Status | null;
  /** Highest log index applied to the node's state (tasks and indexes). */
  appliedIndex(): number;
  /** How far behind the leader the node is, and whether the balancer should use it. */
  readiness?(): { ready: boolean; lag: { entries: number; ms: number } };
}

/** What the driver reports as it changes role or leader. */
export interface SoftStateSource {
  on(event: 'softState', fn: (s: SoftState) => void): unknown;
}

/** The route label of requests no route matched (404s, preflights of unknown paths). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Counts and times every HTTP response by method, route template and status. The template
 * (`/indexes/:indexUid/documents`), not the URL, keeps the label set bounded.
 */
export function instrumentHttp(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onRequest', (_req, reply, done) => {
    metrics.httpInFlight.inc();
    // `close` follows `finish`, and also comes alone when the client goes away mid-request.
    reply.raw.once('close', () => metrics.httpInFlight.dec());
    done();
  });
  app.addHook('onResponse', (req, reply, done) => {
    const labels = { method: req.method, route: req.routeOptions.url ?? UNMATCHED_ROUTE, status: String(reply.statusCode) };
    metrics.httpRequests.inc(labels);
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000);
    done();
  });
}

const RAFT_ROLES = ['leader', 'follower', 'preCandidate', 'candidate', 'learner'] as const;

function num(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** Index gauges are read from the engine at scrape time, so a deleted index simply disappears. */
export function connectEngine(m: Metrics, engine: Engine): void {
  m.indexExists = (uid) => engine.indexes.has(uid);
  setCollect(m.indexDocuments, () => {
    m.indexDocuments.reset();
    for (const h of engine.indexes.values()) m.indexDocuments.set({ index: h.uid }, h.meta.docCount);
  });
  setCollect(m.vectorGraphPending, () => {
    m.vectorGraphPending.reset();
    for (const h of engine.indexes.values()) {
      const part = vectorPartOf(h);
      if (!part) continue;
      let pending = 0;
      for (const e of part.embedders.values()) pending += e.graphPending();
      m.vectorGraphPending.set({ index: h.uid }, pending);
    }
  });
  setCollect(m.indexSize, async () => {
    const sizes = await Promise.all([...engine.indexes.values()].map(async (h) => [h.uid, await engine.indexSize(h)] as const));
    m.indexSize.reset();
    for (const [index, bytes] of sizes) m.indexSize.set({ index }, bytes);
  });
  setCollect(m.databaseSize, async () => m.databaseSize.set(await engine.diskSize()));
}

/** Counts finished tasks and indexed documents as batches end; the task gauge is read at scrape time. */
export function connectTasks(m: Metrics, queue: TaskQueue, executor: Executor): void {
  setCollect(m.tasks, () => {
    const counts = new Map<string, number>();
    for (const t of queue.tasks.values()) {
      const k = `${t.type}\0${t.status}`;
      counts.set(k, (counts.get(k) ?? 0) + 1);
    }
    m.tasks.reset();
    // Every combination is written, zeros included, so that a status that empties reads 0, not absent.
    for (const type of TASK_TYPES) {
      for (const status of TASK_STATUSES) m.tasks.set({ type, status }, counts.get(`${type}\0${status}`) ?? 0);
    }
  });
  executor.on('batch', (b) => recordBatch(m, queue, b));
}

function recordBatch(m: Metrics, queue: TaskQueue, b: BatchRecord): void {
  const finished: TaskRecord[] = [];
  for (const uid of b.taskUids) {
    const t = queue.get(uid);
    if (!t) continue;
    finished.push(t);
    // A cancelation finishes the tasks it canceled too; they are not part of its batch.
    if (t.type === 'taskCancelation') {
      for (const u of t.matched ?? []) {
        const c = queue.get(u);
        if (c && c.status === 'canceled' && c.canceledBy === t.uid) finished.push(c);
      }
    }
  }
  for (const t of finished) {
    m.tasksFinished.inc({ type: t.type, status: t.status });
    if (t.status !== 'succeeded' && t.status !== 'failed') continue;
    if (t.startedAt !== null && t.finishedAt !== null) {
      m.taskDuration.observe({ type: t.type }, Math.max(0, t.finishedAt - t.startedAt) / 1000);
      m.taskWait.observe({ type: t.type }, Math.max(0, t.startedAt - t.enqueuedAt) / 1000);
    }
    if (t.status === 'succeeded' && t.indexUid !== null) {
      m.countDocuments('indexed', t.indexUid, num(t.details?.indexedDocuments));
      m.countDocuments('deleted', t.indexUid, num(t.details?.deletedDocuments));
    }
  }
  if (b.finishedAt !== null) m.batchDuration.observe(Math.max(0, b.finishedAt - b.startedAt) / 1000);
  m.pruneIndexes();
}

/** A task registered by the log (on every node, as it applies the entry). */
export function countEnqueued(m: Metrics, task: TaskRecord): void {
  m.tasksEnqueued.inc({ type: task.type });
}

/** Raft state is read at scrape time; role and leader changes are counted as they happen. */
export function connectRaft(m: Metrics, raft: RaftSource): void {
  // The role gauge is registered first of the Raft gauges, and prom-client calls collect
  // functions in registration order: filling them all here keeps one scrape consistent.
  setCollect(m.raftRole, () => {
    const st = raft.status();
    if (!st) return;
    const role = st.role === 'follower' && st.confState.learners.includes(st.id) ? 'learner' : st.role;
    for (const r of RAFT_ROLES) m.raftRole.set({ role: r }, r === role ? 1 : 0);
    m.raftTerm.set(st.term);
    m.raftCommitIndex.set(st.commit);
    m.raftAppliedIndex.set(raft.appliedIndex());
    m.raftLastIndex.set(st.lastIndex);
    m.raftLag.reset();
    // Progress is tracked by the leader only; followers export no lag.
    for (const [peer, pr] of Object.entries(st.progress)) {
      if (peer !== st.id) m.raftLag.set({ peer }, Math.max(0, st.lastIndex - pr.match));
    }
    const r = raft.readiness?.();
    if (r) {
      m.replicaLagEntries.set(r.lag.entries);
      m.replicaLagSeconds.set(r.lag.ms / 1000);
      m.nodeReady.set(r.ready ? 1 : 0);
    }
  });
}

/** Counts elections and leader changes from the driver's role changes. */
export function connectSoftState(m: Metrics, driver: SoftStateSource, initialLead = ''): void {
  let lastLead = initialLead;
  let lastRole = '';
  driver.on('softState', (s) => {
    // Only changes between two Readys are reported: a node may turn candidate and win within
    // one, so becoming leader from anything but candidate also means it ran an election.
    const campaigned = s.role === 'candidate' || s.role === 'leader';
    if (campaigned && lastRole !== 'candidate' && lastRole !== 'leader') m.raftElections.inc();
    if (s.lead !== '' && s.lead !== lastLead) {
      m.raftLeaderChanges.inc();
      lastLead = s.lead;
    }
    lastRole = s.role;
  });
}

/** Installs a collect callback after construction (prom-client reads `collect` at scrape time). */
function setCollect(metric: object, fn: () => void | Promise<void>): void {
  (metric as { collect?: () => void | Promise<void> }).collect = fn;
}
