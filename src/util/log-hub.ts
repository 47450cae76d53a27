// Where the node's log lines go: standard output, filtered by a target that `POST /logs/stderr`
// can change at runtime, and at most one `POST /logs/stream` listener with its own target and
// format. The logger itself runs at the most verbose level any sink wants.

export const LOG_LEVELS = ['off', 'error', 'warn', 'info', 'debug', 'trace'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

/** pino's numeric levels. */
const PINO: Record<Exclude<LogLevelName, 'off'>, number> = { error: 50, warn: 40, info: 30, debug: 20, trace: 10 };
const NAMES: [number, string][] = [[60, 'FATAL'], [50, 'ERROR'], [40, 'WARN'], [30, 'INFO'], [20, 'DEBUG'], [10, 'TRACE']];

/**
 * A target filter as the reference writes them: comma-separated directives, each a level
 * (`info`), a target (`trine::http`, at `trace`) or both (`trine::raft=debug`). A line is kept
 * when the most specific directive naming its target (a prefix by `::` parts) allows its
 * level; lines of no named target follow the bare level, or are dropped without one.
 */
export class LogTargets {
  private constructor(
    private readonly fallback: number,
    private readonly directives: readonly { target: string; level: number }[],
  ) {}

  static parse(text: string): LogTargets {
    if (text.trim() === '') {
      throw new LogTargetError(
        'Empty string is not a valid target. If you want to get no logs use `OFF`. Usage: `info`, `trine=info`, or you can write multiple filters in one target: `trine::http=info,trine::raft=trace`',
      );
    }
    let fallback = Infinity;
    const directives: { target: string; level: number }[] = [];
    for (const raw of text.split(',')) {
      const part = raw.trim();
      if (part === '') continue;
      const eq = part.indexOf('=');
      const target = eq >= 0 ? part.slice(0, eq).trim() : part;
      const levelText = eq >= 0 ? part.slice(eq + 1).trim() : null;
      const bareLevel = eq < 0 ? levelOf(part) : undefined;
      if (bareLevel !== undefined) {
        fallback = bareLevel;
        continue;
      }
      if (!/^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*$/.test(target)) {
        throw new LogTargetError(`invalid filter directive \`${part}\`: \`${target}\` is not a target (targets look like \`trine::http\`)`);
      }
      let level = PINO.trace;
      if (levelText !== null) {
        const l = levelOf(levelText);
        if (l === undefined) throw new LogTargetError(`invalid filter directive \`${part}\`: \`${levelText}\` is not a level (expected one of ${LOG_LEVELS.join(', ')})`);
        level = l;
      }
      directives.push({ target, level });
    }
    // The most specific directive decides: longest target first.
    directives.sort((a, b) => b.target.length - a.target.length);
    return new LogTargets(fallback, directives);
  }

  static level(level: LogLevelName): LogTargets {
    return LogTargets.parse(level);
  }

  allows(target: string, level: number): boolean {
    for (const d of this.directives) {
      if (target === d.target || target.startsWith(d.target + '::')) return level >= d.level;
    }
    return level >= this.fallback;
  }

  /** The lowest level this filter may let through (Infinity: none). */
  get minLevel(): number {
    // Folded, not spread: a request may give any number of directives.
    return this.directives.reduce((min, d) => Math.min(min, d.level), this.fallback);
  }
}

export class LogTargetError extends Error {}

function levelOf(text: string): number | undefined {
  const t = text.toLowerCase();
  if (t === 'off') return Infinity;
  return (PINO as Record<string, number>)[t];
}

/** The target of a log line: its own `target` field, else where it comes from. */
export function lineTarget(line: Record<string, unknown>): string {
  if (typeof line['target'] === 'string') return line['target'];
  return typeof line['requestId'] === 'string' ? 'trine::http' : 'trine';
}

/** A line as a person reads it: time, level, target, message, then the other fields. */
export function humanLine(line: Record<string, unknown>, target: string): string {
  const level = typeof line['level'] === 'number' ? line['level'] : 30;
  const name = NAMES.find(([n]) => level >= n)?.[1] ?? 'TRACE';
  const time = typeof line['time'] === 'number' ? new Date(line['time']).toISOString() : new Date().toISOString();
  const skip = new Set(['level', 'time', 'msg', 'pid', 'hostname', 'target']);
  const fields = Object.entries(line)
    .filter(([k]) => !skip.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(' ');
  return `${time} ${name.padStart(5)} ${target}: ${String(line['msg'] ?? '')}${fields ? ' ' + fields : ''}\n`;
}

export interface LogListener {
  targets: LogTargets;
  mode: 'human' | 'json';
  write(text: string): void;
  /** Called when the slot is taken back (`DELETE /logs/stream`). */
  end(): void;
}

/**
 * The logger's destination. Lines arrive as pino writes them (one JSON object per line);
 * each sink takes those its filter allows. `setLevel` is told the most verbose level needed.
 */
export class LogHub {
  private listener: LogListener | null = null;
  setLevel: (level: string) => void = () => {};

  constructor(
    private readonly out: { write(line: string): void },
    private console: LogTargets,
    /** How lines go to `out`: readable (`human`) or as pino writes them (`json`). */
    private readonly consoleMode: 'human' | 'json' = 'json',
  ) {}

  write(raw: string): void {
    let line: Record<string, unknown> | null = null;
    const parsed = () => (line ??= JSON.parse(raw) as Record<string, unknown>);
    try {
      const l = parsed();
      const target = lineTarget(l);
      const level = typeof l['level'] === 'number' ? l['level'] : 30;
      if (this.console.allows(target, level)) this.out.write(this.consoleMode === 'json' ? raw : humanLine(l, target));
      const listener = this.listener;
      if (listener && listener.targets.allows(target, level)) listener.write(listener.mode === 'json' ? (raw.endsWith('\n') ? raw : raw + '\n') : humanLine(l, target));
    } catch {
      // Not one of pino's lines: it goes out as it is.
      this.out.write(raw);
    }
  }

  /** `POST /logs/stderr`: what goes to standard output from now on. */
  setConsole(targets: LogTargets): void {
    this.console = targets;
    this.adjust();
  }

  /** Takes the one listener slot; false when someone holds it. */
  attach(listener: LogListener): boolean {
    if (this.listener) return false;
    this.listener = listener;
    this.adjust();
    return true;
  }

  /** Frees the slot (when `listener` is given, only if it still holds it). */
  detach(listener?: LogListener): void {
    const current = this.listener;
    if (!current || (listener && current !== listener)) return;
    this.listener = null;
    this.adjust();
    current.end();
  }

  get busy(): boolean {
    return this.listener !== null;
  }

  private adjust(): void {
    const min = Math.min(this.console.minLevel, this.listener?.targets.minLevel ?? Infinity);
    const name = min === Infinity ? 'silent' : (Object.entries(PINO).find(([, n]) => n === min)?.[0] ?? 'info');
    this.setLevel(name);
  }
}
