import Ajv2020Module from 'ajv/dist/2020.js';

/**
 * ajv (a maintained JSON Schema validator, here as a dependency of Fastify) in its 2020-12
 * mode, the dialect of OpenAPI 3.1 Schema Objects. Formats are annotations in 2020-12 unless
 * a vocabulary asserts them, so they are not validated; `strictSchema` refuses unknown keywords
 * (such as OpenAPI 3.0's `nullable`), which would otherwise be silently ignored.
 */
type AjvClass = typeof Ajv2020Module.default;
const Ajv2020 = ((Ajv2020Module as unknown as { default?: AjvClass }).default ?? Ajv2020Module) as AjvClass;

export type Ajv = InstanceType<AjvClass>;

const compiled = new WeakMap<Ajv, Map<string, ReturnType<Ajv['compile']>>>();

export function newAjv(): Ajv {
  // Only the strictness about what a schema means; the stylistic checks (types repeated beside
  // `properties`, `required` names declared in the same subschema) are not validity rules.
  return new Ajv2020({ strictSchema: true, strictNumbers: true, strictTypes: false, strictTuples: false, strictRequired: false, validateFormats: false, allErrors: true });
}

/**
 * A validator for one Schema Object of the document, its `#/components/schemas/...`
 * references resolved against the document's components.
 */
export function schemaValidator(ajv: Ajv, doc: Record<string, unknown>, schema: unknown) {
  if (!ajv.getSchema('trine-components')) {
    const components = (doc['components'] as { schemas: Record<string, unknown> }).schemas;
    const inside = JSON.parse(JSON.stringify(components).replaceAll('#/components/schemas/', '#/$defs/')) as object;
    ajv.addSchema({ $id: 'trine-components', $defs: inside });
  }
  const text = JSON.stringify(schema).replaceAll('#/components/schemas/', 'trine-components#/$defs/');
  // Many operations share a schema (error responses, the summarized task): compile each once.
  let cache = compiled.get(ajv);
  if (!cache) compiled.set(ajv, (cache = new Map()));
  let fn = cache.get(text);
  if (!fn) cache.set(text, (fn = ajv.compile(JSON.parse(text) as object)));
  return fn;
}
