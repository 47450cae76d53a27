import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deriveKey } from '../../src/auth/key-store.js';
import { parseUuid } from '../../src/util/uuid.js';
import { redactUrl } from '../../src/auth/request-auth.js';
import { parseExpiry } from '../../src/http/routes/keys.js';
import { parseOptions } from '../../src/config/options.js';
import { startNode } from '../../src/server/node.js';
import { freePort, startTestNode, tempDir, type TestNode } from '../helpers/node.js';

const MASTER = 'a-master-key-of-32-bytes-or-more';
let t: TestNode;

beforeAll(async () => {
  t = await startTestNode(['--master-key', MASTER]);
});
afterAll(async () => {
  await t.close();
});

async function call(method: string, path: string, body?: unknown, key: string | null = MASTER) {
  const headers: Record<string, string> = {};
  if (key !== null) headers['authorization'] = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const r = await fetch(t.url + path, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, any>) : null };
}

function err(code: string, message: string, type = 'invalid_request') {
  return { message, code, type, link: `https://docs.meilisearch.com/errors#${code}` };
}

const valid = { actions: ['search'], indexes: ['products'], expiresAt: null };

describe('key values', () => {
  it('derive as the reference does: hex HMAC-SHA256 of the uid under the master key', () => {
    // Vectors from the reference's own tests (master key `MASTER_KEY`).
    expect(deriveKey('MASTER_KEY', '4bc0887a-0e41-4f3b-935d-0c451dcee9c8')).toBe(
      'd9e776b8412f1db6974c9a5556b961c3559440b6588216f4ea5d9ed49f7c8f3c',
    );
    expect(deriveKey('MASTER_KEY', '00000000-0000-0000-0000-000000000000')).toBe(
      'aeb94973e0b6e912d94165430bbe87dee91a7c4f891ce19050c3910ec96977e9',
    );
  });

  it('parse uids in every form the reference accepts, and expiry dates in its four forms', () => {
    expect(parseUuid('4BC0887A0E414F3B935D0C451DCEE9C8')).toEqual({ uuid: '4bc0887a-0e41-4f3b-935d-0c451dcee9c8' });
    expect(parseUuid('{4bc0887a-0e41-4f3b-935d-0c451dcee9c8}')).toEqual({ uuid: '4bc0887a-0e41-4f3b-935d-0c451dcee9c8' });
    expect(parseUuid('aaaaabbbbbccc')).toEqual({ error: 'invalid length: expected length 32 for simple format, found 13' });
    expect(parseExpiry('2050-11-13')).toBe(Date.UTC(2050, 10, 13));
    expect(parseExpiry('2050-11-13 01:02:03')).toBe(Date.UTC(2050, 10, 13, 1, 2, 3));
    expect(parseExpiry('2050-11-13T01:02:03')).toBe(Date.UTC(2050, 10, 13, 1, 2, 3));
    expect(parseExpiry('2050-11-13T01:02:03.5+02:00')).toBe(Date.UTC(2050, 10, 12, 23, 2, 3, 500));
    expect(parseExpiry('2050-02-30')).toBeNull();
    expect(parseExpiry('13/11/2050')).toBeNull();
  });

  it('never appear in a logged URL', () => {
    expect(redactUrl('/keys/d9e776b8412f1db6974c9a5556b961c3559440b6588216f4ea5d9ed49f7c8f3c?x=1')).toBe('/keys/[redacted]?x=1');
    expect(redactUrl('/indexes/keys/search')).toBe('/indexes/keys/search');
  });
});

describe('/keys', () => {
  it('holds the four default keys from the first launch, newest first, never the master key', async () => {
    const r = await call('GET', '/keys');
    expect(r.status).toBe(200);
    expect(r.body!['total']).toBe(4);
    expect(r.body!['results'].map((k: any) => k.name)).toEqual([
      'Default Search API Key',
      'Default Admin API Key',
      'Default Read-Only Admin API Key',
      'Default Chat API Key',
    ]);
    const admin = r.body!['results'][1];
    expect(admin.actions).toEqual(['*']);
    expect(admin.indexes).toEqual(['*']);
    expect(admin.expiresAt).toBeNull();
    expect(admin.key).toBe(deriveKey(MASTER, admin.uid));
    expect(JSON.stringify(r.body)).not.toContain(MASTER);
    // The admin key may do anything, key management included; the search key may not list keys.
    expect((await call('GET', '/keys?limit=1', undefined, admin.key)).body!['results']).toHaveLength(1);
    const search = r.body!['results'][0];
    expect((await call('GET', '/keys', undefined, search.key)).status).toBe(403);
  });

  it('creates, reads by uid or value, renames and deletes a key through the official client', async () => {
    const c = t.client;
    const created = await c.createKey({ name: 'n', description: 'd', actions: ['documents.*'], indexes: ['movies*'], expiresAt: new Date('2050-11-13T00:00:00Z') });
    expect(Object.keys(created)).toEqual(['name', 'description', 'key', 'uid', 'actions', 'indexes', 'expiresAt', 'createdAt', 'updatedAt']);
    expect(created.expiresAt).toBe('2050-11-13T00:00:00Z');
    expect(created.key).toBe(deriveKey(MASTER, created.uid));
    expect((await c.getKey(created.uid)).name).toBe('n');
    expect((await c.getKey(created.key)).uid).toBe(created.uid);

    const updated = await c.updateKey(created.key, { name: 'renamed', description: null } as never);
    expect(updated.name).toBe('renamed');
    expect(updated.description).toBeNull();
    expect(updated.createdAt).toEqual(created.createdAt);

    const listed = await c.getKeys({ offset: 0, limit: 1 });
    expect(listed.results[0]!.uid).toBe(created.uid);
    expect(listed.total).toBe(5);

    await c.deleteKey(created.uid);
    const gone = await call('GET', `/keys/${created.uid}`);
    expect(gone.status).toBe(404);
    expect(gone.body).toEqual(err('api_key_not_found', `API key \`${created.uid}\` not found.`));
  });

  it('answers 201 with a client-chosen uid, 409 when it exists, 204 on deletion', async () => {
    const uid = '4bc0887a-0e41-4f3b-935d-0c451dcee9c8';
    const r = await call('POST', '/keys', { ...valid, uid });
    expect(r.status).toBe(201);
    expect(r.body!['key']).toBe(deriveKey(MASTER, uid));
    const again = await call('POST', '/keys', { ...valid, uid });
    expect(again.status).toBe(409);
    expect(again.body).toEqual(err('api_key_already_exists', `\`uid\` field value \`${uid}\` is already an existing API key.`));
    const del = await call('DELETE', `/keys/${uid}`);
    expect(del.status).toBe(204);
    expect(del.body).toBeNull();
    expect((await call('DELETE', `/keys/${uid}`)).status).toBe(404);
  });

  it('validates every create field with the reference codes and messages', async () => {
    const cases: [unknown, number, ReturnType<typeof err>][] = [
      [{ actions: ['search'], expiresAt: null }, 400, err('missing_api_key_indexes', 'Missing field `indexes`')],
      [{ indexes: ['a'], expiresAt: null }, 400, err('missing_api_key_actions', 'Missing field `actions`')],
      [{ actions: ['search'], indexes: ['a'] }, 400, err('missing_api_key_expires_at', 'Missing field `expiresAt`')],
      [{ ...valid, description: { name: 'products' } }, 400, err('invalid_api_key_description', 'Invalid value type at `.description`: expected a string, but found an object: `{"name":"products"}`')],
      [{ ...valid, name: 13 }, 400, err('invalid_api_key_name', 'Invalid value type at `.name`: expected a string, but found a positive integer: `13`')],
      [{ ...valid, indexes: { name: 'products' } }, 400, err('invalid_api_key_indexes', 'Invalid value type at `.indexes`: expected an array, but found an object: `{"name":"products"}`')],
      [
        { ...valid, indexes: ['invalid index # / \\name with spaces'] },
        400,
        err('invalid_api_key_indexes', 'Invalid value at `.indexes[0]`: `invalid index # / \\name with spaces` is not a valid index uid pattern. Index uid patterns can be an integer or a string containing only alphanumeric characters, hyphens (-), underscores (_), and optionally end with a star (*).'),
      ],
      [{ ...valid, actions: { name: 'products' } }, 400, err('invalid_api_key_actions', 'Invalid value type at `.actions`: expected an array, but found an object: `{"name":"products"}`')],
      [{ ...valid, expiresAt: { name: 'products' } }, 400, err('invalid_api_key_expires_at', 'Invalid value type at `.expiresAt`: expected a string, but found an object: `{"name":"products"}`')],
      [
        { ...valid, expiresAt: '2010-11-13T00:00:00Z' },
        400,
        err('invalid_api_key_expires_at', "Invalid value at `.expiresAt`: `2010-11-13T00:00:00Z` is not a valid date. It should follow the RFC 3339 format to represents a date or datetime in the future or specified as a null value. e.g. 'YYYY-MM-DD' or 'YYYY-MM-DD HH:MM:SS'.\n"),
      ],
      [{ ...valid, uid: 'aaaaabbbbbccc' }, 400, err('invalid_api_key_uid', 'Invalid value at `.uid`: invalid length: expected length 32 for simple format, found 13')],
      [{ ...valid, doggo: 1 }, 400, err('bad_request', 'Unknown field `doggo`: expected one of `description`, `name`, `uid`, `actions`, `indexes`, `expiresAt`')],
    ];
    for (const [body, status, expected] of cases) {
      const r = await call('POST', '/keys', body);
      expect({ status: r.status, body: r.body }).toEqual({ status, body: expected });
    }
    const unknownAction = await call('POST', '/keys', { ...valid, actions: ['doc.add'] });
    expect(unknownAction.body!['code']).toBe('invalid_api_key_actions');
    expect(unknownAction.body!['message']).toMatch(/^Unknown value `doc\.add` at `\.actions\[0\]`: expected one of `\*`, `search`, `documents\.\*`, .*`dynamicSearchRules\.\*`$/);
    const scoped = await call('POST', '/keys', { actions: ['search', 'version'], indexes: ['products'], expiresAt: null });
    expect(scoped.status).toBe(400);
    expect(scoped.body!['code']).toBe('index_scoped_api_key_with_global_action');
    expect((await call('POST', '/keys', { actions: ['version'], indexes: ['*'], expiresAt: null })).status).toBe(201);
  });

  it('lets PATCH change name and description only', async () => {
    const { body: k } = await call('POST', '/keys', valid);
    for (const [field, code] of [
      ['uid', 'immutable_api_key_uid'],
      ['actions', 'immutable_api_key_actions'],
      ['indexes', 'immutable_api_key_indexes'],
      ['expiresAt', 'immutable_api_key_expires_at'],
      ['createdAt', 'immutable_api_key_created_at'],
      ['updatedAt', 'immutable_api_key_updated_at'],
    ] as const) {
      const r = await call('PATCH', `/keys/${k!['uid']}`, { [field]: 'x' });
      expect(r.status).toBe(400);
      expect(r.body).toEqual(err(code, `Immutable field \`${field}\`: expected one of \`description\`, \`name\``));
    }
    const unknown = await call('PATCH', `/keys/${k!['uid']}`, { doggo: 'bork' });
    expect(unknown.body).toEqual(err('bad_request', 'Unknown field `doggo`: expected one of `description`, `name`'));
    const badName = await call('PATCH', `/keys/${k!['uid']}`, { name: 13 });
    expect(badName.body).toEqual(err('invalid_api_key_name', 'Invalid value type at `.name`: expected a string, but found a positive integer: `13`'));
    const missing = await call('PATCH', '/keys/d0552b41d0552b41536279a0ad88bd595327b96f01176a60c2243e906c52ac02375f9bc4', {});
    expect(missing.body).toEqual(
      err('api_key_not_found', 'API key `d0552b41d0552b41536279a0ad88bd595327b96f01176a60c2243e906c52ac02375f9bc4` not found.'),
    );
  });

  it('validates list parameters', async () => {
    const r = await call('GET', '/keys?limit=abc');
    expect(r.body).toEqual(err('invalid_api_key_limit', 'Invalid value in parameter `limit`: could not parse `abc` as a positive integer'));
    expect((await call('GET', '/keys?offset=-1')).body!['code']).toBe('invalid_api_key_offset');
    const page = await call('GET', '/keys?offset=1&limit=2');
    expect(page.body!['results']).toHaveLength(2);
    expect([page.body!['offset'], page.body!['limit']]).toEqual([1, 2]);
  });
});

describe('keys across restarts', () => {
  it('keep their uids and values, and the defaults are not created twice', async () => {
    const dir = tempDir();
    let n = await startTestNode(['--master-key', MASTER], dir);
    const created = await n.client.createKey({ actions: ['search'], indexes: ['*'], expiresAt: null });
    const before = (await n.client.getKeys()).results.map((k) => [k.uid, k.key]);
    expect(before).toHaveLength(5);
    await n.close({ keepData: true });
    n = await startTestNode(['--master-key', MASTER], dir);
    try {
      const after = (await n.client.getKeys()).results.map((k) => [k.uid, k.key]);
      expect(after).toEqual(before);
      const r = await fetch(`${n.url}/indexes`, { headers: { authorization: `Bearer ${created.key}` } });
      expect(r.status).toBe(403);
      const s = await fetch(`${n.url}/keys/${created.key}`, { headers: { authorization: `Bearer ${MASTER}` } });
      expect(s.status).toBe(200);
    } finally {
      await n.close();
    }
  });

  it('a different master key derives different values: old values stop working', async () => {
    const dir = tempDir();
    let n = await startTestNode(['--master-key', MASTER], dir);
    const old = (await n.client.getKeys()).results.find((k) => k.actions.includes('*'))!;
    await n.close({ keepData: true });
    n = await startTestNode(['--master-key', 'another-master-key-32-bytes-long'], dir);
    try {
      const r = await fetch(`${n.url}/version`, { headers: { authorization: `Bearer ${old.key}` } });
      expect(r.status).toBe(403);
      const now = await n.client.getKey(old.uid);
      expect(now.key).toBe(deriveKey('another-master-key-32-bytes-long', old.uid));
      expect((await fetch(`${n.url}/version`, { headers: { authorization: `Bearer ${now.key}` } })).status).toBe(200);
    } finally {
      await n.close();
    }
  });
});

describe('logs', () => {
  it('never hold a key value, the master key or a bearer token, even at trace level', async () => {
    const lines: string[] = [];
    const dir = tempDir();
    const port = await freePort();
    const options = parseOptions(['--db-path', dir, '--http-addr', `127.0.0.1:${port}`, '--log-level', 'trace', '--master-key', MASTER], {});
    const node = await startNode(options, { logStream: { write: (l: string) => void lines.push(l) } });
    try {
      const url = `http://127.0.0.1:${port}`;
      const auth = { authorization: `Bearer ${MASTER}`, 'content-type': 'application/json' };
      const created = (await (await fetch(`${url}/keys`, { method: 'POST', headers: auth, body: JSON.stringify(valid) })).json()) as { key: string };
      await fetch(`${url}/keys/${created.key}`, { headers: auth });
      await fetch(`${url}/keys/${created.key}`, { method: 'PATCH', headers: auth, body: '{"name":"x"}' });
      await fetch(`${url}/indexes`, { headers: { authorization: `Bearer ${created.key}` } });
      await fetch(`${url}/indexes`, { headers: { authorization: 'Bearer wrong-token-value' } });
      const all = lines.join('');
      expect(all).toContain('incoming request');
      expect(all).toContain('/keys/[redacted]');
      for (const secret of [MASTER, created.key, 'wrong-token-value']) expect(all).not.toContain(secret);
    } finally {
      await node.close();
    }
  });
});
