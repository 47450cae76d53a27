// A key's `seq` (its creation order) is part of the replicated state: a node that restarted,
// and so read its keys back from the store, must give the next key the same `seq` as a node
// that kept running, even when the newest key was deleted in between.

import { afterEach, expect, it } from 'vitest';
import { KeyStore, type ApiKey } from '../../src/auth/key-store.js';
import { TaskNode } from '../helpers/task-node.js';

const MASTER = 'a-master-key-of-sixteen-bytes-or-more';
const nodes: TaskNode[] = [];

afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

const uid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const create = (n: number) => ({ op: 'create', key: { uid: uid(n), name: null, description: null, actions: ['search'], indexes: ['*'], expiresAt: null } });

it('gives the next key the same creation order after a restart as without one', async () => {
  const node = await TaskNode.open('trine-key-seq-');
  nodes.push(node);
  const running = new KeyStore(MASTER);
  node.sm.register(KeyStore.COMMAND, running);
  for (const n of [1, 2, 3]) await node.apply({ kind: 'config', name: KeyStore.COMMAND, at: 10 * n, op: create(n) });
  // The newest key goes: a store read back now no longer holds the highest seq given.
  await node.apply({ kind: 'config', name: KeyStore.COMMAND, at: 40, op: { op: 'delete', uid: uid(3), ref: uid(3) } });
  const restarted = new KeyStore(MASTER);
  await restarted.load(node.store);
  const next = (keys: KeyStore) => (keys.apply(create(4), 50, node.store.batch()) as ApiKey).seq;
  const [afterRestart, withoutRestart] = [next(restarted), next(running)];
  expect(afterRestart).toBe(withoutRestart);
  expect(afterRestart).toBeGreaterThan(running.get(uid(2))!.seq);
});
