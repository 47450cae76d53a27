import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, ROOT, tempDir } from './node.js';

export interface ServerStats {
  /** `UP`, `DOWN`, `UP 1/2` (going down)... */
  status: string;
  /** HTTP answers with a 2xx status the server gave through the balancer. */
  ok: number;
}

export interface Balancer {
  url: string;
  /** HAProxy's view of each server, by server name (n1, n2...). */
  stats(): Promise<Record<string, ServerStats>>;
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// HAProxy processes still running when this process ends are killed with it.
const live = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of live) if (p.pid !== undefined) killGroup(p.pid);
});

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** Installs HAProxy through the project's own script when it is missing (Debian's package, as root). */
export function ensureHaproxy(): void {
  execFileSync('bash', [join(ROOT, 'cluster/ensure-haproxy.sh')], { stdio: 'inherit' });
}

/**
 * HAProxy with the project's `cluster/haproxy.cfg` (health checks, timeouts, balancing) in front
 * of the nodes listening on `ports`: only its address, servers and statistics socket change.
 */
export async function startHaproxy(ports: number[]): Promise<Balancer> {
  ensureHaproxy();
  const port = await freePort();
  const dir = tempDir('trine-lb-');
  const cfg = join(dir, 'haproxy.cfg');
  const sock = join(dir, 'stats.sock');
  const text = readFileSync(join(ROOT, 'cluster/haproxy.cfg'), 'utf8')
    .replace(/^listen stats[\s\S]*$/m, '')
    .replace(/^(global\n)/m, `$1    stats socket ${sock} level admin\n`)
    .replace('bind 127.0.0.1:7700', `bind 127.0.0.1:${port}`)
    .replace(/^\s*server .*\n/gm, '')
    .replace(/^(\s*default-server .*\n)/m, (line) => line + ports.map((p, i) => `    server n${i + 1} 127.0.0.1:${p} check\n`).join(''));
  writeFileSync(cfg, text);
  // Its own process group: stopping it ends everything it started.
  const proc = spawn('haproxy', ['-f', cfg, '-db'], { stdio: 'ignore', detached: true });
  live.add(proc);
  proc.once('exit', () => live.delete(proc));
  const url = `http://127.0.0.1:${port}`;
  const stats = async (): Promise<Record<string, ServerStats>> => {
    const { createConnection } = await import('node:net');
    const csv = await new Promise<string>((resolve, reject) => {
      let out = '';
      const c = createConnection(sock, () => c.write('show stat\n'));
      c.on('data', (d) => (out += d));
      c.on('end', () => resolve(out));
      c.on('error', reject);
    });
    const rows = csv.split('\n').map((l) => l.split(','));
    const header = rows[0]!;
    const at = (name: string) => header.findIndex((h) => h.replace('# ', '') === name);
    const out: Record<string, ServerStats> = {};
    for (const r of rows.slice(1)) {
      if (r[at('pxname')] !== 'nodes' || !/^n\d+$/.test(r[at('svname')] ?? '')) continue;
      out[r[at('svname')]!] = { status: r[at('status')]!, ok: Number(r[at('hrsp_2xx')] || 0) };
    }
    return out;
  };
  for (let i = 0; i < 200; i++) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited with ${proc.exitCode}`);
    if ((await fetch(`${url}/health`).catch(() => null))?.ok) break;
    await sleep(50);
  }
  return {
    url,
    stats,
    async stop() {
      if (proc.pid !== undefined && proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        killGroup(proc.pid);
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
