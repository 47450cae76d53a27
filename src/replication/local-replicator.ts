import type { Command } from '../tasks/command.js';
import type { ApplyResult, TaskStateMachine } from '../tasks/state-machine.js';
import type { NodeStatus, Replicator } from './replicator.js';

/**
 * The log of a single node: a command is committed as soon as its apply is on disk (fsynced),
 * so a 202 is never sent for a write a crash could lose.
 */
export class LocalReplicator implements Replicator {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly nodeId: string,
    private readonly sm: TaskStateMachine,
    private readonly onApplied: (r: ApplyResult) => void,
  ) {}

  propose(cmd: Command): Promise<ApplyResult> {
    const run = async () => {
      const r = await this.sm.apply(this.sm.queue.appliedIndex + 1, cmd, { sync: true });
      this.onApplied(r);
      return r;
    };
    const p = this.tail.then(run);
    this.tail = p.catch(() => undefined);
    return p;
  }

  isLeader(): boolean {
    return true;
  }

  async start(): Promise<void> {}

  async stop(): Promise<void> {
    await this.tail;
  }

  status(): { self: NodeStatus; nodes: NodeStatus[] } {
    const applied = this.sm.queue.appliedIndex;
    const self: NodeStatus = {
      id: this.nodeId,
      role: 'single',
      term: 0,
      leader: this.nodeId,
      commitIndex: applied,
      appliedIndex: applied,
      lag: 0,
    };
    return { self, nodes: [self] };
  }
}
