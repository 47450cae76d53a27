import type { Options } from '../config/options.js';
import type { KeyStore } from '../auth/key-store.js';
import type { Engine } from '../engine/engine.js';
import type { ExperimentalFeatures } from '../features/experimental-features.js';
import type { Metrics } from '../metrics/metrics.js';
import type { ConsistentReads } from '../replication/consistent-reads.js';
import type { Replicator } from '../replication/replicator.js';
import type { Executor } from '../tasks/executor.js';
import type { TaskQueue } from '../tasks/task-queue.js';
import type { TaskNetwork, TaskRecord, TaskSpec } from '../tasks/task.js';
import type { WebhookStore } from '../webhooks/webhook-store.js';
import type { LogHub } from '../util/log-hub.js';
import type { ChatWorkspaces } from '../chat/workspaces.js';

/** What route handlers may use. Built by `server/node.ts`. */
export interface AppContext {
  options: Options;
  engine: Engine;
  queue: TaskQueue;
  executor: Executor;
  replicator: Replicator;
  /** Read-your-writes: `reads.ready()` before answering a read (see `--read-consistency`). */
  reads: ConsistentReads;
  /** Prometheus instruments of this node (`GET /metrics`; search timing via `metrics.searchTimer`). */
  metrics: Metrics;
  /** Runtime experimental features (changed through the log). */
  features: ExperimentalFeatures;
  /** API keys (changed through the log); requests are checked against them in `auth/request-auth.ts`. */
  keys: KeyStore;
  /** Webhooks notified after every batch (changed through the log). */
  webhooks: WebhookStore;
  /** Chat workspaces: the language model and prompts of `/chats/{workspace}` (changed through the log). */
  chats: ChatWorkspaces;
  /** This node's log sinks (`/logs/*`). */
  logs: LogHub;
  /** Proposes a task; resolves with the registered task once it is durable. */
  enqueue(spec: TaskSpec, payload?: Buffer): Promise<TaskRecord>;
  /** Records, through the log, a task's place in the network (`network` of the task). */
  recordTaskNetwork(taskUid: number, network: TaskNetwork): Promise<void>;
  /** Applies a node-wide change through the log (see `ConfigHandler`); throws the handler's ApiError. */
  configure(name: string, op: unknown): Promise<unknown>;
  /** Resolves when the task reached a final status (or the timeout passed). */
  waitForTask(uid: number, timeoutMs: number): Promise<TaskRecord | undefined>;
  startedAt: number;
}
