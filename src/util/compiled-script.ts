// Worker threads run compiled JavaScript: a worker's script is the `.js` file beside the module
// starting it, or, when that module runs from its TypeScript source (tests), the same file
// under dist/.

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** `name` beside the module at `moduleUrl`, or in `distDir` (from the repository root) when that module is TypeScript. */
export function compiledScript(moduleUrl: string, name: string, distDir: string): string {
  const here = fileURLToPath(moduleUrl);
  if (here.endsWith('.js')) return join(dirname(here), name);
  let root = dirname(here);
  while (!existsSync(join(root, 'package.json')) && dirname(root) !== root) root = dirname(root);
  const compiled = join(root, distDir, name);
  if (!existsSync(compiled)) throw new Error(`\`${compiled}\` is missing (run \`npm run build\`)`);
  return compiled;
}
