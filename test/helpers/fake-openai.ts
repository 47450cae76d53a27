// A fake OpenAI chat completions server for tests: streams server-sent events like the real
// one, and plays a scripted model: while the conversation has no tool result yet it asks for a
// search (`_meiliSearchInIndex`, its arguments split over two chunks), then answers with the
// text of the tool results it was given.

import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  url: string;
  headers: IncomingHttpHeaders;
  body: Record<string, any>;
}

export interface FakeOpenAi {
  /** The base URL to configure (`…/v1`). */
  url: string;
  requests: SeenRequest[];
  /** The search the model asks for. */
  search: { index_uid: string; q: string; filter: string };
  /** When set, the next request is answered with this status and body instead. */
  failWith: { status: number; body: unknown } | null;
  close(): Promise<void>;
}

function chunk(delta: Record<string, unknown>, finish: string | null = null): string {
  const body = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'fake-model', choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }] };
  return `data: ${JSON.stringify(body)}\n\n`;
}

export async function startFakeOpenAi(): Promise<FakeOpenAi> {
  const fake: FakeOpenAi = {
    url: '',
    requests: [],
    search: { index_uid: 'movies', q: 'alien', filter: '' },
    failWith: null,
    close: async () => undefined,
  };
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (c: Buffer) => parts.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(parts).toString()) as Record<string, any>;
      fake.requests.push({ url: req.url ?? '', headers: req.headers, body });
      if (fake.failWith) {
        const { status, body: errorBody } = fake.failWith;
        fake.failWith = null;
        res.writeHead(status, { 'content-type': 'application/json' });
        return res.end(JSON.stringify(errorBody));
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const messages = body['messages'] as { role: string; content?: string }[];
      const results = messages.filter((m) => m.role === 'tool');
      if (results.length === 0) {
        const args = JSON.stringify(fake.search);
        const cut = Math.floor(args.length / 2);
        res.write(chunk({ role: 'assistant', content: null, tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: '_meiliSearchInIndex', arguments: args.slice(0, cut) } }] }));
        res.write(chunk({ tool_calls: [{ index: 0, function: { arguments: args.slice(cut) } }] }));
        res.write(chunk({}, 'tool_calls'));
      } else {
        res.write(chunk({ role: 'assistant', content: 'Found: ' }));
        res.write(chunk({ content: results.map((m) => m.content ?? '').join(' | ') }));
        res.write(chunk({}, 'stop'));
        if (body['stream_options']?.include_usage) {
          res.write(`data: ${JSON.stringify({ id: 'chatcmpl-fake', object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`);
        }
      }
      res.end('data: [DONE]\n\n');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  fake.close = () => new Promise((resolve) => server.close(() => resolve()));
  return fake;
}
