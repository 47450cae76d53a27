// Commands made with an API key are checked again when the log reaches them: a node that
// had not applied a key's deletion when it accepted a request must not write in that key's
// name, and every node refuses such a command alike.

import { afterEach, expect, it } from 'vitest';
import { KeyStore } from '../../src/auth/key-store.js';
import { ApiError } from '../../src/errors/api-error.js';
import { decodeResult, encodeResult } from '../../src/replication/proposals.js';
import { decodeCommand, encodeCommand, type Command } from '../../src/tasks/command.js';
import type { Authority } from '../../src/util/request-context.js';
import { TaskNode } from '../helpers/task-node.js';

const MASTER = 'a-master-key-of-sixteen-bytes-or-more';
const nodes: TaskNode[] = [];

afterEach(async () => {
  await Promise.all(nodes.splice(0).map((n) => n.close()));
});

async function open(): Promise<{ node: TaskNode; keys: KeyStore }> {
  const node = await TaskNode.open('trine-authority-');
  nodes.push(node);
  const keys = new KeyStore(MASTER);
  node.sm.register(KeyStore.COMMAND, keys);
  node.sm.checkAuthority((uid, at) => (keys.authorizes(uid, at) ? null : new ApiError('invalid_api_key', 'The provided API key is invalid.')));
  return { node, keys };
}

const keyOp = (uid: string, expiresAt: number | null = null, at = 100): Command => ({
  kind: 'config',
  name: KeyStore.COMMAND,
  at,
  op: { op: 'create', key: { uid, name: null, description: null, actions: ['*'], indexes: ['*'], expiresAt } },
});
const deleteOp = (uid: string, authority?: Authority): Command => ({
  kind: 'config',
  name: KeyStore.COMMAND,
  at: 300,
  op: { op: 'delete', uid, ref: uid },
  ...(authority !== undefined ? { authority } : {}),
});
const addDocs = (at: number, authority?: Authority): Command => ({
  kind: 'enqueue',
  enqueuedAt: at,
  spec: { type: 'documentAdditionOrUpdate', indexUid: 'movies', details: { receivedDocuments: 1, indexedDocuments: null }, params: { op: 'documents', method: 'replace', primaryKey: null } },
  payload: Buffer.from('[{"id":1}]'),
  ...(authority !== undefined ? { authority } : {}),
});

const A = '11111111-1111-4111-8111-111111111111';
const B = '22222222-2222-4222-8222-222222222222';
/** The keys as the requests made with them name them: created at 100 by keyOp. */
const byA: Authority = { key: A, createdAt: 100 };
const byB: Authority = { key: B, createdAt: 100 };

it('registers the task of a key that still exists, and refuses, writing nothing, once the log deleted the key', async () => {
  const { node } = await open();
  await node.apply(keyOp(A));
  const first = await node.apply(addDocs(200, byA));
  expect(first.kind).toBe('task');
  await node.apply(deleteOp(A));
  const uidBefore = node.queue.nextTaskUid;
  const refused = await node.apply(addDocs(400, byA));
  expect(refused).toMatchObject({ kind: 'refused', error: { code: 'invalid_api_key' } });
  expect(node.queue.nextTaskUid).toBe(uidBefore);
  expect(node.queue.tasks.size).toBe(1);
  // The entry counts as applied all the same: the log moves on.
  expect(node.queue.appliedIndex).toBe(node.index);
  // The master key's commands (and the node's own) carry no key and are never refused.
  expect((await node.apply(addDocs(500))).kind).toBe('task');
});

it('refuses a command made after the key expired, by the time the command carries', async () => {
  const { node } = await open();
  await node.apply(keyOp(A, 1_000));
  expect((await node.apply(addDocs(999, byA))).kind).toBe('task');
  expect((await node.apply(addDocs(1_000, byA))).kind).toBe('refused');
});

it('refuses a command made with a deleted key once another key took its uid', async () => {
  const { node } = await open();
  await node.apply(keyOp(A));
  await node.apply(deleteOp(A));
  await node.apply(keyOp(A, null, 350));
  expect((await node.apply(addDocs(400, byA))).kind).toBe('refused');
  expect((await node.apply(addDocs(400, { key: A, createdAt: 350 }))).kind).toBe('task');
});

it('refuses a config command in the name of a deleted key, and applies none of it', async () => {
  const { node, keys } = await open();
  await node.apply(keyOp(A));
  await node.apply(keyOp(B));
  await node.apply(deleteOp(A));
  // Key A, gone, would delete key B.
  const r = await node.apply(deleteOp(B, byA));
  expect(r.kind).toBe('config');
  expect((r as { result: unknown }).result).toBeInstanceOf(ApiError);
  expect(((r as { result: ApiError }).result).code).toBe('invalid_api_key');
  expect(keys.get(B)).toBeDefined();
  // A key deleting itself is still allowed: the check comes before the command.
  expect((await node.apply(deleteOp(B, byB))).kind).toBe('config');
  expect(keys.get(B)).toBeUndefined();
});

it('keeps the authority through the log encoding, and the refusal through a forwarded answer', async () => {
  const cmd = addDocs(7, byA);
  expect(decodeCommand(await encodeCommand(cmd))).toMatchObject({ kind: 'enqueue', authority: byA });
  const refusal = { kind: 'refused' as const, error: new ApiError('invalid_api_key', 'The provided API key is invalid.') };
  const { resultJson, errorJson } = encodeResult(refusal);
  const back = decodeResult(resultJson, errorJson);
  expect(back.kind).toBe('refused');
  expect((back as typeof refusal).error).toBeInstanceOf(ApiError);
  expect((back as typeof refusal).error.code).toBe('invalid_api_key');
});
