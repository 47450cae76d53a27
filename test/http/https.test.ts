// The API over HTTPS (--ssl-*): the official client through a CA it trusts, client certificates
// optional or required, and TLS session resumption only when asked for.

import { readFileSync, rmSync } from 'node:fs';
import { request, type RequestOptions } from 'node:https';
import { connect, type ConnectionOptions } from 'node:tls';
import { request as plainRequest } from 'node:http';
import { Meilisearch } from 'meilisearch';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueCert, makeCa, type Pem } from '../helpers/certs.js';
import { startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { OptionsError, parseOptions } from '../../src/config/options.js';

const dir = tempDir('trine-https-');
let ca: Pem;
let server: Pem;
let client: Pem;
let stranger: Pem;
const nodes: TestNode[] = [];

beforeAll(() => {
  ca = makeCa(dir, 'trine-test-ca');
  server = issueCert(dir, ca, 'server', '127.0.0.1');
  client = issueCert(dir, ca, 'client');
  // A client certificate from an authority the node does not know.
  stranger = issueCert(dir, makeCa(dir, 'other-ca'), 'stranger');
});
afterAll(async () => {
  await Promise.all(nodes.map((n) => n.close()));
  rmSync(dir, { recursive: true, force: true });
});

async function node(...flags: string[]): Promise<TestNode> {
  const n = await startTestNode(['--ssl-cert-path', server.cert, '--ssl-key-path', server.key, ...flags]);
  nodes.push(n);
  return n;
}

function tlsOptions(cert?: Pem): RequestOptions {
  return { ca: readFileSync(ca.cert), ...(cert ? { cert: readFileSync(cert.cert), key: readFileSync(cert.key) } : {}), agent: false };
}

/** One HTTPS request; resolves with the status and body, rejects when TLS refuses. */
function get(url: string, path: string, tls: RequestOptions): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const req = request(`${url}${path}`, tls, (r) => {
      let body = '';
      r.on('data', (d) => (body += d));
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
      r.on('error', rej);
    });
    req.on('error', rej);
    req.end();
  });
}

/**
 * The official client, its requests sent by node:https with the test CA (and a client
 * certificate): the client's own fetch cannot be given a CA.
 */
function officialClient(url: string, cert?: Pem): Meilisearch {
  const tls = tlsOptions(cert);
  const httpClient = (input: Parameters<typeof fetch>[0], init?: RequestInit): Promise<unknown> =>
    new Promise((res, rej) => {
      const headers: Record<string, string> = {};
      new Headers(init?.headers).forEach((v, k) => (headers[k] = v));
      const req = request(String(input), { ...tls, method: init?.method ?? 'GET', headers }, (r) => {
        let text = '';
        r.on('data', (d) => (text += d));
        r.on('end', () => {
          const body = text === '' ? undefined : JSON.parse(text);
          if ((r.statusCode ?? 500) >= 400) rej(Object.assign(new Error(body?.message ?? text), { status: r.statusCode, body }));
          else res(body);
        });
      });
      req.on('error', rej);
      if (typeof init?.body === 'string') req.write(init.body);
      req.end();
    });
  return new Meilisearch({ host: url, httpClient });
}

describe('HTTPS', () => {
  it('serves the whole API to the official client, and nothing to plain HTTP', async () => {
    const n = await node();
    expect(n.url.startsWith('https://127.0.0.1:')).toBe(true);
    const ms = officialClient(n.url);
    await ms.index('movies').addDocuments([{ id: 1, title: 'Carol' }, { id: 2, title: 'Wonder Woman' }]).waitTask({ timeout: 60_000 });
    const found = await ms.index('movies').search('wondr');
    expect(found.hits.map((h) => h['id'])).toEqual([2]);
    expect(await ms.health()).toEqual({ status: 'available' });

    // A client that does not trust the certificate's authority gets no answer.
    await expect(get(n.url, '/health', { agent: false })).rejects.toThrow(/self[- ]signed|unable to verify|certificate/i);
    // Plain HTTP on the HTTPS port gets no API answer either.
    const plain = await new Promise<number | string>((res) => {
      const port = Number(new URL(n.url).port);
      const req = plainRequest({ host: '127.0.0.1', port, path: '/health' }, (r) => res(r.statusCode ?? 0));
      req.on('error', (e) => res(e.message));
      req.end();
    });
    expect(plain).not.toBe(200);
  });

  it('with --ssl-auth-path alone, accepts clients without a certificate and refuses a certificate from another authority', async () => {
    const n = await node('--ssl-auth-path', ca.cert);
    expect((await get(n.url, '/health', tlsOptions())).status).toBe(200);
    expect((await get(n.url, '/health', tlsOptions(client))).status).toBe(200);
    await expect(get(n.url, '/health', tlsOptions(stranger))).rejects.toThrow();
  });

  it('with --ssl-require-auth, serves only clients whose certificate the authority signed', async () => {
    const n = await node('--ssl-auth-path', ca.cert, '--ssl-require-auth');
    await expect(get(n.url, '/health', tlsOptions())).rejects.toThrow();
    await expect(get(n.url, '/health', tlsOptions(stranger))).rejects.toThrow();
    const ms = officialClient(n.url, client);
    await ms.createIndex('certified').waitTask({ timeout: 60_000 });
    expect((await ms.getIndex('certified')).uid).toBe('certified');
  });

  /** Whether a second connection resumes the first one's TLS session. */
  async function resumes(url: string, maxVersion: 'TLSv1.2' | 'TLSv1.3'): Promise<boolean> {
    const port = Number(new URL(url).port);
    const once = (session?: Buffer) =>
      new Promise<{ reused: boolean; session?: Buffer }>((res, rej) => {
        let got: Buffer | undefined;
        const opts: ConnectionOptions = { host: '127.0.0.1', port, ca: readFileSync(ca.cert), maxVersion, ...(session ? { session } : {}) };
        const s = connect(opts, () => s.write('GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'));
        s.on('session', (b: Buffer) => (got = b));
        s.on('data', () => {});
        s.on('end', () => res({ reused: s.isSessionReused(), ...(got ? { session: got } : {}) }));
        s.on('error', rej);
      });
    const first = await once();
    return (await once(first.session)).reused;
  }

  it('resumes TLS sessions only when asked: by session id with --ssl-resumption, by ticket with --ssl-tickets', async () => {
    const none = await node();
    expect(await resumes(none.url, 'TLSv1.2')).toBe(false);
    expect(await resumes(none.url, 'TLSv1.3')).toBe(false);
    const ids = await node('--ssl-resumption');
    expect(await resumes(ids.url, 'TLSv1.2')).toBe(true);
    const tickets = await node('--ssl-tickets');
    expect(await resumes(tickets.url, 'TLSv1.2')).toBe(true);
    expect(await resumes(tickets.url, 'TLSv1.3')).toBe(true);
  });

  it('refuses incomplete or unreadable TLS settings with a message that says what to fix', async () => {
    const parse = (...a: string[]) => parseOptions(['--db-path', dir, ...a], {});
    expect(() => parse('--ssl-cert-path', server.cert)).toThrow(/--ssl-cert-path and --ssl-key-path go together/);
    expect(() => parse('--ssl-require-auth')).toThrow(OptionsError);
    expect(() => parse('--ssl-cert-path', server.cert, '--ssl-key-path', server.key, '--ssl-require-auth')).toThrow(/needs --ssl-auth-path/);
    await expect(startTestNode(['--ssl-cert-path', `${dir}/missing.pem`, '--ssl-key-path', server.key])).rejects.toThrow(/--ssl-cert-path: cannot read/);
  });
});
