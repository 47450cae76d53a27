import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { createWriteStream, mkdirSync, rmSync, type WriteStream } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createGzip, type Gzip } from 'node:zlib';

/**
 * Writes a backup file under a temporary name and renames it into place once it is complete
 * and on disk, so that a crash or a failure never leaves a file under the final name that
 * could be taken for a whole one. Keeps a SHA-256 of the bytes written through `write`.
 */
export class AtomicFileWriter {
  private readonly tmp: string;
  private readonly out: WriteStream;
  private readonly gzip: Gzip | null;
  private readonly hash: Hash = createHash('sha256');
  private failure: Error | null = null;
  /** Aborts a wait for `drain` when the file fails (a failed file never drains). */
  private readonly failed = new AbortController();
  /** Small writes (one per dump record) are gathered into larger ones. */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Bytes written through `write` (before compression). */
  bytes = 0;

  constructor(
    readonly path: string,
    opts: { gzip?: boolean } = {},
  ) {
    mkdirSync(dirname(path), { recursive: true });
    this.tmp = `${path}.tmp-${process.pid}`;
    this.out = createWriteStream(this.tmp);
    this.out.on('error', (e) => this.fail(e));
    this.gzip = opts.gzip ? createGzip({ level: 6 }) : null;
    if (this.gzip) {
      this.gzip.on('error', (e) => this.fail(e));
      this.gzip.pipe(this.out);
    }
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.failed.abort();
  }

  /** Appends bytes that the checksum covers. */
  async write(buf: Buffer): Promise<void> {
    this.hash.update(buf);
    this.bytes += buf.length;
    this.pending.push(buf);
    this.pendingBytes += buf.length;
    if (this.pendingBytes >= 1024 * 1024) await this.flush();
  }

  /** Appends bytes the checksum does not cover (the checksum itself, an end marker). */
  async writeRaw(buf: Buffer): Promise<void> {
    await this.flush();
    await this.put(buf);
  }

  private async flush(): Promise<void> {
    if (this.pending.length === 0) return;
    const buf = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    await this.put(buf);
  }

  private async put(buf: Buffer): Promise<void> {
    if (this.failure) throw this.failure;
    const target = this.gzip ?? this.out;
    if (!target.write(buf)) {
      try {
        await once(target, 'drain', { signal: this.failed.signal });
      } catch (e) {
        throw this.failure ?? e;
      }
    }
    if (this.failure) throw this.failure;
  }

  /** SHA-256 of everything passed to `write` so far. */
  digest(): Buffer {
    return this.hash.copy().digest();
  }

  /** Flushes, syncs and renames the file into place. */
  async finish(): Promise<void> {
    await this.flush();
    const target = this.gzip ?? this.out;
    target.end();
    if (!this.out.closed) await once(this.out, 'close').catch(() => {});
    if (this.failure) throw this.failure;
    const fh = await open(this.tmp, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
    await rename(this.tmp, this.path);
    // The rename itself must survive a power loss too.
    const dir = await open(dirname(this.path), 'r');
    try {
      await dir.sync();
    } catch {
      // some file systems refuse to sync a directory; the file itself is on disk
    } finally {
      await dir.close();
    }
  }

  abort(): void {
    this.gzip?.destroy();
    this.out.destroy();
    rmSync(this.tmp, { force: true });
  }
}

export function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** A backup file that cannot be imported; the message says which file and what is wrong. */
export class BackupFileError extends Error {}
