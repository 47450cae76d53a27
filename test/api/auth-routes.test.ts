import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isGlobalAction } from '../../src/auth/actions.js';
import type { RouteDoc } from '../../src/http/route.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

/**
 * Every registered route (the app's routeDocs, so routes added later are covered without touching this
 * file) gets no key, a wrong key, a key lacking its action, a key for another index, an
 * expired key and the right key; each answer is checked.
 */

const MASTER = 'route-table-master-key-0123456789';
const INDEX = 'books';
// The OpenAPI document is public too: it describes the release, not the instance's data.
const PUBLIC = new Set(['/', '/health', '/cluster/health', '/openapi.json']);
const AUTH_CODES = new Set(['missing_authorization_header', 'invalid_api_key', 'missing_master_key']);

let t: TestNode;
let expired: string;
const keyCache = new Map<string, string>();

async function createKey(actions: string[], indexes: string[], expiresAt: string | null = null): Promise<string> {
  const r = await fetch(`${t.url}/keys`, {
    method: 'POST',
    headers: { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' },
    body: JSON.stringify({ actions, indexes, expiresAt }),
  });
  const body = (await r.json()) as { key: string };
  expect(r.status, JSON.stringify(body)).toBe(201);
  return body.key;
}

/** One key per (actions, indexes), created once: the table asks for the same ones many times. */
async function keyFor(actions: string[], indexes: string[]): Promise<string> {
  const id = `${actions.join(',')}|${indexes.join(',')}`;
  if (!keyCache.has(id)) keyCache.set(id, await createKey(actions, indexes));
  return keyCache.get(id)!;
}

function concretePath(r: RouteDoc): string {
  return r.url.replace(/:(\w+)/g, (_m, name: string) => {
    if (name === 'indexUid') return INDEX;
    if (name === 'taskUid' || name === 'batchUid') return '0';
    if (name === 'key') return '00000000-0000-0000-0000-000000000000';
    return 'x';
  });
}

async function send(r: RouteDoc, auth: string | null) {
  const headers: Record<string, string> = {};
  if (auth !== null) headers['authorization'] = auth;
  const withBody = r.method === 'POST' || r.method === 'PUT' || r.method === 'PATCH';
  if (withBody) headers['content-type'] = 'application/json';
  const res = await fetch(t.url + concretePath(r), { method: r.method as string, headers, ...(withBody ? { body: '{}' } : {}) });
  const text = await res.text();
  let body: Record<string, unknown> | null = null;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    body = null; // e.g. the Prometheus text of /metrics
  }
  return { status: res.status, body };
}

const invalid = {
  message: 'The provided API key is invalid.',
  code: 'invalid_api_key',
  type: 'auth',
  link: 'https://docs.meilisearch.com/errors#invalid_api_key',
};

beforeAll(async () => {
  t = await startTestNode(['--master-key', MASTER]);
  await t.client.createIndex(INDEX, { primaryKey: 'id' }).waitTask();
  const soon = new Date(Date.now() + 1500).toISOString();
  expired = await createKey(['*'], ['*'], soon);
  await new Promise((r) => setTimeout(r, 1600));
});
afterAll(async () => {
  await t.close();
});

describe('every route', () => {
  it('is registered with the key routes among them', () => {
    const names = t.node.app.routeDocs.map((r) => `${r.method} ${r.url}`);
    expect(names).toEqual(expect.arrayContaining(['POST /keys', 'GET /keys', 'GET /keys/:key', 'PATCH /keys/:key', 'DELETE /keys/:key', 'GET /indexes/:indexUid']));
  });

  it('answers each kind of key as the reference does', async () => {
    const failures: string[] = [];
    const check = (name: string, ok: boolean, got: unknown) => {
      if (!ok) failures.push(`${name}: ${JSON.stringify(got)}`);
    };
    for (const r of t.node.app.routeDocs) {
      const name = `${r.method} ${r.url}`;
      if (PUBLIC.has(r.url)) {
        const open = await send(r, null);
        check(`${name} without a key`, open.status === 200, open);
        continue;
      }
      const noKey = await send(r, null);
      check(`${name} without a key`, noKey.status === 401 && noKey.body?.['code'] === 'missing_authorization_header', noKey);
      const otherScheme = await send(r, `Basic ${MASTER}`);
      check(`${name} with another scheme`, otherScheme.status === 401, otherScheme);
      const wrong = await send(r, 'Bearer d4000bd7225f77d1eb22cc706ed36772bbc36767c016a27f76def7537b68600d');
      check(`${name} with a wrong key`, wrong.status === 403 && JSON.stringify(wrong.body) === JSON.stringify(invalid), wrong);
      const exp = await send(r, `Bearer ${expired}`);
      check(`${name} with an expired key`, exp.status === 403 && JSON.stringify(exp.body) === JSON.stringify(invalid), exp);

      const action = r.action;
      if (action === undefined) {
        // No declared action: only the master key may call it.
        const admin = await send(r, `Bearer ${await keyFor(['*'], ['*'])}`);
        check(`${name} with the admin key`, admin.status === 403, admin);
        continue;
      }
      const lacking = await keyFor([action === 'version' ? 'stats.get' : 'version'], ['*']);
      const lack = await send(r, `Bearer ${lacking}`);
      check(`${name} with a key lacking ${action}`, lack.status === 403 && JSON.stringify(lack.body) === JSON.stringify(invalid), lack);

      const global = isGlobalAction(action);
      const onIndex = r.url.includes(':indexUid');
      // A route needing two actions (`alsoRequires`) gets keys holding both.
      const actions = [action, ...(r.alsoRequires ?? [])];
      if (!global) {
        const other = await send(r, `Bearer ${await keyFor(actions, ['other*'])}`);
        if (onIndex) {
          const msg = `The API key cannot acces the index \`${INDEX}\`, authorized indexes are ["other*"].`;
          check(`${name} with a key for another index`, other.status === 403 && other.body?.['message'] === msg, other);
        } else {
          // Routes outside an index accept a scoped key holding the action.
          check(`${name} with a key for another index`, !AUTH_CODES.has(String(other.body?.['code'])), other);
        }
      }
      const right = await send(r, `Bearer ${await keyFor(actions, global || !onIndex ? ['*'] : [INDEX])}`);
      check(`${name} with the right key`, right.status < 500 && !AUTH_CODES.has(String(right.body?.['code'])), right);
      const master = await send(r, `Bearer ${MASTER}`);
      check(`${name} with the master key`, master.status < 500 && !AUTH_CODES.has(String(master.body?.['code'])), master);
    }
    expect(failures).toEqual([]);
  });

  it('lets CORS preflights and unknown routes through without a key', async () => {
    const pre = await fetch(`${t.url}/indexes`, { method: 'OPTIONS', headers: { origin: 'http://x', 'access-control-request-method': 'GET' } });
    expect(pre.status).toBe(204);
    const unknown = await fetch(`${t.url}/no-such-route`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe('');
  });

  it('answers a bare `Bearer` as a wrong key', async () => {
    const r = await fetch(`${t.url}/version`, { headers: { authorization: 'Bearer' } });
    expect(r.status).toBe(403);
    expect(await r.json()).toEqual(invalid);
  });
});

describe('index restrictions beyond the path', () => {
  it('hides other indexes from lists and refuses them in bodies', async () => {
    await t.client.createIndex('movies').waitTask();
    const scoped = await keyFor(['indexes.*', 'stats.get', 'tasks.get'], [INDEX]);
    const auth = { authorization: `Bearer ${scoped}` };
    const list = (await (await fetch(`${t.url}/indexes`, { headers: auth })).json()) as { results: { uid: string }[]; total: number };
    expect(list.results.map((i) => i.uid)).toEqual([INDEX]);
    expect(list.total).toBe(1);
    const stats = (await (await fetch(`${t.url}/stats`, { headers: auth })).json()) as { indexes: Record<string, unknown> };
    expect(Object.keys(stats.indexes)).toEqual([INDEX]);
    const tasks = (await (await fetch(`${t.url}/tasks`, { headers: auth })).json()) as { results: { indexUid: string | null }[] };
    expect(tasks.results.every((x) => x.indexUid === INDEX || x.indexUid === null)).toBe(true);
    expect(tasks.results.length).toBeGreaterThan(0);

    const post = (body: unknown, path = '/indexes') =>
      fetch(t.url + path, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const create = await post({ uid: 'movies2' });
    expect(create.status).toBe(403);
    expect(await create.json()).toEqual(invalid);
    expect((await post({ uid: INDEX })).status).toBe(202);
    const swap = await post([{ indexes: [INDEX, 'movies'] }], '/swap-indexes');
    expect(swap.status).toBe(403);
  });
});

describe('without a master key', () => {
  it('keeps every route open but /keys*, which answers missing_master_key', async () => {
    const open = await startTestNode();
    try {
      const missing = {
        message: 'Trine is running without a master key. To access this API endpoint, you must have set a master key at launch.',
        code: 'missing_master_key',
        type: 'auth',
        link: 'https://docs.meilisearch.com/errors#missing_master_key',
      };
      for (const [method, path] of [['GET', '/keys'], ['POST', '/keys'], ['GET', '/keys/x'], ['PATCH', '/keys/x'], ['DELETE', '/keys/x']] as const) {
        for (const auth of [undefined, 'Bearer anything']) {
          const r = await fetch(open.url + path, { method, headers: auth ? { authorization: auth } : {} });
          expect(r.status).toBe(401);
          expect(await r.json()).toEqual(missing);
        }
      }
      expect((await fetch(`${open.url}/indexes`)).status).toBe(200);
      expect((await fetch(`${open.url}/version`, { headers: { authorization: 'Bearer anything' } })).status).toBe(200);
    } finally {
      await open.close();
    }
  });
});
