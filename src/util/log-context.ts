import { AsyncLocalStorage } from 'node:async_hooks';

/** A pino-like logger; a request's child logger carries its `requestId` on every line. */
export interface ContextLogger {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

const storage = new AsyncLocalStorage<ContextLogger>();

/**
 * Runs `fn` with `log` as the logger of everything it starts, however deep: code below the HTTP
 * layer (replication, engine) logs through `loggerOr()` and so tags its lines with the request
 * being served, without a logger being passed down every call.
 */
export function runWithLogger<T>(log: ContextLogger, fn: () => T): T {
  return storage.run(log, fn);
}

/** The logger of the request being served, else `fallback`. */
export function loggerOr(fallback: ContextLogger): ContextLogger {
  return storage.getStore() ?? fallback;
}

/**
 * Runs `fn` outside any request. Background loops (the Raft driver, the batch executor) are
 * often kicked off by a request; without this they would inherit its context and tag their own
 * lines, which belong to no request, with that request's id.
 */
export function detached<T>(fn: () => T): T {
  return storage.exit(fn);
}
