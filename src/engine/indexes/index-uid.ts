import { ApiError } from '../../errors/api-error.js';

/** 1–400 bytes of `[A-Za-z0-9_-]`. */
export function isValidIndexUid(uid: string): boolean {
  return uid.length > 0 && uid.length <= 400 && /^[A-Za-z0-9_-]+$/.test(uid);
}

export function invalidIndexUidMessage(uid: string): string {
  // The reference says 512 bytes although it enforces 400; clients match on the code, not the number.
  return `\`${uid}\` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.`;
}

export function assertIndexUid(uid: string, path = ''): void {
  if (!isValidIndexUid(uid)) {
    const at = path ? `Invalid value at \`${path}\`: ` : '';
    throw new ApiError('invalid_index_uid', at + invalidIndexUidMessage(uid));
  }
}

/** An index uid pattern (`movies`, `movies*`, `*`) as API keys and task scopes use them. */
export function patternMatches(pattern: string, index: string): boolean {
  if (pattern.endsWith('*')) return index.startsWith(pattern.slice(0, -1));
  return pattern === index;
}

/** Whether any of `patterns` lets `index` through. */
export function anyPatternMatches(patterns: Iterable<string>, index: string): boolean {
  for (const p of patterns) if (patternMatches(p, index)) return true;
  return false;
}
