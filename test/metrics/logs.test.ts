// Structured logs: JSON lines, the level from --log-level, and the request id on every line
// logged while serving a request (including lines from below the routes), never on lines of
// the background loops that a request merely woke up.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { parseOptions } from '../../src/config/options.js';
import { startNode, type RunningNode } from '../../src/server/node.js';
import { freePort, tempDir } from '../helpers/node.js';

type Line = Record<string, unknown> & { level: number; msg?: string; requestId?: string };

async function nodeWithLogs(level: string): Promise<{ node: RunningNode; lines: Line[]; close(): Promise<void> }> {
  const dir = tempDir('trine-logs-');
  const lines: Line[] = [];
  const options = parseOptions(['--db-path', dir, '--http-addr', `127.0.0.1:${await freePort()}`, '--log-level', level, '--experimental-logs-mode', 'json'], {});
  const node = await startNode(options, {
    logStream: { write: (l: string) => void lines.push(JSON.parse(l) as Line) },
  });
  return {
    node,
    lines,
    async close() {
      await node.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function addDocuments(url: string, uid: string): Promise<number> {
  const r = await fetch(`${url}/indexes/${uid}/documents`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify([{ id: 1, title: 'Carol' }]),
  });
  expect(r.status).toBe(202);
  return ((await r.json()) as { taskUid: number }).taskUid;
}

async function finished(url: string, uid: number): Promise<void> {
  for (;;) {
    const t = (await (await fetch(`${url}/tasks/${uid}`)).json()) as { status: string };
    if (t.status !== 'enqueued' && t.status !== 'processing') return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('logs at debug level', () => {
  let n: Awaited<ReturnType<typeof nodeWithLogs>>;
  let taskUid: number;

  beforeAll(async () => {
    n = await nodeWithLogs('debug');
    // Several writes, one after the other: some find the Raft loop idle and wake it themselves.
    for (let i = 0; i < 5; i++) {
      taskUid = await addDocuments(n.node.url, 'logs');
      await finished(n.node.url, taskUid);
    }
  });
  afterAll(async () => {
    await n?.close();
  });

  it('writes JSON lines with pino levels', () => {
    expect(n.lines.length).toBeGreaterThan(0);
    for (const l of n.lines) expect(typeof l.level).toBe('number');
    expect(n.lines.some((l) => l.level === 20)).toBe(true);
  });

  it('tags every line of a request with its id, lines from below the routes included', () => {
    const enqueued = n.lines.find((l) => l.msg === 'task enqueued' && l.taskUid === taskUid);
    expect(enqueued?.requestId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-/);
    const ofRequest = n.lines.filter((l) => l.requestId === enqueued!.requestId);
    expect(ofRequest.map((l) => l.msg)).toEqual(['incoming request', 'task enqueued', 'request completed']);
    expect((ofRequest[0]!.req as { url: string }).url).toBe('/indexes/logs/documents');
    // Fastify's own lines of each request carry the id as well.
    for (const l of n.lines.filter((x) => x.req !== undefined || x.res !== undefined)) expect(l.requestId).toBeDefined();
  });

  it('leaves the id off lines of the batch and Raft loops, even when a request woke them', () => {
    const batches = n.lines.filter((l) => l.msg === 'batch processed');
    expect(batches.some((l) => (l.taskUids as number[]).includes(taskUid))).toBe(true);
    for (const l of batches) expect(l.requestId).toBeUndefined();
    const roles = n.lines.filter((l) => l.msg === 'raft role changed');
    expect(roles.length).toBeGreaterThan(0);
    for (const l of roles) expect(l.requestId).toBeUndefined();
  });
});

describe('logs at warn level', () => {
  it('writes nothing below warn', async () => {
    const n = await nodeWithLogs('warn');
    try {
      await finished(n.node.url, await addDocuments(n.node.url, 'quiet'));
      expect(n.lines.filter((l) => l.level < 40)).toEqual([]);
    } finally {
      await n.close();
    }
  });
});
