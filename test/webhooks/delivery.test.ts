// Webhook delivery against a receiver that never answers: each attempt ends at its timeout
// even when garbage collections run meanwhile, and the notifications behind it go out; and
// against one that keeps failing: its retries leave nothing behind.

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { gunzipSync } from 'node:zlib';
import { expect, it } from 'vitest';
import { WebhookDelivery } from '../../src/webhooks/delivery.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

it('times out an attempt at a receiver that never answers, collections or not, and delivers what follows', async () => {
  const hanging: ServerResponse[] = [];
  const delivered: number[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      // The first batch's only attempt is never answered; the next ones are. Told apart by
      // the body, not by arrival: on a loaded machine the first attempt can time out before
      // its body has arrived.
      const uid = (JSON.parse(gunzipSync(Buffer.concat(chunks)).toString()) as { uid: number }).uid;
      if (uid === 1) return void hanging.push(res);
      delivered.push(uid);
      res.end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const warned: unknown[] = [];
  const delivery = new WebhookDelivery({
    webhooks: () => [['hook', { url, headers: {} }]],
    timeoutMs: 1_000,
    retryDelaysMs: [],
    log: { warn: (o) => warned.push(o), debug: () => undefined },
  });
  // Collections while the first attempt waits (the old combined signal lost its timeout
  // to one); not so often that the event loop, which also runs the receiver, starves and
  // the answered attempts time out on a loaded machine.
  const collecting = setInterval(gc, 50);
  try {
    // One queue: the second and third notifications wait for the first one's attempt.
    for (const batch of [1, 2, 3]) await delivery.batchFinished(batch, [{ uid: batch }]);
    const until = Date.now() + 5_000;
    while (delivered.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(delivered).toEqual([2, 3]);
    expect(warned).toHaveLength(1);
  } finally {
    clearInterval(collecting);
    delivery.close();
    for (const res of hanging) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

it('leaves no listener behind per retry while a receiver stays down', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(500).end());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const warnings: Error[] = [];
  const onWarning = (w: Error) => warnings.push(w);
  process.on('warning', onWarning);
  const failed: unknown[] = [];
  const delivery = new WebhookDelivery({
    webhooks: () => [['down', { url, headers: {} }]],
    timeoutMs: 1_000,
    retryDelaysMs: [1, 1],
    log: { warn: (o) => failed.push(o), debug: () => undefined },
  });
  try {
    // Eight notifications, each tried three times: sixteen waits between attempts.
    for (let batch = 1; batch <= 8; batch++) await delivery.batchFinished(batch, [{ uid: batch }]);
    const until = Date.now() + 10_000;
    while (failed.length < 8 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
    expect(failed).toHaveLength(8);
    await new Promise((r) => setImmediate(r));
    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
  } finally {
    process.off('warning', onWarning);
    delivery.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});
