import { createConnection, createServer, type Server, type Socket } from 'node:net';

export type ProxyMode = 'pass' | 'cut' | 'blackhole';

/**
 * A fault-injecting TCP proxy in front of one node's Raft port, used by one other node to
 * reach it. Faults model the network, not the process:
 * - `cut`: every open connection is reset and new ones are reset at once (a firewall REJECT);
 * - `blackhole`: connections stay open but bytes in both directions are dropped (a cable
 *   pulled; the HTTP/2 stream is torn when the mode ends, as it would be after a timeout);
 * - `pass`: bytes flow, optionally each chunk held back by `delayMs`.
 */
export class FaultProxy {
  private server: Server | null = null;
  private readonly conns = new Set<{ client: Socket; upstream: Socket }>();
  mode: ProxyMode = 'pass';
  delayMs = 0;
  port = 0;

  constructor(
    private readonly targetPort: number,
    private readonly host = '127.0.0.1',
  ) {}

  async listen(port = 0): Promise<number> {
    this.server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(port, this.host, () => resolve());
    });
    const addr = this.server.address();
    this.port = typeof addr === 'object' && addr ? addr.port : port;
    return this.port;
  }

  get addr(): string {
    return `${this.host}:${this.port}`;
  }

  private accept(client: Socket): void {
    if (this.mode === 'cut') {
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection({ host: this.host, port: this.targetPort });
    const pair = { client, upstream };
    this.conns.add(pair);
    const relay = (from: Socket, to: Socket) => {
      from.on('data', (chunk: Buffer) => {
        if (this.mode === 'blackhole') return;
        if (this.delayMs > 0) setTimeout(() => to.writable && to.write(chunk), this.delayMs);
        else if (!to.write(chunk)) {
          from.pause();
          to.once('drain', () => from.resume());
        }
      });
    };
    relay(client, upstream);
    relay(upstream, client);
    const close = () => {
      this.conns.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  }

  /** Resets every open connection (both sides see the peer go away). */
  private dropAll(): void {
    for (const { client, upstream } of this.conns) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    this.conns.clear();
  }

  cut(): void {
    this.mode = 'cut';
    this.dropAll();
  }

  blackhole(): void {
    this.mode = 'blackhole';
  }

  heal(): void {
    // Bytes dropped by a black hole leave the streams corrupt: start them afresh.
    if (this.mode === 'blackhole') this.dropAll();
    this.mode = 'pass';
    this.delayMs = 0;
  }

  async close(): Promise<void> {
    this.dropAll();
    if (this.server) await new Promise<void>((r) => this.server!.close(() => r()));
    this.server = null;
  }
}
