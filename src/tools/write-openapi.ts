#!/usr/bin/env node
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parseOptions } from '../config/options.js';
import { openapiDocument } from '../http/openapi.js';
import { startNode } from '../server/node.js';

/**
 * `npm run openapi [file]`: writes the OpenAPI document of this build (default
 * `docs/openapi.json`). A throwaway node is started so that the document lists exactly the
 * routes a real server registers, with the schemas it validates with.
 */
async function main(): Promise<void> {
  const out = process.argv[2] ?? 'docs/openapi.json';
  const dir = mkdtempSync(join(tmpdir(), 'trine-openapi-'));
  const options = parseOptions(['--db-path', join(dir, 'db'), '--http-addr', '127.0.0.1:0', '--log-level', 'error'], {});
  const node = await startNode(options);
  try {
    const doc = openapiDocument(node.app.routeDocs);
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
    const paths = Object.keys(doc['paths'] as object).length;
    console.log(`wrote ${out}: OpenAPI ${String(doc['openapi'])}, ${paths} paths`);
  } finally {
    await node.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`error: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
});
