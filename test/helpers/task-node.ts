import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { Engine } from '../../src/engine/engine.js';
import { RocksStore } from '../../src/store/rocks-store.js';
import type { Command } from '../../src/tasks/command.js';
import { Executor } from '../../src/tasks/executor.js';
import { TaskStateMachine } from '../../src/tasks/state-machine.js';
import { TaskQueue } from '../../src/tasks/task-queue.js';
import { tempDir } from './node.js';

const silent = { error() {}, info() {} };

/**
 * A node's task layer (store, queue, state machine, executor) in a temp dir, driven by hand
 * command by command as a log would: what it does depends only on the order of the commands.
 */
export class TaskNode {
  /** Log index of the last command applied. */
  index = 0;

  private constructor(
    readonly dir: string,
    readonly store: RocksStore,
    readonly queue: TaskQueue,
    readonly sm: TaskStateMachine,
    readonly executor: Executor,
    readonly engine: Engine,
  ) {}

  static async open(prefix: string): Promise<TaskNode> {
    const dir = tempDir(prefix);
    const store = await RocksStore.open(dir);
    const engine = await Engine.open(store);
    const queue = new TaskQueue();
    await queue.load(store);
    return new TaskNode(dir, store, queue, new TaskStateMachine(store, queue), new Executor(store, queue, engine, silent), engine);
  }

  apply(cmd: Command): ReturnType<TaskStateMachine['apply']> {
    return this.sm.apply(++this.index, cmd, { sync: false });
  }

  /** Lets the executor process the decided batches; resolves once it is idle. */
  async run(): Promise<void> {
    this.executor.kick();
    await once(this.executor, 'idle');
  }

  async close(): Promise<void> {
    await this.executor.halt();
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** A task deletion as the log carries it. */
export function deletionCommand(query: string, enqueuedAt = Date.now()): Command {
  return {
    kind: 'enqueue',
    enqueuedAt,
    spec: { type: 'taskDeletion', indexUid: null, details: { matchedTasks: null, deletedTasks: null, originalFilter: query }, params: { op: 'deleteTasks', query } },
  };
}
