import type { FastifyInstance } from 'fastify';
import type { Options } from '../config/options.js';
import { Engine } from '../engine/engine.js';
import { buildApp } from '../http/app.js';
import { httpsServerOptions } from '../http/https.js';
import type { AppContext } from '../http/context.js';
import { RaftReplicator } from '../replication/raft-replicator.js';
import { ConsistentReads } from '../replication/consistent-reads.js';
import { EmbeddingExchange } from '../replication/embedding-exchange.js';
import { embedderEnvironmentOf } from '../config/embedder-environment.js';
import { Scheduler } from '../replication/scheduler.js';
import { RocksStore } from '../store/rocks-store.js';
import { Executor } from '../tasks/executor.js';
import type { ApplyResult } from '../tasks/state-machine.js';
import { TaskStateMachine, type ConfigHandler } from '../tasks/state-machine.js';
import type { KvStore } from '../store/kv.js';
import { ApiError } from '../errors/api-error.js';
import { ExperimentalFeatures } from '../features/experimental-features.js';
import { ensureDefaultKeys, KeyStore } from '../auth/key-store.js';
import { invalidKey } from '../auth/request-auth.js';
import { Metrics } from '../metrics/metrics.js';
import { connectEngine, connectRaft, connectSoftState, connectTasks, countEnqueued } from '../metrics/sources.js';
import { currentAuthority, loggerOr, type ContextLogger } from '../util/request-context.js';
import { TaskQueue } from '../tasks/task-queue.js';
import { isFinished, type TaskRecord } from '../tasks/task.js';
import { BackupOutcomes } from '../backup/outcomes.js';
import { Backups, scheduleSnapshots } from '../backup/runner.js';
import { importAtStart, startupLogger } from '../backup/startup-import.js';
import { WebhookStore, type Webhook } from '../webhooks/webhook-store.js';
import { WebhookDelivery } from '../webhooks/delivery.js';
import { TaskContinuations } from '../network/task-continuations.js';
import { ChatWorkspaces } from '../chat/workspaces.js';
import { NetworkStore } from '../engine/network/network.js';
import { batchTaskViews } from '../tasks/batch.js';
import { LogHub, LogTargets } from '../util/log-hub.js';

/** Bytes written since the last flush above which an idle node flushes its store (see the executor's idle handler). */
const SETTLE_BYTES = 16 * 1024 * 1024;

export interface RunningNode {
  app: FastifyInstance;
  ctx: AppContext;
  /** The address the HTTP API listens on. */
  url: string;
  close(): Promise<void>;
}

export interface NodeDeps {
  configHandlers?: (store: KvStore) => [string, ConfigHandler][];
  /** Where log lines go instead of standard output. */
  logStream?: { write(line: string): void };
  /** Waits between webhook notification attempts (default 1 s then 5 s: three attempts). */
  webhookRetryDelaysMs?: number[];
}

/** Builds a node from the pieces: store, engine, task queue, log, executor, HTTP API. */
export async function startNode(options: Options, deps: NodeDeps = {}): Promise<RunningNode> {
  // Unreadable certificate files stop the start before the database is opened.
  const https = options.ssl ? httpsServerOptions(options.ssl) : undefined;
  // --import-dump / --import-snapshot build the database before it is opened.
  const startLog = startupLogger(options.logLevel, deps.logStream, options.logsMode);
  await importAtStart(options, startLog);
  const store = await RocksStore.open(options.dbPath);
  // Embeddings for indexing come through the log (see docs/vector-search.md).
  const embeddings = new EmbeddingExchange();
  const onRebuilt = (index: string, reason: string) => startLog.warn({ index, reason }, 'search structures found damaged at open were rebuilt from the documents');
  const engine = await Engine.open(store, { embeddings, embedderEnv: embedderEnvironmentOf(options), onRebuilt });
  const queue = new TaskQueue();
  await queue.load(store);
  const sm = new TaskStateMachine(store, queue);
  // Node-wide state kept through the log registers here, before anything is applied.
  const features = new ExperimentalFeatures();
  sm.register(ExperimentalFeatures.COMMAND, features);
  const keys = new KeyStore(options.masterKey);
  sm.register(KeyStore.COMMAND, keys);
  sm.checkAuthority((authority, at) => (keys.authorizes(authority, at) ? null : invalidKey()));
  const backupOutcomes = new BackupOutcomes();
  sm.register(BackupOutcomes.COMMAND, backupOutcomes);
  sm.register(EmbeddingExchange.COMMAND, embeddings);
  const cli = options.taskWebhook;
  const cliWebhook: Webhook | null = cli && { url: cli.url, headers: cli.authorization !== null ? { Authorization: cli.authorization } : {} };
  const webhooks = new WebhookStore(cliWebhook);
  sm.register(WebhookStore.COMMAND, webhooks);
  const chats = new ChatWorkspaces();
  sm.register(ChatWorkspaces.COMMAND, chats);
  sm.register(NetworkStore.COMMAND, engine.network);
  for (const [name, handler] of deps.configHandlers?.(store) ?? []) sm.register(name, handler);
  await sm.loadHandlers(store);

  let app: FastifyInstance | null = null;
  // Lines logged while a request is served go through its child logger and carry its requestId.
  const at = (level: keyof ContextLogger) => (obj: unknown, msg?: string) => {
    if (app) loggerOr(app.log)[level](obj, msg);
  };
  const log: ContextLogger = { error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
  const backups = new Backups({
    options,
    store,
    engine,
    queue,
    outcomes: backupOutcomes,
    configure: (name, op) => ctx.configure(name, op),
    log,
  });
  const executor = new Executor(store, queue, engine, log, backups);
  const metrics = new Metrics(options.nodeId);
  connectEngine(metrics, engine);
  connectTasks(metrics, queue, executor);

  const waiters = new Map<number, Set<(t: TaskRecord) => void>>();
  const notify = () => {
    for (const [uid, fns] of waiters) {
      const t = queue.get(uid);
      if (!t || isFinished(t.status)) {
        waiters.delete(uid);
        for (const fn of fns) fn(t!);
      }
    }
  };

  let scheduler: Scheduler | null = null;
  let continuations: TaskContinuations | null = null;
  const onApplied = (r: ApplyResult) => {
    if (r.kind === 'task') countEnqueued(metrics, r.task);
    scheduler?.poke();
  };
  const replicator = new RaftReplicator({
    options,
    store,
    sm,
    onApplied,
    // A new leader decides the batches its predecessor left undecided, and ends the tasks it left processing.
    onRoleChange: () => {
      scheduler?.poke();
      continuations?.roleChanged();
    },
    onProcessingReport: () => scheduler?.poke(),
    async beforeInstall() {
      embeddings.interruptWaits('a snapshot is being installed');
      await executor.halt();
    },
    async afterInstall() {
      await queue.load(store);
      await engine.load();
      await sm.loadHandlers(store);
      embeddings.resumeWaits();
      executor.resume();
      scheduler?.poke();
      metrics.snapshotsInstalled.inc();
    },
    log,
    onCall: (method, code, seconds) => metrics.observeGrpcCall(method, code, seconds),
    onServed: (method, code, seconds) => metrics.observeGrpcServed(method, code, seconds),
  });
  connectRaft(metrics, {
    status: () => replicator.driver?.status() ?? null,
    appliedIndex: () => replicator.appliedIndex,
    readiness: () => replicator.readiness(),
  });
  embeddings.hooks = {
    isLeader: () => replicator.isLeader(),
    propose: (op) => ctx.configure(EmbeddingExchange.COMMAND, op),
    currentBatch: () => executor.current?.uid ?? null,
    log,
  };
  scheduler = new Scheduler(replicator, queue, executor, (e) => log.error({ err: e }, 'could not decide a batch'), {
    maxTasks: options.taskQueueLimit,
    warn: (msg, fields) => log.warn(fields, msg),
    info: (msg, fields) => log.info(fields, msg),
  });
  const delivery = new WebhookDelivery({
    webhooks: () => webhooks.all(),
    timeoutMs: options.webhookTimeoutMs,
    retryDelaysMs: deps.webhookRetryDelaysMs ?? [1_000, 5_000],
    log,
  });
  continuations = new TaskContinuations({
    engine,
    queue,
    isLeader: () => replicator.isLeader(),
    async resume(taskUid, outcome) {
      await replicator.propose({ kind: 'resume', taskUid, startedAt: Date.now(), outcome });
    },
    log,
  });
  executor.on('batch', (b) => {
    continuations?.batchProcessed(b);
    log.debug({ batchUid: b.uid, taskUids: b.taskUids, durationMs: (b.finishedAt ?? b.startedAt) - b.startedAt }, 'batch processed');
    replicator.batchProcessed();
    notify();
    scheduler?.poke();
    // The leader notifies, once per batch: a batch whose finish time the log had already decided
    // was finished, and notified, by an earlier leader.
    if (replicator.isLeader() && b.decided === false) void delivery.batchFinished(b.uid, batchTaskViews(queue, b));
  });
  executor.on('idle', () => {
    scheduler?.poke();
    // Nothing left to process: what large batches left in the store's memory goes to its
    // files now, rather than being replayed from the write-ahead log after a crash.
    store.settle(SETTLE_BYTES).catch((e: unknown) => log.warn({ err: e }, 'could not flush the store after a batch'));
  });

  const reads = new ConsistentReads(
    { nodeId: options.nodeId, replicator, queue, observe: (outcome, seconds, via) => metrics.observeReadWait(outcome, seconds, via) },
    options.readConsistency,
    options.readTimeoutMs,
  );
  // Every line goes through the hub: standard output (or the given stream) and `/logs/stream`.
  const logs = new LogHub(deps.logStream ?? process.stdout, LogTargets.level(options.logLevel), options.logsMode);
  const ctx: AppContext = {
    options,
    engine,
    queue,
    executor,
    replicator,
    reads,
    features,
    metrics,
    keys,
    webhooks,
    chats,
    logs,
    startedAt: Date.now(),
    async enqueue(spec, payload) {
      const authority = currentAuthority();
      const r = await replicator.propose({ kind: 'enqueue', enqueuedAt: Date.now(), spec, ...(authority !== undefined ? { authority } : {}), ...(payload ? { payload } : {}) });
      if (r.kind === 'refused') throw r.error;
      if (r.kind !== 'task') throw new Error('enqueue did not register a task');
      log.debug({ taskUid: r.task.uid, type: r.task.type, indexUid: r.task.indexUid }, 'task enqueued');
      return r.task;
    },
    async recordTaskNetwork(taskUid, network) {
      // The write is enqueued and answered already: failing to note where it went loses only the note.
      try {
        await replicator.propose({ kind: 'taskNetwork', taskUid, network });
      } catch (e) {
        log.warn({ taskUid, err: e }, 'could not record the network of a task');
      }
    },
    async configure(name, op) {
      const authority = currentAuthority();
      const r = await replicator.propose({ kind: 'config', name, at: Date.now(), op, ...(authority !== undefined ? { authority } : {}) });
      if (r.kind !== 'config') throw new Error('config command was not applied as such');
      if (r.result instanceof ApiError) throw r.result;
      return r.result;
    },
    waitForTask(uid, timeoutMs) {
      const t = queue.get(uid);
      if (!t || isFinished(t.status)) return Promise.resolve(t);
      return new Promise((resolve) => {
        const fns = waiters.get(uid) ?? new Set();
        const timer = setTimeout(() => {
          fns.delete(done);
          resolve(queue.get(uid));
        }, timeoutMs);
        const done = (task: TaskRecord) => {
          clearTimeout(timer);
          resolve(task);
        };
        fns.add(done);
        waiters.set(uid, fns);
      });
    },
  };

  app = await buildApp(ctx, { logStream: logs, ...(https ? { https } : {}) });
  logs.setLevel = (level) => {
    app!.log.level = level;
  };
  await replicator.start();
  // The driver exists once started, and reports its first role change only after this turn.
  connectSoftState(metrics, replicator.driver);
  // Batches decided before a restart run again; tasks enqueued before it get scheduled.
  scheduler.poke();
  let closing = false;
  const defaultKeys = ensureDefaultKeys(keys, {
    isLeader: () => replicator.isLeader(),
    configure: (name, op) => ctx.configure(name, op),
    stopped: () => closing,
    onError: (e) => log.warn({ err: e }, 'could not create the default API keys yet'),
  });
  // A node alone soon leads, and then serves its default keys from the first request; a node
  // joining others gets them through the log, and waits for them no longer than for a write.
  if (options.peers.length === 0) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([defaultKeys, new Promise((r) => (timer = setTimeout(r, 10_000)))]);
    clearTimeout(timer);
  }
  await app.listen({ host: options.httpAddr.host, port: options.httpAddr.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.httpAddr.port;
  const stopSnapshots =
    options.scheduleSnapshot !== null
      ? scheduleSnapshots(options.scheduleSnapshot, { isLeader: () => replicator.isLeader(), enqueue: (spec) => ctx.enqueue(spec), log })
      : () => {};
  const host = options.httpAddr.host.includes(':') ? `[${options.httpAddr.host}]` : options.httpAddr.host;

  return {
    app,
    ctx,
    url: `${options.ssl ? 'https' : 'http'}://${host}:${port}`,
    async close() {
      closing = true;
      stopSnapshots();
      delivery.close();
      continuations?.close();
      // A leader hands over first, so that a planned stop (rolling restart) barely pauses writes.
      await replicator.prepareShutdown();
      await app!.close();
      await replicator.stop();
      // Halting (not just waiting) lets a dump in progress give up: it runs again at restart.
      embeddings.interruptWaits('the node is stopping');
      await executor.halt();
      await store.close();
    },
  };
}
