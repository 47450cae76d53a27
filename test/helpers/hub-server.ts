// A local model hub: a real HTTP server that answers `/{model}/resolve/{revision}/{file}`
// as the hub does (with the commit in `x-repo-commit`), from generated models, and can be
// told to damage what it sends.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Fault = 'truncate' | 'cut' | 'garbage' | null;

export interface HubServer {
  url: string;
  /** Paths asked, in order. */
  requests: string[];
  /** Models served: id → files by path. */
  models: Map<string, Map<string, Buffer>>;
  /** How `file` is damaged when next served (until changed). */
  fault: { file: string; kind: Fault } | null;
  /** Waits this long before answering each request. */
  delayMs: number;
  close(): Promise<void>;
}

export const COMMIT = '0123456789abcdef0123456789abcdef01234567';

export async function startHubServer(): Promise<HubServer> {
  const hub: HubServer = { url: '', requests: [], models: new Map(), fault: null, delayMs: 0, close: async () => {} };
  const server: Server = createServer((req, res) => {
    if (hub.delayMs > 0) setTimeout(() => answer(req, res), hub.delayMs);
    else answer(req, res);
  });
  const answer = (req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url!, 'http://x').pathname);
    hub.requests.push(path);
    const m = /^\/(.+?)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const files = m ? hub.models.get(m[1]!) : undefined;
    const body = files?.get(m![3]!);
    if (!m || !files || !body || (m[2] !== 'main' && m[2] !== COMMIT)) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Entry not found');
      return;
    }
    const fault = hub.fault?.file === m[3] ? hub.fault.kind : null;
    const headers = { 'content-type': 'application/octet-stream', 'x-repo-commit': COMMIT };
    if (fault === 'cut') {
      // Announces the whole file, sends half, then drops the connection.
      res.writeHead(200, { ...headers, 'content-length': String(body.length) });
      res.write(body.subarray(0, body.length >> 1), () => res.destroy());
      return;
    }
    const sent = fault === 'truncate' ? body.subarray(0, body.length - 100) : fault === 'garbage' ? Buffer.from('<html>not a model</html>') : body;
    res.writeHead(200, { ...headers, 'content-length': String(sent.length) }).end(sent);
  };
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  hub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  hub.close = () =>
    new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    });
  return hub;
}
