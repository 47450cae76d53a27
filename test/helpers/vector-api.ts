// Small HTTP helpers for the vector tests, and fake embedding providers: real HTTP servers
// speaking each remote protocol, recording what they receive and answering deterministic
// vectors derived from the text.

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'vitest';

export interface Caller {
  url: string;
}

export async function call(t: Caller, method: string, path: string, body?: unknown) {
  const r = await fetch(t.url + path, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
  });
  const text = await r.text();
  return { status: r.status, body: (text ? JSON.parse(text) : null) as Record<string, any> };
}

/** Waits for a task to finish and returns it. */
export async function waitTask(t: Caller, uid: number, timeoutMs = 30_000): Promise<Record<string, any>> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await call(t, 'GET', `/tasks/${uid}`);
    if (['succeeded', 'failed', 'canceled'].includes(r.body['status'])) return r.body;
    if (Date.now() > end) throw new Error(`task ${uid} not finished: ${JSON.stringify(r.body)}`);
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** Sends a write and waits for its task; `expectStatus` checks how it ended. */
export async function write(t: Caller, method: string, path: string, body: unknown, expectStatus: 'succeeded' | 'failed' = 'succeeded') {
  const r = await call(t, method, path, body);
  expect(r.status, JSON.stringify(r.body)).toBe(202);
  const task = await waitTask(t, r.body['taskUid']);
  expect(task['status'], JSON.stringify(task['error'])).toBe(expectStatus);
  return task;
}

/** Cosine similarity of two vectors of the same length. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return dot / Math.sqrt(na * nb);
}

/**
 * A deterministic embedding of a text: counts of a few letter groups, so that texts sharing
 * words point the same way.
 */
export function fakeEmbedding(text: string, dims = 4): number[] {
  const v = new Array<number>(dims).fill(0);
  for (const ch of text.toLowerCase()) {
    const c = ch.charCodeAt(0);
    if (c >= 97 && c <= 122) v[(c - 97) % dims]! += 1;
  }
  v[dims - 1]! += 0.5;
  return v;
}

export interface Received {
  path: string;
  headers: IncomingMessage['headers'];
  body: any;
}

export interface FakeProvider {
  url: string;
  received: Received[];
  /** Makes the next `n` requests answer `status` with `body` (or hang, with status 0). */
  failNext(n: number, status: number, body?: string): void;
  close(): Promise<void>;
}

/** An HTTP server answering embedding requests through `answer`. */
export async function fakeProvider(answer: (path: string, body: any) => unknown): Promise<FakeProvider> {
  const received: Received[] = [];
  let failures: { n: number; status: number; body: string } = { n: 0, status: 500, body: '' };
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      const body = raw ? JSON.parse(raw) : null;
      received.push({ path: req.url ?? '', headers: req.headers, body });
      if (failures.n > 0) {
        failures.n--;
        if (failures.status === 0) return; // never answers: the client times out
        res.writeHead(failures.status, { 'content-type': 'application/json' });
        res.end(failures.body);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer(req.url ?? '', body)));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    failNext(n, status, body = '') {
      failures = { n, status, body };
    },
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
