import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';
import { apiError } from '../helpers/api-error.js';

const MASTER = 'webhooks-master-key-0123456789';
let t: TestNode;
let rx: Receiver;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestNode(['--master-key', MASTER, '--webhook-timeout', '300ms'], undefined, { webhookRetryDelaysMs: [50, 100] });
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});

async function raw(method: string, path: string, body?: unknown) {
  const r = await fetch(t.url + path, {
    method,
    headers: { authorization: `Bearer ${MASTER}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : null };
}

describe('webhooks CRUD', () => {
  it('creates, lists, reads, updates and deletes webhooks, Authorization values masked', async () => {
    const created = await t.client.createWebhook({ url: 'https://example.com/a', headers: { Authorization: 'Bearer a-very-long-secret-token-value', 'X-Team': 'search' } });
    expect(created).toEqual({
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      isEditable: true,
      url: 'https://example.com/a',
      headers: { Authorization: 'Bearer a-verXXXXXX...', 'X-Team': 'search' },
    });
    const other = await t.client.createWebhook({ url: 'http://example.com/b' });
    expect(other.headers).toEqual({});
    const list = await t.client.getWebhooks();
    expect(list.results.map((w) => w.uuid)).toEqual([created.uuid, other.uuid].sort());
    expect(await t.client.getWebhook(created.uuid)).toEqual(created);

    const patched = await t.client.updateWebhook(created.uuid, { headers: { 'X-Team': null, 'X-New': '1' } as never });
    expect(patched.headers).toEqual({ Authorization: 'Bearer a-verXXXXXX...', 'X-New': '1' });
    const moved = await t.client.updateWebhook(created.uuid, { url: 'https://example.com/moved' });
    expect(moved.url).toBe('https://example.com/moved');
    expect((await raw('PATCH', `/webhooks/${created.uuid}`, { headers: null })).body!['headers']).toEqual({});

    const del = await raw('DELETE', `/webhooks/${other.uuid}`);
    expect(del.status).toBe(204);
    await t.client.deleteWebhook(created.uuid);
    expect((await t.client.getWebhooks()).results).toEqual([]);
    expect(await apiError(t.client.getWebhook(created.uuid))).toMatchObject({ status: 404, code: 'webhook_not_found', message: `Webhook \`${created.uuid}\` not found.` });
  });

  it('answers 201 on creation and refuses bad webhooks with the reference codes', async () => {
    const ok = await raw('POST', '/webhooks', { url: 'https://example.com/x' });
    expect(ok.status).toBe(201);
    const uuid = ok.body!['uuid'] as string;
    const cases: [string, string, unknown, number, string, string][] = [
      ['POST', '/webhooks', {}, 400, 'invalid_webhook_url', 'The URL for the webhook `'],
      ['POST', '/webhooks', { url: 'not a url' }, 400, 'invalid_webhook_url', 'Invalid URL `not a url`: relative URL without a base'],
      ['POST', '/webhooks', { url: 'ftp://example.com' }, 400, 'invalid_webhook_url', 'Invalid URL `ftp://example.com`: only `http` and `https` URLs can be notified'],
      ['POST', '/webhooks', { url: 3 }, 400, 'invalid_webhook_url', 'Invalid value type at `.url`: expected a string, but found a positive integer: `3`'],
      ['POST', '/webhooks', { url: 'https://e.com', headers: { 'bad name': 'x' } }, 400, 'invalid_webhook_headers', 'Invalid header name `bad name`: invalid HTTP header name'],
      ['POST', '/webhooks', { url: 'https://e.com', headers: { ok: 'a\nb' } }, 400, 'invalid_webhook_headers', 'Invalid header value `ok`: failed to parse header value'],
      ['POST', '/webhooks', { url: 'https://e.com', headers: [] }, 400, 'invalid_webhook_headers', 'Invalid value type at `.headers`: expected an object, but found an array: `[]`'],
      ['POST', '/webhooks', { url: 'https://e.com', uuid: 'x' }, 400, 'immutable_webhook_uuid', 'Immutable field `uuid`: expected one of `url`, `headers`'],
      ['POST', '/webhooks', { url: 'https://e.com', isEditable: false }, 400, 'immutable_webhook_is_editable', 'Immutable field `isEditable`: expected one of `url`, `headers`'],
      ['POST', '/webhooks', { url: 'https://e.com', other: 1 }, 400, 'bad_request', 'Unknown field `other`: expected one of `url`, `headers`'],
      ['PATCH', `/webhooks/${uuid}`, { url: null }, 400, 'invalid_webhook_url', `The URL for the webhook \`${uuid}\` is missing.`],
      ['PATCH', '/webhooks/not-a-uuid', {}, 400, 'invalid_webhook_uuid', 'Invalid UUID: invalid length: expected length 32 for simple format, found 10'],
      ['GET', '/webhooks/0bd0a57d-0fd8-4a1a-b2b8-000000000001', undefined, 404, 'webhook_not_found', 'Webhook `0bd0a57d-0fd8-4a1a-b2b8-000000000001` not found.'],
      ['DELETE', '/webhooks/0bd0a57d-0fd8-4a1a-b2b8-000000000001', undefined, 404, 'webhook_not_found', 'Webhook `0bd0a57d-0fd8-4a1a-b2b8-000000000001` not found.'],
      ['PATCH', '/webhooks/00000000-0000-0000-0000-000000000000', {}, 400, 'immutable_webhook', 'Webhook `00000000-0000-0000-0000-000000000000` is immutable. The webhook defined from the command line cannot be modified using the API.'],
    ];
    for (const [method, path, body, status, code, message] of cases) {
      const r = await raw(method, path, body);
      expect(r.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(r.body!['code']).toBe(code);
      expect(r.body!['message']).toContain(message);
    }
    await t.client.deleteWebhook(uuid);
  });

  it('holds at most 20 webhooks and 200 headers each', async () => {
    const many = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`x-h${i}`, 'v']));
    const tooMany = await raw('POST', '/webhooks', { url: 'https://e.com', headers: many });
    expect(tooMany.body).toMatchObject({ code: 'invalid_webhook_headers' });
    expect(tooMany.body!['message']).toMatch(/^Too many headers for the webhook `[0-9a-f-]+`\. Please limit the number of headers to 200\./);
    const uuids: string[] = [];
    for (let i = 0; i < 20; i++) uuids.push((await t.client.createWebhook({ url: `https://e.com/${i}` })).uuid);
    expect(await apiError(t.client.createWebhook({ url: 'https://e.com/21' }))).toMatchObject({
      status: 400,
      code: 'invalid_webhooks',
      message: 'Defining too many webhooks would crush the server. Please limit the number of webhooks to 20. You may use a third-party proxy server to dispatch events to more than 20 endpoints.',
    });
    for (const u of uuids) await t.client.deleteWebhook(u);
  });

  it('needs the webhooks actions', async () => {
    const { key } = await t.client.createKey({ actions: ['webhooks.get'], indexes: ['*'], expiresAt: null });
    const r = await fetch(`${t.url}/webhooks`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"url":"https://e.com"}' });
    expect(r.status).toBe(403);
    const g = await fetch(`${t.url}/webhooks`, { headers: { authorization: `Bearer ${key}` } });
    expect(g.status).toBe(200);
  });
});

describe('webhook delivery', () => {
  it('POSTs the tasks of every finished batch as gzip NDJSON, with the webhook headers', async () => {
    const hook = await t.client.createWebhook({ url: rx.url, headers: { Authorization: 'Bearer receiver-secret', 'X-Source': 'trine' } });
    try {
      const before = rx.deliveries.length;
      const task = await t.client.index('hooked').addDocuments([{ id: 1 }, { id: 2 }]).waitTask();
      await rx.until((r) => r.deliveries.slice(before).some((d) => d.tasks.some((x) => x['uid'] === task.uid)));
      const d = rx.deliveries.slice(before).find((x) => x.tasks.some((y) => y['uid'] === task.uid))!;
      expect(d.headers['content-type']).toBe('application/x-ndjson');
      expect(d.headers['content-encoding']).toBe('gzip');
      expect(d.headers['authorization']).toBe('Bearer receiver-secret');
      expect(d.headers['x-source']).toBe('trine');
      expect(d.tasks).toEqual([await t.client.tasks.getTask(task.uid)]);
      expect(d.tasks[0]).toMatchObject({ status: 'succeeded', type: 'documentAdditionOrUpdate', details: { indexedDocuments: 2 } });
    } finally {
      await t.client.deleteWebhook(hook.uuid);
    }
  });

  it('retries a receiver that fails, a bounded number of times', async () => {
    const hook = await t.client.createWebhook({ url: rx.url });
    try {
      const before = rx.deliveries.length;
      const attempts = rx.attempts;
      rx.failNext(2, 503);
      const task = await t.client.index('hooked').addDocuments([{ id: 3 }]).waitTask();
      await rx.until((r) => r.deliveries.length > before);
      expect(rx.attempts - attempts).toBe(3);
      expect(rx.deliveries[before]!.tasks.map((x) => x['uid'])).toEqual([task.uid]);

      // Failing every attempt: given up after three, the next batch is still delivered.
      const mark = rx.attempts;
      rx.failNext(3, 500);
      await t.client.index('hooked').addDocuments([{ id: 4 }]).waitTask();
      await rx.until((r) => r.attempts - mark >= 3);
      const next = await t.client.index('hooked').addDocuments([{ id: 5 }]).waitTask();
      await rx.until((r) => r.deliveries.some((d) => d.tasks.some((x) => x['uid'] === next.uid)));
      expect(rx.attempts - mark).toBe(4);
    } finally {
      await t.client.deleteWebhook(hook.uuid);
    }
  });

  it('never holds up task processing: a receiver that hangs times out while tasks go on', async () => {
    const hook = await t.client.createWebhook({ url: rx.url });
    try {
      const attempts = rx.attempts;
      rx.failNext(3, 0);
      const started = Date.now();
      for (let i = 0; i < 3; i++) {
        const task = await t.client.index('hooked').addDocuments([{ id: 10 + i }]).waitTask({ timeout: 5_000 });
        expect(task.status).toBe('succeeded');
      }
      // Three tasks done while the receiver holds the first notification's attempts open.
      expect(Date.now() - started).toBeLessThan(3_000);
      // Each attempt times out (300 ms) and is retried; the later batches then get through.
      await rx.until((r) => r.attempts - attempts >= 3, 5_000);
      const last = (await t.client.tasks.getTasks({ limit: 1 })).results[0]!;
      await rx.until((r) => r.deliveries.some((d) => d.tasks.some((x) => x['uid'] === last.uid)), 5_000);
    } finally {
      await t.client.deleteWebhook(hook.uuid);
    }
  });

  it('notifies the command-line webhook, shown with the nil uuid and not editable', async () => {
    const cli = await startReceiver();
    const n = await startTestNode(['--task-webhook-url', cli.url, '--task-webhook-authorization-header', 'Bearer cli-token-0123456789']);
    try {
      const list = await n.client.getWebhooks();
      expect(list.results).toEqual([
        { uuid: '00000000-0000-0000-0000-000000000000', isEditable: false, url: cli.url, headers: { Authorization: 'Bearer cliXXXXX...' } },
      ]);
      const nil = '00000000-0000-0000-0000-000000000000';
      expect(await apiError(n.client.updateWebhook(nil, { url: 'https://e.com' }))).toMatchObject({ code: 'immutable_webhook' });
      expect(await apiError(n.client.deleteWebhook(nil))).toMatchObject({ code: 'immutable_webhook' });
      const task = await n.client.createIndex('cli').waitTask();
      await cli.until((r) => r.deliveries.some((d) => d.tasks.some((x) => x['uid'] === task.uid)));
      expect(cli.deliveries.at(-1)!.headers['authorization']).toBe('Bearer cli-token-0123456789');
    } finally {
      await n.close();
      await cli.close();
    }
  });
});
