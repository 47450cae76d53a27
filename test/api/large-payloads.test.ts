// Document payloads from 256 KiB on are parsed on a worker thread: the same answers as the
// serving thread gives for small ones, errors included.

import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/api-error.js';
import { parseDocumentsPayload, type PayloadFormat } from '../../src/engine/documents/parse-payload.js';
import { ASIDE_BYTES } from '../../src/http/payload/payload-parser.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
beforeAll(async () => {
  t = await startTestNode(['--http-payload-size-limit', '2 MiB']);
});
afterAll(async () => {
  await t.close();
});

const docs = (n: number, from = 0) => Array.from({ length: n }, (_, i) => ({ id: from + i, title: `title${from + i} ${'lorem ipsum '.repeat(8)}`, n: i % 7 }));

async function post(index: string, body: string | Buffer, headers: Record<string, string>) {
  const r = await fetch(`${t.url}/indexes/${index}/documents`, { method: 'POST', body, headers });
  return { status: r.status, body: (await r.json()) as { code?: string; message?: string; taskUid?: number } };
}

async function waitTask(uid: number) {
  return t.client.tasks.waitForTask(uid, { timeout: 60_000 });
}

/** What the serving thread answers for the same body: parsing it in this process. */
function inlineError(format: PayloadFormat, body: string): { code: string; message: string } {
  try {
    parseDocumentsPayload(format, Buffer.from(body));
  } catch (e) {
    if (e instanceof ApiError) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected the payload to be refused');
}

describe('large document payloads', () => {
  it('are added in every format, compressed or not, with the official client too', async () => {
    const json = JSON.stringify(docs(3000));
    expect(json.length).toBeGreaterThan(ASIDE_BYTES);
    const task = await t.client.index('big').addDocuments(docs(3000)).waitTask({ timeout: 60_000 });
    expect(task.status).toBe('succeeded');
    expect(task.details).toMatchObject({ receivedDocuments: 3000, indexedDocuments: 3000 });

    const ndjson = docs(3000, 3000).map((d) => JSON.stringify(d)).join('\n');
    const nd = await post('big', ndjson, { 'content-type': 'application/x-ndjson' });
    expect(nd.status).toBe(202);
    const csv = ['id,title,n', ...docs(3000, 6000).map((d) => `${d.id},"${d.title}",${d.n}`)].join('\n');
    const c = await post('big', csv, { 'content-type': 'text/csv' });
    expect(c.status).toBe(202);
    const zipped = gzipSync(Buffer.from(JSON.stringify(docs(3000, 9000))), { level: 0 });
    expect(zipped.length).toBeGreaterThan(ASIDE_BYTES);
    const z = await post('big', zipped, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(z.status).toBe(202);
    for (const uid of [nd.body.taskUid!, c.body.taskUid!, z.body.taskUid!]) {
      const done = await waitTask(uid);
      expect(done.status).toBe('succeeded');
      expect(done.details).toMatchObject({ receivedDocuments: 3000, indexedDocuments: 3000 });
    }
    const index = t.client.index('big');
    expect((await index.getStats()).numberOfDocuments).toBe(12_000);
    expect((await index.search('title11999')).hits[0]).toMatchObject({ id: 11999 });
    expect(await index.getDocument(9001)).toMatchObject({ id: 9001, n: 1 });
    expect(await index.getDocument(6001)).toMatchObject({ id: '6001', n: '1' });
  });

  it('several at once are all enqueued and added', async () => {
    const sent = await Promise.all([0, 1, 2, 3].map((k) => post('many', JSON.stringify(docs(2500, k * 2500)), { 'content-type': 'application/json' })));
    for (const s of sent) expect(s.status).toBe(202);
    for (const s of sent) expect((await waitTask(s.body.taskUid!)).status).toBe('succeeded');
    expect((await t.client.index('many').getStats()).numberOfDocuments).toBe(10_000);
  });

  it('are refused with the errors small ones get, enqueuing nothing', async () => {
    const before = (await t.client.tasks.getTasks({ limit: 1 })).total;
    const head = JSON.stringify(docs(3000)).slice(0, -1);
    const cases: [PayloadFormat, string][] = [
      ['json', `${head},{"id": 1,}]`],
      ['json', `${head},42]`],
      ['json', `${head},{"id": 2}`],
      ['ndjson', `${docs(3000).map((d) => JSON.stringify(d)).join('\n')}\n{"id": 7`],
      ['csv', `id,title\n${docs(3000).map((d) => `${d.id},"${d.title}"`).join('\n')}\n1,"unterminated`],
    ];
    for (const [format, body] of cases) {
      expect(body.length).toBeGreaterThan(ASIDE_BYTES);
      const type = format === 'json' ? 'application/json' : format === 'ndjson' ? 'application/x-ndjson' : 'text/csv';
      const r = await post('refused', body, { 'content-type': type });
      const expected = inlineError(format, body);
      expect(r.status).toBe(400);
      expect({ code: r.body.code, message: r.body.message }).toEqual(expected);
    }
    const tooBig = await post('refused', JSON.stringify(docs(20_000)), { 'content-type': 'application/json' });
    expect(tooBig.status).toBe(413);
    expect(tooBig.body.code).toBe('payload_too_large');
    // Small once compressed, over the limit once decompressed.
    const noise = randomBytes(400_000).toString('hex');
    const bomb = gzipSync(Buffer.from(JSON.stringify([{ id: 1, noise, pad: 'a'.repeat(3 * 2 ** 20) }])));
    expect(bomb.length).toBeGreaterThan(ASIDE_BYTES);
    const z = await post('refused', bomb, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
    expect(z.status).toBe(413);
    expect(z.body.code).toBe('payload_too_large');
    expect((await t.client.tasks.getTasks({ limit: 1 })).total).toBe(before);
  });
});
