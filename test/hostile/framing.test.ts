import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clientErrorAnswer, writeSocketError } from '../../src/http/framework-errors.js';
import { startTestNode, type TestNode } from '../helpers/node.js';

// Requests refused before any route runs (by Node's HTTP parser or by Fastify) still get the
// one error shape, with a code from the table. Sent over a raw socket: an HTTP client library
// would refuse to send most of them.

let t: TestNode;
let port: number;
beforeAll(async () => {
  t = await startTestNode(['--http-payload-size-limit', '1 MiB']);
  port = Number(new URL(t.url).port);
});
afterAll(async () => {
  await t.close();
});

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `request` as is and reads one answer (the server closes the connection after an error). */
function rawRequest(request: string | Buffer, toPort = port, waitMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(toPort, '127.0.0.1');
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${waitMs} ms: ${Buffer.concat(chunks).toString()}`));
    }, waitMs);
    const tryParse = () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) headers[l.slice(0, l.indexOf(':')).toLowerCase()] = l.slice(l.indexOf(':') + 1).trim();
      const length = headers['content-length'] !== undefined ? Number(headers['content-length']) : null;
      const body = Buffer.from(text.slice(end + 4), 'latin1');
      if (length !== null && body.length < length) return;
      if (length === null && headers['transfer-encoding'] === 'chunked' && !text.endsWith('0\r\n\r\n')) return;
      clearTimeout(timer);
      socket.destroy();
      let content = body.toString('utf8');
      if (length === null && headers['transfer-encoding'] === 'chunked') content = content.replace(/^[0-9a-f]+\r\n/i, '').replace(/\r\n0\r\n\r\n$/, '');
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: content });
    };
    socket.on('data', (d) => {
      chunks.push(d);
      tryParse();
    });
    socket.on('end', tryParse);
    socket.on('error', reject);
    socket.write(request);
  });
}

const CODES: Record<number, string> = { 400: 'bad_request', 408: 'request_timeout', 413: 'payload_too_large', 417: 'expectation_failed', 431: 'request_header_fields_too_large' };

function expectError(a: RawAnswer, status: number, message?: RegExp): void {
  expect(a.status).toBe(status);
  expect(a.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(a.body) as Record<string, unknown>;
  expect(Object.keys(body)).toEqual(['message', 'code', 'type', 'link']);
  expect(body).toMatchObject({ code: CODES[status], type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${CODES[status]}` });
  if (message) expect(body['message']).toMatch(message);
}

const get = (path: string, headers = '') => `GET ${path} HTTP/1.1\r\nHost: x\r\n${headers}\r\n`;

describe('errors before any route runs have the error shape', () => {
  it('malformed percent-encoding in the path', async () => {
    for (const path of ['/indexes/%zz/settings', '/indexes/%%/settings', '/indexes/%FF/settings', '/indexes/%ED%A0%80/settings', '/%']) {
      expectError(await rawRequest(get(path)), 400, /^The request path `.*` is malformed/);
    }
  });

  it('a path segment of 10,000 characters is an invalid index uid, not a framework error', async () => {
    const a = await rawRequest(get(`/indexes/${'a'.repeat(10_000)}/settings`));
    expect(a.status).toBe(400);
    expect(JSON.parse(a.body)).toMatchObject({ code: 'invalid_index_uid' });
  });

  it('a request line or headers over the header size limit: a long query string, a huge cookie', async () => {
    expectError(await rawRequest(get(`/indexes?limit=${'1'.repeat(20_000)}`)), 431, /take more than \d+ bytes/);
    expectError(await rawRequest(get('/indexes', `Cookie: ${'c'.repeat(20_000)}\r\n`)), 431);
    expectError(await rawRequest(get('/indexes', Array.from({ length: 5000 }, (_, i) => `X-H${i}: v`).join('\r\n') + '\r\n')), 431);
  });

  it('bad framing: a transfer coding other than chunked, Content-Length with Transfer-Encoding, bad chunks, two lengths', async () => {
    const post = (headers: string, body: string) => `POST /indexes/x/search HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${headers}\r\n${body}`;
    expectError(await rawRequest(post('Transfer-Encoding: gzip, chunked\r\n', '2\r\n{}\r\n0\r\n\r\n')), 400, /Transfer-Encoding `gzip, chunked` is not supported/);
    expectError(await rawRequest(post('Content-Length: 2\r\nTransfer-Encoding: chunked\r\n', '2\r\n{}\r\n0\r\n\r\n')), 400, /not valid HTTP\/1\.1/);
    expectError(await rawRequest(post('Transfer-Encoding: chunked\r\n', 'zz\r\n{}\r\n0\r\n\r\n')), 400);
    expectError(await rawRequest(post('Content-Length: 2\r\nContent-Length: 3\r\n', '{}')), 400);
    expectError(await rawRequest(post('Content-Length: -1\r\n', '{}')), 400);
  });

  it('an unknown method, a bad request line, a bad header name, a bad HTTP version', async () => {
    expectError(await rawRequest('FOO /indexes HTTP/1.1\r\nHost: x\r\n\r\n'), 400, /Invalid method/);
    expectError(await rawRequest('GET /ind exes HTTP/1.1\r\nHost: x\r\n\r\n'), 400);
    expectError(await rawRequest('GET /indexes/a\x00b HTTP/1.1\r\nHost: x\r\n\r\n'), 400);
    expectError(await rawRequest('GET /indexes HTTP/1.1\r\nHo st: x\r\n\r\n'), 400);
    expectError(await rawRequest('GET /indexes HTTP/9.9\r\nHost: x\r\n\r\n'), 400);
  });

  it('a body over the payload limit, by its announced length or by its chunks', async () => {
    expectError(await rawRequest('POST /indexes/x/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999\r\n\r\n[]'), 413);
    const chunk = 'x'.repeat(65_536);
    const chunks = Array.from({ length: 20 }, () => `${chunk.length.toString(16)}\r\n${chunk}\r\n`).join('');
    expectError(await rawRequest(`POST /indexes/x/documents HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`), 413);
  });

  it('a body is read whole, sent with its length in many pieces or in chunked coding', async () => {
    // 600 KB of documents: read off the socket in many pieces, and prepared on the payload thread.
    const docs = (from: number) => Array.from({ length: 6000 }, (_, i) => JSON.stringify({ id: from + i, text: `piece ${from + i} ${'x'.repeat(70)}` })).join('\n');
    const withLength = Buffer.from(docs(0));
    const head = `POST /indexes/pieces/documents?primaryKey=id HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-ndjson\r\n`;
    const a = await rawRequest(Buffer.concat([Buffer.from(`${head}Content-Length: ${withLength.length}\r\n\r\n`), withLength]));
    expect(a.status).toBe(202);
    const text = docs(6000);
    const step = Math.ceil(text.length / 40);
    let chunked = '';
    for (let i = 0; i < text.length; i += step) {
      const piece = text.slice(i, i + step);
      chunked += `${Buffer.byteLength(piece).toString(16)}\r\n${piece}\r\n`;
    }
    const b = await rawRequest(`${head}Transfer-Encoding: chunked\r\n\r\n${chunked}0\r\n\r\n`);
    expect(b.status).toBe(202);
    for (const answer of [a, b]) {
      const { taskUid } = JSON.parse(answer.body) as { taskUid: number };
      expect(await t.client.tasks.waitForTask(taskUid)).toMatchObject({ status: 'succeeded', details: { receivedDocuments: 6000, indexedDocuments: 6000 } });
    }
    const stats = (await (await fetch(`${t.url}/indexes/pieces/stats`)).json()) as { numberOfDocuments: number };
    expect(stats.numberOfDocuments).toBe(12000);
    const last = (await (await fetch(`${t.url}/indexes/pieces/documents/11999`)).json()) as Record<string, unknown>;
    expect(last['text']).toBe(`piece 11999 ${'x'.repeat(70)}`);
  });

  it('an Expect other than 100-continue; a CONNECT is an unknown route', async () => {
    expectError(await rawRequest(get('/health', 'Expect: teapot\r\n')), 417, /Expect header `teapot`/);
    const c = await rawRequest('CONNECT example.org:443 HTTP/1.1\r\nHost: example.org:443\r\n\r\n');
    expect(c.status).toBe(404);
    expect(c.body).toBe('');
  });

  it('a request whose headers stop arriving is answered 408 with the error shape', async () => {
    // The node's own client-error handler on a server with a short headers timeout.
    const server: Server = createServer({ headersTimeout: 200, requestTimeout: 0, connectionsCheckingInterval: 50 }, (_req, res) => res.end());
    server.on('clientError', (err, socket) => {
      const api = clientErrorAnswer(err);
      if (api) writeSocketError(socket as import('node:net').Socket, api);
      else socket.destroy();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const addr = server.address() as { port: number };
      expectError(await rawRequest('GET /health HTTP/1.1\r\nHost: x\r\n', addr.port), 408, /not received in time/);
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });

  it('still answers after all of them', async () => {
    const r = await fetch(`${t.url}/health`);
    expect(await r.json()).toEqual({ status: 'available' });
  });
});
