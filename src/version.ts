import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

function pkgVersion(): string {
  // src/version.ts and dist/src/version.js both find package.json a fixed number of levels up.
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 4; i++) {
    try {
      return (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version;
    } catch {
      dir = dirname(dir);
    }
  }
  return 'unknown';
}

export const VERSION = {
  commitSha: process.env['TRINE_COMMIT_SHA'] ?? 'unknown',
  commitDate: process.env['TRINE_COMMIT_DATE'] ?? 'unknown',
  pkgVersion: pkgVersion(),
};
