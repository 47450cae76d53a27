// What several benchmark suites share: process figures from /proc, percentiles, task waits
// and the misspelling generator.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** A figure of a process's /proc status (Linux), in bytes: VmHWM is its peak resident memory. */
export function procStatus(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

export function diskSize(dir: string): number {
  let total = 0;
  for (const f of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, f.name);
    try {
      total += f.isDirectory() ? diskSize(p) : statSync(p).size;
    } catch {
      // removed by a compaction while listed
    }
  }
  return total;
}

export function pct(times: readonly number[], p: number): number {
  if (times.length === 0) return NaN;
  const s = [...times].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export interface Timing {
  p50: number;
  p95: number;
  p99: number;
}

export function timing(times: readonly number[]): Timing {
  return { p50: pct(times, 50), p95: pct(times, 95), p99: pct(times, 99) };
}

export async function post(url: string, path: string, body: unknown, type = 'application/json'): Promise<Response> {
  return fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': type }, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

export async function waitTask(url: string, uid: number, pollMs = 20): Promise<void> {
  for (;;) {
    const t = (await (await fetch(`${url}/tasks/${uid}`)).json()) as { status: string; error: unknown };
    if (t.status === 'succeeded') return;
    if (t.status === 'failed' || t.status === 'canceled') throw new Error(`task ${uid} ${t.status}: ${JSON.stringify(t.error)}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** A misspelling of `w` that keeps its first letter: a deletion, a swap or a vowel changed. */
export function misspell(w: string, r: () => number): string {
  const i = 1 + Math.floor(r() * (w.length - 1));
  const kind = Math.floor(r() * 3);
  if (kind === 0) return w.slice(0, i) + w.slice(i + 1);
  if (kind === 1 && i + 1 < w.length) return w.slice(0, i) + w[i + 1] + w[i] + w.slice(i + 2);
  const c = 'aeiou'.replace(w[i]!, '')[Math.floor(r() * 4)] ?? 'e';
  return w.slice(0, i) + c + w.slice(i + 1);
}
