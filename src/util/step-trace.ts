// Time spent in the named steps of one piece of work, as the reference reports it in a
// search's `performanceDetails` and a batch's `progressTrace`: each step is named by its
// path (`search > format`), a step met again (one per query of a federated search)
// accumulates, and durations read as Rust prints them (`{:.2?}`: `1.25ms`, `310.00µs`).
// Only built when asked for: the work it measures takes no extra step without one.

/** A duration in milliseconds, written as the reference writes durations. */
export function formatDuration(ms: number): string {
  const ns = Math.max(0, ms) * 1e6;
  if (ns >= 1e9) return `${(ns / 1e9).toFixed(2)}s`;
  if (ns >= 1e6) return `${(ns / 1e6).toFixed(2)}ms`;
  if (ns >= 1e3) return `${(ns / 1e3).toFixed(2)}µs`;
  return `${ns.toFixed(2)}ns`;
}

export class StepTrace {
  private readonly totals = new Map<string, number>();
  private readonly rootStart: number;
  private current: { path: string; start: number } | null = null;

  constructor(private readonly root: string) {
    this.rootStart = performance.now();
  }

  /** Starts the step `name` below the root, ending the one before it. */
  step(name: string): void {
    const now = performance.now();
    this.close(now);
    this.current = { path: `${this.root} > ${name}`, start: now };
  }

  /** Ends the current step without starting another. */
  end(): void {
    this.close(performance.now());
  }

  /** Adds time measured elsewhere to the step `name` below the root. */
  add(name: string, ms: number): void {
    const path = `${this.root} > ${name}`;
    this.totals.set(path, (this.totals.get(path) ?? 0) + ms);
  }

  /** Runs `fn` as the step `name`, ending it when `fn` settles. */
  async timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
    this.step(name);
    try {
      return await fn();
    } finally {
      this.end();
    }
  }

  /** The steps so far and the root, in the order they ended. */
  finish(): Record<string, string> {
    const now = performance.now();
    this.close(now);
    const out: Record<string, string> = {};
    for (const [path, ms] of this.totals) out[path] = formatDuration(ms);
    out[this.root] = formatDuration(now - this.rootStart);
    return out;
  }

  private close(now: number): void {
    const c = this.current;
    if (!c) return;
    this.current = null;
    this.totals.set(c.path, (this.totals.get(c.path) ?? 0) + (now - c.start));
  }
}
