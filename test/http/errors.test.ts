import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode(['--http-payload-size-limit', '1 KiB']);
});
afterAll(async () => {
  await t.close();
});

function err(code: string, message: string, type = 'invalid_request') {
  return { message, code, type, link: `https://docs.meilisearch.com/errors#${code}` };
}

describe('exact error bodies', () => {
  it('payload over the limit → 413 payload_too_large, before and after decompression', async () => {
    const r = await t.node.app.inject({
      method: 'POST',
      url: '/indexes/x/documents',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify([{ id: 1, text: 'x'.repeat(2000) }]),
    });
    expect(r.statusCode).toBe(413);
    expect(r.json()).toEqual(
      err('payload_too_large', 'The provided payload reached the size limit. The maximum accepted payload size is 1 KiB.'),
    );
    const { gzipSync } = await import('node:zlib');
    const bomb = gzipSync(Buffer.from(JSON.stringify([{ id: 1, text: 'a'.repeat(100_000) }])));
    const z = await t.node.app.inject({
      method: 'POST',
      url: '/indexes/x/documents',
      headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
      payload: bomb,
    });
    expect(z.statusCode).toBe(413);
  });

  it('missing and wrong content types → 415', async () => {
    const missing = await t.node.app.inject({ method: 'POST', url: '/indexes', payload: Buffer.from('{"uid":"a"}') });
    expect(missing.statusCode).toBe(415);
    expect(missing.json()).toEqual(
      err('missing_content_type', 'A Content-Type header is missing. Accepted values for the Content-Type header are: `application/json`'),
    );
    const wrong = await t.node.app.inject({
      method: 'POST',
      url: '/indexes/a/documents',
      headers: { 'content-type': 'text/plain' },
      payload: '[]',
    });
    expect(wrong.statusCode).toBe(415);
    expect(wrong.json()).toEqual(
      err(
        'invalid_content_type',
        'The Content-Type `text/plain` is invalid. Accepted values for the Content-Type header are: `application/json`, `application/x-ndjson`, `text/csv`',
      ),
    );
  });

  it('empty and malformed JSON bodies → 400', async () => {
    const empty = await t.node.app.inject({ method: 'POST', url: '/indexes', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(empty.statusCode).toBe(400);
    expect(empty.json()).toEqual(err('missing_payload', 'A json payload is missing.'));
    const bad = await t.node.app.inject({ method: 'POST', url: '/indexes', headers: { 'content-type': 'application/json' }, payload: '{"uid":' });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().code).toBe('malformed_payload');
    expect(bad.json().message).toMatch(/^The json payload provided is malformed\. `.+`\.$/);
  });

  it('unknown fields and wrong types name the field and the expectation', async () => {
    const unknown = await t.node.app.inject({
      method: 'POST',
      url: '/indexes',
      headers: { 'content-type': 'application/json' },
      payload: { uid: 'a', primary: 'id' },
    });
    expect(unknown.json()).toEqual(err('bad_request', 'Unknown field `primary`: expected one of `uid`, `primaryKey`'));
    const type = await t.node.app.inject({
      method: 'POST',
      url: '/indexes',
      headers: { 'content-type': 'application/json' },
      payload: { uid: 'a', primaryKey: 3 },
    });
    expect(type.json()).toEqual(
      err('invalid_index_primary_key', 'Invalid value type at `.primaryKey`: expected a string, but found a positive integer: `3`'),
    );
    const missingUid = await t.node.app.inject({
      method: 'POST',
      url: '/indexes',
      headers: { 'content-type': 'application/json' },
      payload: {},
    });
    expect(missingUid.json()).toEqual(err('missing_index_uid', 'Missing field `uid`'));
    const limit = await t.node.app.inject({ method: 'GET', url: '/indexes?limit=abc' });
    expect(limit.json()).toEqual(
      err('invalid_index_limit', 'Invalid value in parameter `limit`: could not parse `abc` as a positive integer'),
    );
  });

  it('unknown routes answer an empty 404 and a trailing slash is ignored', async () => {
    const r = await t.node.app.inject({ method: 'GET', url: '/nothing-here' });
    expect(r.statusCode).toBe(404);
    expect(r.body).toBe('');
    const h = await t.node.app.inject({ method: 'GET', url: '/health/' });
    expect(h.json()).toEqual({ status: 'available' });
  });

  it('compresses responses when asked and answers CORS preflights', async () => {
    const big = await t.node.app.inject({ method: 'GET', url: '/tasks?limit=1000', headers: { 'accept-encoding': 'gzip' } });
    expect(big.statusCode).toBe(200);
    const pre = await t.node.app.inject({
      method: 'OPTIONS',
      url: '/indexes/movies/search',
      headers: { origin: 'https://example.com', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type' },
    });
    expect(pre.statusCode).toBeLessThan(300);
    expect(pre.headers['access-control-allow-origin']).toBe('*');
    expect(pre.headers['access-control-allow-headers']).toBe('authorization, content-type');
    expect(Number(pre.headers['access-control-max-age'])).toBeGreaterThanOrEqual(86400);
  });
});
