import { ERROR_CODES, ERROR_LINK_BASE, type ErrorCode, type ErrorType } from './codes.js';

/** The body every error response and every failed task carries, key order included. */
export interface ErrorBody {
  message: string;
  code: string;
  type: ErrorType;
  link: string;
}

/**
 * An error a client can act on. Its `code` is one of the table in `codes.ts`, which fixes
 * its HTTP status and type; nothing else in the code base chooses a status for an error.
 */
export class ApiError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string) {
    super(message);
    this.name = 'ApiError';
    this.code = code;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get type(): ErrorType {
    return ERROR_CODES[this.code].type;
  }

  toJSON(): ErrorBody {
    return errorBody(this.code, this.message);
  }

  /** Same error with `prefix` in front of its message (e.g. ``Index `x`: ``). */
  prefixed(prefix: string): ApiError {
    return new ApiError(this.code, prefix + this.message);
  }
}

export function errorBody(code: ErrorCode, message: string): ErrorBody {
  const info = ERROR_CODES[code];
  return { message, code, type: info.type, link: ERROR_LINK_BASE + code };
}

export function isApiError(e: unknown): e is ApiError {
  return e instanceof ApiError;
}

/** Turns anything thrown into an error body; unknown errors become `internal`. */
export function toErrorBody(e: unknown): ErrorBody {
  if (isApiError(e)) return e.toJSON();
  const msg = e instanceof Error ? e.message : String(e);
  return errorBody('internal', msg);
}

export { ERROR_CODES, type ErrorCode, type ErrorType };
