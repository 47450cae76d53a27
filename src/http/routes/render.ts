import type { FastifyInstance } from 'fastify';
import { assertIndexAuthorized } from '../../auth/request-auth.js';
import type { ErrorCode } from '../../errors/api-error.js';
import { isValidIndexUid, invalidIndexUidMessage } from '../../engine/indexes/index-uid.js';
import { INPUT_KINDS, renderTemplate, TEMPLATE_KINDS } from '../../engine/render-template.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s, typeError, valueError } from '../schema.js';

const indexUid = s.custom((v, ctx) => {
  if (typeof v !== 'string') throw typeError(ctx, 'a string', v);
  if (!isValidIndexUid(v)) throw valueError(ctx, invalidIndexUidMessage(v));
  return v;
}, { type: 'string' });

const nonZero = s.custom((v, ctx) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) throw typeError(ctx, 'a positive integer', v);
  if (v === 0) throw valueError(ctx, 'the value must be greater than zero');
  return v;
}, { type: 'integer', minimum: 1 });

/** Every error inside `template` (or `input`) carries that part's code, unknown fields included. */
function part<F extends Parameters<typeof s.object>[0]>(code: ErrorCode, fields: (code: ErrorCode) => F) {
  return s.object(fields(code), { unknownCode: code });
}

const templateSchema = part('invalid_render_template', (c) => ({
  kind: s.required(s.enum(TEMPLATE_KINDS), c),
  indexUid: s.field(indexUid.nullable(), c),
  embedder: s.field(s.string().nullable(), c),
  fragment: s.field(s.string().nullable(), c),
  inline: s.field(s.any({ description: 'An inline document template (a string) or fragment (any JSON value)' }), c),
  documentTemplateMaxBytes: s.field(nonZero.nullable(), c),
}));

const inputSchema = part('invalid_render_input', (c) => ({
  kind: s.required(s.enum(INPUT_KINDS), c),
  indexUid: s.field(indexUid.nullable(), c),
  id: s.field(s.string().nullable(), c),
  inline: s.field(s.any({ type: 'object' }), c),
}));

const renderBody = s.object({
  template: s.required(templateSchema, 'invalid_render_template'),
  input: s.field(inputSchema.nullable(), 'invalid_render_input'),
});

export function renderRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/render-template',
    summary:
      'Render a document template or fragment (from an index setting, or inline) over a stored document, an inline document or a search query; needs `settings.get` and `documents.get`',
    tags: ['Render templates'],
    action: 'settings.get',
    alsoRequires: ['documents.get'],
    body: renderBody,
    status: 200,
    responseSchema: { type: 'object', properties: { template: {}, rendered: {} }, required: ['template', 'rendered'] },
    errors: ['feature_not_enabled', 'invalid_render_template', 'invalid_render_input', 'render_document_not_found', 'template_parsing_error', 'template_rendering_error'],
    handler: async (req, _reply, { body }) => {
      ctx.features.check('renderRoute', 'calling the /render-template route');
      return renderTemplate(
        {
          engine: ctx.engine,
          check: (feature, action) => ctx.features.check(feature, action),
          authorize: (index) => assertIndexAuthorized(req, index),
        },
        body.template,
        body.input ?? null,
      );
    },
  });
}
