// A webhook receiver for tests: a real HTTP server recording what it is sent (gzip NDJSON
// bodies decoded into tasks), which can be told to fail or to never answer.

import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

export interface Delivery {
  headers: IncomingHttpHeaders;
  tasks: Record<string, any>[];
  at: number;
}

export interface Receiver {
  url: string;
  /** Successful deliveries, in arrival order. */
  deliveries: Delivery[];
  /** Every request received, answered or not. */
  attempts: number;
  /** The next `n` requests answer `status` (0: never answer). */
  failNext(n: number, status: number): void;
  /** Resolves once `pred` holds, checked as requests arrive (rejects after `ms`). */
  until(pred: (r: Receiver) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<Receiver> {
  let failing = { n: 0, status: 500 };
  const hanging = new Set<ServerResponse>();
  const waiters = new Set<() => void>();
  const r: Receiver = {
    url: '',
    deliveries: [],
    attempts: 0,
    failNext(n, status) {
      failing = { n, status };
    },
    until(pred, ms = 10_000) {
      return new Promise((resolve, reject) => {
        if (pred(r)) return resolve();
        const check = () => {
          if (!pred(r)) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`receiver: condition not met within ${ms} ms (${r.attempts} requests, ${r.deliveries.length} delivered)`));
        }, ms);
        waiters.add(check);
      });
    },
    close: () =>
      new Promise<void>((res) => {
        server.closeAllConnections();
        server.close(() => res());
      }),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      r.attempts++;
      if (failing.n > 0) {
        failing.n--;
        if (failing.status === 0) {
          hanging.add(res);
          for (const w of [...waiters]) w();
          return;
        }
        res.writeHead(failing.status).end();
        for (const w of [...waiters]) w();
        return;
      }
      const raw = Buffer.concat(chunks);
      const text = req.headers['content-encoding'] === 'gzip' ? gunzipSync(raw).toString() : raw.toString();
      const tasks = text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as Record<string, any>);
      r.deliveries.push({ headers: req.headers, tasks, at: Date.now() });
      res.writeHead(200).end();
      for (const w of [...waiters]) w();
    });
  });
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res));
  r.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return r;
}
