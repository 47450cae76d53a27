import type { FastifyInstance } from 'fastify';
import type { Options } from '../config/options.js';
import { Engine } from '../engine/engine.js';
import { noSearchIndex, type SearchIndexFactory } from '../engine/search-index.js';
import { buildApp } from '../http/app.js';
import type { AppContext } from '../http/context.js';
import { RaftReplicator } from '../replication/raft-replicator.js';
import { Scheduler } from '../replication/scheduler.js';
import { RocksStore } from '../store/rocks-store.js';
import { Executor } from '../tasks/executor.js';
import type { ApplyResult } from '../tasks/state-machine.js';
import { TaskStateMachine, type ConfigHandler } from '../tasks/state-machine.js';
import type { KvStore } from '../store/kv.js';
import { ApiError } from '../errors/api-error.js';
import { ExperimentalFeatures } from '../features/experimental-features.js';
import { TaskQueue } from '../tasks/task-queue.js';
import { isFinished, type TaskRecord } from '../tasks/task.js';

export interface RunningNode {
  app: FastifyInstance;
  ctx: AppContext;
  /** The address the HTTP API listens on. */
  url: string;
  close(): Promise<void>;
}

export interface NodeDeps {
  searchFactory?: SearchIndexFactory;
  configHandlers?: (store: KvStore) => [string, ConfigHandler][];
}

/** Builds a node from the pieces: store, engine, task queue, log, executor, HTTP API. */
export async function startNode(options: Options, deps: NodeDeps = {}): Promise<RunningNode> {
  const store = await RocksStore.open(options.dbPath);
  const engine = await Engine.open(store, deps.searchFactory ?? noSearchIndex);
  const queue = new TaskQueue();
  await queue.load(store);
  const sm = new TaskStateMachine(store, queue);
  // Node-wide state kept through the log registers here, before anything is applied.
  const features = new ExperimentalFeatures();
  sm.register(ExperimentalFeatures.COMMAND, features);
  for (const [name, handler] of deps.configHandlers?.(store) ?? []) sm.register(name, handler);
  await sm.loadHandlers(store);

  let app: FastifyInstance | null = null;
  const log = {
    error: (obj: unknown, msg?: string) => app?.log.error(obj, msg),
    info: (obj: unknown, msg?: string) => app?.log.info(obj, msg),
  };
  const executor = new Executor(store, queue, engine, log);

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
  const onApplied = (_r: ApplyResult) => scheduler?.poke();
  const replicator = new RaftReplicator({
    options,
    store,
    sm,
    onApplied,
    async beforeInstall() {
      await executor.halt();
    },
    async afterInstall() {
      await queue.load(store);
      await engine.load();
      await sm.loadHandlers(store);
      executor.resume();
      scheduler?.poke();
    },
    log: {
      info: (o, m) => app?.log.info(o, m),
      warn: (o, m) => app?.log.warn(o, m),
      error: (o, m) => app?.log.error(o, m),
      debug: (o, m) => app?.log.debug(o, m),
    },
  });
  scheduler = new Scheduler(replicator, queue, executor, (e) => log.error({ err: e }, 'could not decide a batch'));
  executor.on('batch', () => {
    notify();
    scheduler?.poke();
  });
  executor.on('idle', () => scheduler?.poke());

  const ctx: AppContext = {
    options,
    engine,
    queue,
    executor,
    replicator,
    features,
    startedAt: Date.now(),
    async enqueue(spec, payload) {
      const r = await replicator.propose({ kind: 'enqueue', enqueuedAt: Date.now(), spec, ...(payload ? { payload } : {}) });
      if (r.kind !== 'task') throw new Error('enqueue did not register a task');
      return r.task;
    },
    async configure(name, op) {
      const r = await replicator.propose({ kind: 'config', name, at: Date.now(), op });
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

  app = await buildApp(ctx);
  await replicator.start();
  // Batches decided before a restart run again; tasks enqueued before it get scheduled.
  scheduler.poke();
  await app.listen({ host: options.httpAddr.host, port: options.httpAddr.port });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : options.httpAddr.port;
  const host = options.httpAddr.host.includes(':') ? `[${options.httpAddr.host}]` : options.httpAddr.host;

  return {
    app,
    ctx,
    url: `http://${host}:${port}`,
    async close() {
      await app!.close();
      await replicator.stop();
      while (executor.busy) await new Promise((r) => setTimeout(r, 10));
      await store.close();
    },
  };
}
