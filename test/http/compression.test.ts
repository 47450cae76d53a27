import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode();
  const docs = Array.from({ length: 40 }, (_, i) => ({ id: i, title: `book ${i}`, text: `a long story about the sea, chapter ${i} of many`.repeat(4) }));
  await t.client.index('books').addDocuments(docs).waitTask();
});
afterAll(async () => {
  await t.close();
});

const decode: Record<string, (b: Buffer) => Buffer> = { br: brotliDecompressSync, gzip: gunzipSync, deflate: inflateSync };

async function search(acceptEncoding: string, limit: number) {
  return t.node.app.inject({
    method: 'POST',
    url: '/indexes/books/search',
    headers: { 'content-type': 'application/json', 'accept-encoding': acceptEncoding },
    payload: JSON.stringify({ q: 'story sea', limit }),
  });
}

// What differs between two answers to one search: its time and its request id.
const withoutTime = (body: Buffer) => ({ ...JSON.parse(body.toString('utf8')), processingTimeMs: 0, requestUid: '' });

describe('response compression', () => {
  it('answers in each encoding the client accepts, preferring brotli, with the same content', async () => {
    const plain = await search('identity', 40);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.rawPayload.length).toBeGreaterThan(8 * 1024);
    for (const [accept, encoding] of [['br', 'br'], ['gzip', 'gzip'], ['deflate', 'deflate'], ['gzip, deflate, br', 'br'], ['gzip, deflate', 'gzip']] as const) {
      const r = await search(accept, 40);
      expect(r.statusCode).toBe(200);
      expect(r.headers['content-encoding'], accept).toBe(encoding);
      expect(r.headers['vary']).toContain('accept-encoding');
      expect(r.rawPayload.length).toBeLessThan(plain.rawPayload.length / 2);
      expect(withoutTime(decode[encoding]!(r.rawPayload))).toEqual(withoutTime(plain.rawPayload));
    }
  });

  it('sends small answers as they are', async () => {
    const r = await t.node.app.inject({ method: 'GET', url: '/health', headers: { 'accept-encoding': 'gzip, br' } });
    expect(r.headers['content-encoding']).toBeUndefined();
    expect(r.json()).toEqual({ status: 'available' });
  });
});
