import { AsyncLocalStorage } from 'node:async_hooks';

/** A pino-like logger; a request's child logger carries its `requestId` on every line. */
export interface ContextLogger {
  error(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  debug(obj: unknown, msg?: string): void;
}

/**
 * The API key a request was authorized by: its uid and its creation time, which tells this
 * key from one created later under the same uid (clients may choose uids).
 */
export interface Authority {
  key: string;
  createdAt: number;
}

/** What code below the HTTP layer may know of the request it serves. */
interface RequestContext {
  log: ContextLogger;
  /** The API key that authorized the request; absent for the master key, or none. */
  authority?: Authority;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * Runs `fn` with `log` as the logger of everything it starts, however deep: code below the HTTP
 * layer (replication, engine) logs through `loggerOr()` and so tags its lines with the request
 * being served, without a logger being passed down every call.
 */
export function runWithLogger<T>(log: ContextLogger, fn: () => T): T {
  return storage.run({ log }, fn);
}

/** The logger of the request being served, else `fallback`. */
export function loggerOr(fallback: ContextLogger): ContextLogger {
  return storage.getStore()?.log ?? fallback;
}

/**
 * Runs `fn` on behalf of an API key (null: the master key, or an instance without one). The
 * commands a request makes carry it through the log, so that every node refuses them alike
 * once the key is gone (see the task state machine).
 */
export function runWithAuthority<T>(log: ContextLogger, authority: Authority | null, fn: () => T): T {
  return storage.run(authority !== null ? { log, authority } : { log }, fn);
}

/** The API key the request being served was authorized by, if any. */
export function currentAuthority(): Authority | undefined {
  return storage.getStore()?.authority;
}

/**
 * Runs `fn` outside any request. Background loops (the Raft driver, the batch executor) are
 * often kicked off by a request; without this they would inherit its context and tag their own
 * lines, which belong to no request, with that request's id, and make commands in its name.
 */
export function detached<T>(fn: () => T): T {
  return storage.exit(fn);
}
