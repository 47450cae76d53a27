import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerRoutes } from '../../src/http/routes/index.js';
import { ROOT, startTestNode, tempDir, type TestNode } from '../helpers/node.js';
import { newAjv, schemaValidator } from './ajv.js';
import { OAS31_STRUCTURE } from './oas31-structure.js';

type Json = Record<string, unknown>;
type Operation = { operationId: string; parameters?: Json[]; requestBody?: { content: Record<string, { schema: unknown }> }; responses: Record<string, Json>; tags: string[]; security?: unknown[] };

const MASTER = 'a-master-key-for-openapi';
let node: TestNode;
let doc: Json;

beforeAll(async () => {
  node = await startTestNode(['--master-key', MASTER]);
  const r = await fetch(`${node.url}/openapi.json`);
  expect(r.status).toBe(200);
  doc = (await r.json()) as Json;
});

afterAll(async () => {
  await node?.close();
});

const templated = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

function operations(): [string, string, Operation][] {
  const out: [string, string, Operation][] = [];
  for (const [path, item] of Object.entries(doc['paths'] as Record<string, Record<string, Operation>>)) {
    for (const [method, op] of Object.entries(item)) out.push([path, method, op]);
  }
  return out;
}

/** Every Schema Object of the document, with where it is. */
function schemaObjects(): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [path, method, op] of operations()) {
    for (const p of op.parameters ?? []) out.push([`${method} ${path} parameter ${String(p['name'])}`, p['schema']]);
    for (const [type, c] of Object.entries(op.requestBody?.content ?? {})) out.push([`${method} ${path} body ${type}`, c.schema]);
    for (const [status, r] of Object.entries(op.responses)) {
      for (const [type, c] of Object.entries((r['content'] ?? {}) as Record<string, { schema: unknown }>)) {
        out.push([`${method} ${path} response ${status} ${type}`, c.schema]);
      }
    }
  }
  for (const [name, s] of Object.entries((doc['components'] as { schemas: Json }).schemas)) out.push([`component ${name}`, s]);
  return out;
}

describe('GET /openapi.json', () => {
  it('is served without a key, even with a master key set, and says OpenAPI 3.1', () => {
    expect(doc['openapi']).toBe('3.1.0');
    expect((doc['info'] as Json)['title']).toBe('Trine');
  });

  it('lists every route the server registers, by any means, with its method', async () => {
    // A second app, watched from before its first route: catches routes added without `route()` too.
    const app = Fastify();
    const seen: { method: string; url: string }[] = [];
    app.addHook('onRoute', (r) => {
      for (const m of [r.method].flat()) if (m !== 'HEAD') seen.push({ method: String(m).toLowerCase(), url: r.url });
    });
    await registerRoutes(app, node.node.ctx);
    await app.ready();
    await app.close();
    const paths = doc['paths'] as Record<string, Json>;
    const missing = seen.filter((r) => !paths[templated(r.url)]?.[r.method]).map((r) => `${r.method} ${r.url}`);
    expect(missing).toEqual([]);
    expect(seen.length).toBeGreaterThan(40);
    for (const r of node.node.app.routeDocs) expect(paths[templated(r.url)]?.[String(r.method).toLowerCase()], `${r.method} ${r.url}`).toBeDefined();
    expect(paths['/dumps']?.['post']).toBeDefined();
    expect(paths['/snapshots']?.['post']).toBeDefined();
    expect(paths['/openapi.json']?.['get']).toBeDefined();
  });

  it('has the structure of an OpenAPI 3.1 document', () => {
    const ajv = newAjv();
    const validate = ajv.compile(OAS31_STRUCTURE);
    expect(validate(doc), JSON.stringify(validate.errors?.slice(0, 5))).toBe(true);
    // The structure check itself must be able to fail.
    expect(validate({ ...doc, openapi: '3.0.3' })).toBe(false);
    expect(validate({ ...doc, paths: { '/x': { get: { responses: { 200: {} } } } } })).toBe(false);
  });

  it('is accepted by an OpenAPI validator checking against the official OpenAPI 3.1 schemas', async () => {
    const validator = new Validator();
    // A copy: the validator resolves references in place.
    const result = await validator.validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    // And it does refuse a broken document.
    const broken = await new Validator().validate({ ...structuredClone(doc), paths: { '/x': { get: { responses: 'none' } } } });
    expect(broken.valid).toBe(false);
  });

  it('holds only valid JSON Schema 2020-12 Schema Objects, each compiling with its references resolved', () => {
    const ajv = newAjv();
    const bad: string[] = [];
    const all = schemaObjects();
    for (const [where, schema] of all) {
      if (!ajv.validateSchema(schema as object)) bad.push(`${where}: ${ajv.errorsText()}`);
      else schemaValidator(ajv, doc, schema);
    }
    expect(bad).toEqual([]);
    expect(all.length).toBeGreaterThan(200);
    expect(ajv.validateSchema({ type: 'strnig' })).toBe(false);
  });

  it('declares each path parameter, uses unique operation ids, and names only declared tags and schemes', () => {
    const ids = new Set<string>();
    const tags = new Set(((doc['tags'] as Json[]) ?? []).map((t) => t['name']));
    const schemes = Object.keys((doc['components'] as { securitySchemes: Json }).securitySchemes);
    for (const [path, method, op] of operations()) {
      expect(ids.has(op.operationId), `${method} ${path}: duplicate operationId`).toBe(false);
      ids.add(op.operationId);
      const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort();
      const declared = (op.parameters ?? []).filter((p) => p['in'] === 'path').map((p) => p['name']).sort();
      expect(declared, `${method} ${path}`).toEqual(inPath);
      for (const t of op.tags) expect(tags.has(t)).toBe(true);
      expect(Object.keys(op.responses).some((s) => /^2/.test(s)), `${method} ${path} has a success response`).toBe(true);
    }
    for (const req of doc['security'] as Json[]) for (const name of Object.keys(req)) expect(schemes).toContain(name);
    const paths = doc['paths'] as Record<string, Record<string, Operation>>;
    expect(paths['/health']!['get']!.security).toEqual([]);
    expect(paths['/dumps']!['post']!.responses['202']).toBeDefined();
    expect(paths['/keys']!['post']!.responses['401']).toBeDefined();
  });

  it('npm run openapi writes the same document to a file', () => {
    const dir = tempDir('trine-openapi-');
    try {
      const out = join(dir, 'openapi.json');
      const r = spawnSync(process.execPath, [join(ROOT, 'dist/src/tools/write-openapi.js'), out], { encoding: 'utf8', timeout: 30_000 });
      expect(r.status, r.stderr).toBe(0);
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(doc);
      const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
      expect(pkg.scripts['openapi']).toContain('dist/src/tools/write-openapi.js');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
