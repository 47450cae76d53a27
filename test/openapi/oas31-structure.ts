/**
 * The structure of an OpenAPI 3.1 document, as a JSON Schema (2020-12) written from the
 * OpenAPI 3.1.0 specification's object definitions: every object the generator can emit, with
 * its required fields, its allowed fields (plus `x-` extensions) and the constraints between
 * them (a path parameter is required; a parameter has a schema or a content; a license has
 * an identifier or a url, not both). Schema Objects themselves are checked separately against
 * the JSON Schema 2020-12 meta-schema that ajv ships.
 *
 * Why not the official OAS 3.1 schema or a validator package: none is installed (no
 * `@seriousme/openapi-schema-validator`, `@readme/openapi-parser` or the like in
 * node_modules), and the tests do not download anything. Adding one as a devDependency would
 * let this file go.
 */

const ext = { '^x-': {} };
const str = { type: 'string' };
const strings = { type: 'array', items: str };

function obj(properties: Record<string, unknown>, required: string[] = []): Record<string, unknown> {
  return { type: 'object', properties, required, patternProperties: ext, additionalProperties: false };
}

const schemaObject = { type: ['object', 'boolean'] };

export const OAS31_STRUCTURE = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  $defs: {
    info: obj(
      {
        title: str,
        summary: str,
        description: str,
        termsOfService: str,
        contact: obj({ name: str, url: str, email: str }),
        license: {
          ...obj({ name: str, identifier: str, url: str }, ['name']),
          not: { required: ['identifier', 'url'] },
        },
        version: str,
      },
      ['title', 'version'],
    ),
    server: obj({ url: str, description: str, variables: { type: 'object' } }, ['url']),
    tag: obj({ name: str, description: str, externalDocs: { type: 'object' } }, ['name']),
    securityRequirement: { type: 'object', additionalProperties: strings },
    mediaType: obj({ schema: schemaObject, example: {}, examples: { type: 'object' }, encoding: { type: 'object' } }),
    content: { type: 'object', additionalProperties: { $ref: '#/$defs/mediaType' } },
    parameter: {
      ...obj(
        {
          name: str,
          in: { enum: ['query', 'header', 'path', 'cookie'] },
          description: str,
          required: { type: 'boolean' },
          deprecated: { type: 'boolean' },
          allowEmptyValue: { type: 'boolean' },
          style: { enum: ['matrix', 'label', 'form', 'simple', 'spaceDelimited', 'pipeDelimited', 'deepObject'] },
          explode: { type: 'boolean' },
          allowReserved: { type: 'boolean' },
          schema: schemaObject,
          example: {},
          examples: { type: 'object' },
          content: { $ref: '#/$defs/content', minProperties: 1, maxProperties: 1 },
        },
        ['name', 'in'],
      ),
      oneOf: [{ required: ['schema'] }, { required: ['content'] }],
      if: { properties: { in: { const: 'path' } } },
      then: { properties: { required: { const: true } }, required: ['required'] },
    },
    requestBody: obj({ description: str, content: { $ref: '#/$defs/content' }, required: { type: 'boolean' } }, ['content']),
    response: obj({ description: str, headers: { type: 'object' }, content: { $ref: '#/$defs/content' }, links: { type: 'object' } }, [
      'description',
    ]),
    responses: {
      type: 'object',
      minProperties: 1,
      properties: { default: { $ref: '#/$defs/response' } },
      patternProperties: { '^[1-5](?:[0-9]{2}|XX)$': { $ref: '#/$defs/response' }, ...ext },
      additionalProperties: false,
    },
    operation: obj({
      tags: strings,
      summary: str,
      description: str,
      externalDocs: { type: 'object' },
      operationId: str,
      parameters: { type: 'array', items: { $ref: '#/$defs/parameter' } },
      requestBody: { $ref: '#/$defs/requestBody' },
      responses: { $ref: '#/$defs/responses' },
      callbacks: { type: 'object' },
      deprecated: { type: 'boolean' },
      security: { type: 'array', items: { $ref: '#/$defs/securityRequirement' } },
      servers: { type: 'array', items: { $ref: '#/$defs/server' } },
    }),
    pathItem: obj({
      $ref: str,
      summary: str,
      description: str,
      get: { $ref: '#/$defs/operation' },
      put: { $ref: '#/$defs/operation' },
      post: { $ref: '#/$defs/operation' },
      delete: { $ref: '#/$defs/operation' },
      options: { $ref: '#/$defs/operation' },
      head: { $ref: '#/$defs/operation' },
      patch: { $ref: '#/$defs/operation' },
      trace: { $ref: '#/$defs/operation' },
      servers: { type: 'array', items: { $ref: '#/$defs/server' } },
      parameters: { type: 'array', items: { $ref: '#/$defs/parameter' } },
    }),
    securityScheme: {
      ...obj(
        {
          type: { enum: ['apiKey', 'http', 'mutualTLS', 'oauth2', 'openIdConnect'] },
          description: str,
          name: str,
          in: { enum: ['query', 'header', 'cookie'] },
          scheme: str,
          bearerFormat: str,
          flows: { type: 'object' },
          openIdConnectUrl: str,
        },
        ['type'],
      ),
      if: { properties: { type: { const: 'http' } } },
      then: { required: ['scheme'] },
    },
    components: obj({
      schemas: { type: 'object', additionalProperties: schemaObject },
      responses: { type: 'object' },
      parameters: { type: 'object' },
      examples: { type: 'object' },
      requestBodies: { type: 'object' },
      headers: { type: 'object' },
      securitySchemes: { type: 'object', additionalProperties: { $ref: '#/$defs/securityScheme' } },
      links: { type: 'object' },
      callbacks: { type: 'object' },
      pathItems: { type: 'object' },
    }),
  },
  ...obj(
    {
      openapi: { type: 'string', pattern: '^3\\.1\\.\\d+(-.+)?$' },
      info: { $ref: '#/$defs/info' },
      jsonSchemaDialect: str,
      servers: { type: 'array', items: { $ref: '#/$defs/server' } },
      paths: {
        type: 'object',
        patternProperties: { '^/': { $ref: '#/$defs/pathItem' }, ...ext },
        additionalProperties: false,
      },
      webhooks: { type: 'object' },
      components: { $ref: '#/$defs/components' },
      security: { type: 'array', items: { $ref: '#/$defs/securityRequirement' } },
      tags: { type: 'array', items: { $ref: '#/$defs/tag' } },
      externalDocs: { type: 'object' },
    },
    ['openapi', 'info'],
  ),
  anyOf: [{ required: ['paths'] }, { required: ['components'] }, { required: ['webhooks'] }],
} as const;
