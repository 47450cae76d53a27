import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestNode, type TestNode } from '../helpers/node.js';

let t: TestNode;
const stdout: string[] = [];

beforeAll(async () => {
  t = await startTestNode(['--log-level', 'warn', '--experimental-logs-mode', 'json'], undefined, { logStream: { write: (l: string) => void stdout.push(l) } });
});
afterAll(async () => {
  await t.close();
});

async function call(method: string, path: string, body?: unknown) {
  const r = await fetch(t.url + path, {
    method,
    ...(body !== undefined ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
  });
  const text = await r.text();
  return { status: r.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

/** An open `POST /logs/stream`, collecting what it sends. */
async function openStream(body: unknown) {
  // A client that went away frees the route once the server has seen its connection close.
  for (let i = 0; i < 100 && t.node.ctx.logs.busy; i++) await new Promise((r) => setTimeout(r, 20));
  const abort = new AbortController();
  const r = await fetch(`${t.url}/logs/stream`, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' }, signal: abort.signal });
  expect(r.status).toBe(200);
  let text = '';
  let ended = false;
  const reader = r.body!.getReader();
  const pump = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        text += Buffer.from(value).toString();
      }
    } catch {
      // aborted
    }
    ended = true;
  })();
  return {
    response: r,
    get text() {
      return text;
    },
    get ended() {
      return ended;
    },
    async until(pred: (text: string) => boolean, ms = 10_000) {
      const end = Date.now() + ms;
      while (!pred(text)) {
        if (Date.now() > end) throw new Error(`stream: condition not met; got:\n${text}`);
        await new Promise((res) => setTimeout(res, 20));
      }
    },
    async close() {
      abort.abort();
      await pump;
    },
  };
}

async function addDocs(id: number) {
  const r = await call('POST', '/indexes/logged/documents', [{ id }]);
  await t.client.tasks.waitForTask(r.body!['taskUid'] as number);
}

describe('/logs routes', () => {
  it('need the logsRoute experimental feature', async () => {
    const message =
      'Modifying logs through the `/logs/*` routes requires enabling the `logs route` experimental feature. See https://github.com/orgs/meilisearch/discussions/721';
    for (const [method, path, body] of [['POST', '/logs/stream', {}], ['DELETE', '/logs/stream', undefined], ['POST', '/logs/stderr', {}]] as const) {
      const r = await call(method, path, body);
      expect(r.status, `${method} ${path}`).toBe(400);
      expect(r.body).toMatchObject({ code: 'feature_not_enabled', message });
    }
    await t.client.updateExperimentalFeatures({ logsRoute: true });
  });

  it('streams the lines of the chosen targets at the chosen level, as JSON lines', async () => {
    const s = await openStream({ target: 'trine::http=debug', mode: 'json' });
    try {
      expect(s.response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
      await addDocs(1);
      await s.until((x) => x.includes('"task enqueued"'));
      const lines = s.text.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
      const enqueued = lines.find((l) => l['msg'] === 'task enqueued')!;
      expect(enqueued).toMatchObject({ level: 20, type: 'documentAdditionOrUpdate', indexUid: 'logged' });
      expect(typeof enqueued['requestId']).toBe('string');
      // Background lines are of the `trine` target, not asked for.
      expect(lines.every((l) => typeof l['requestId'] === 'string')).toBe(true);
    } finally {
      await s.close();
    }
  });

  it('streams in a human-readable form by default, and one listener at a time', async () => {
    const s = await openStream({ target: 'trine=debug' });
    try {
      expect(s.response.headers.get('content-type')).toMatch(/^text\/plain/);
      const busy = await call('POST', '/logs/stream', {});
      expect(busy).toEqual({
        status: 400,
        body: {
          message: 'The `/logs/stream` route is currently in use by someone else.',
          code: 'bad_request',
          type: 'invalid_request',
          link: 'https://docs.meilisearch.com/errors#bad_request',
        },
      });
      await addDocs(2);
      await s.until((x) => /DEBUG trine: batch processed/.test(x));
      expect(s.text).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z DEBUG trine(::http)?: /m);
      expect(s.text).toMatch(/DEBUG trine::http: task enqueued .*requestId=/);
      // DELETE ends the stream and frees the route.
      expect((await call('DELETE', '/logs/stream')).status).toBe(204);
      await s.until(() => s.ended);
    } finally {
      await s.close();
    }
    const next = await openStream({ target: 'off' });
    await next.close();
    // A client that goes away frees the route too.
    for (let i = 0; i < 50; i++) {
      if (!t.node.ctx.logs.busy) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(t.node.ctx.logs.busy).toBe(false);
  });

  it('changes what goes to standard output with /logs/stderr', async () => {
    const before = stdout.length;
    await addDocs(3);
    expect(stdout.slice(before).some((l) => l.includes('"task enqueued"'))).toBe(false);
    expect((await call('POST', '/logs/stderr', { target: 'trine::http=debug' })).status).toBe(204);
    const mark = stdout.length;
    await addDocs(4);
    expect(stdout.slice(mark).some((l) => l.includes('"task enqueued"'))).toBe(true);
    expect(stdout.slice(mark).some((l) => l.includes('"batch processed"'))).toBe(false);
    expect((await call('POST', '/logs/stderr', { target: 'off' })).status).toBe(204);
    const quiet = stdout.length;
    await addDocs(5);
    expect(stdout.length).toBe(quiet);
    expect((await call('POST', '/logs/stderr', { target: 'warn' })).status).toBe(204);
  });

  it('refuses bad bodies', async () => {
    const cases: [string, unknown, string][] = [
      ['/logs/stream', { target: '' }, 'Invalid value at `.target`: Empty string is not a valid target. If you want to get no logs use `OFF`.'],
      ['/logs/stream', { target: 'trine=loud' }, 'Invalid value at `.target`: invalid filter directive `trine=loud`: `loud` is not a level'],
      ['/logs/stream', { mode: 'xml' }, 'Unknown value `xml` at `.mode`: expected one of `human`, `json`, `profile`'],
      ['/logs/stream', { profileMemory: true }, 'Invalid value: `profile_memory` can only be used while profiling code and is not compatible with the Human mode.'],
      ['/logs/stream', { mode: 'profile' }, 'The `profile` mode (a Firefox profiler trace) is not available in Trine: use `human` or `json`.'],
      ['/logs/stream', { level: 'info' }, 'Unknown field `level`: expected one of `target`, `mode`, `profileMemory`'],
      ['/logs/stderr', { target: 3 }, 'Invalid value type at `.target`: expected a string, but found a positive integer: `3`'],
    ];
    for (const [path, body, message] of cases) {
      const r = await call('POST', path, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body!['code']).toBe('bad_request');
      expect(r.body!['message']).toContain(message);
    }
    expect(t.node.ctx.logs.busy).toBe(false);
  });
});
