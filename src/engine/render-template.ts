// Rendering a template the way indexing or chat would (`POST /render-template`): a document
// template or a fragment, taken from an index's settings or given inline, rendered over a
// stored document, an inline document or a search query. Lets users check a template
// without indexing anything.

import { ApiError, type ErrorCode } from '../errors/api-error.js';
import type { Doc } from './documents/primary-key.js';
import type { Engine } from './engine.js';
import { DEFAULT_MAX_BYTES, DEFAULT_TEMPLATE, DocumentTemplate, documentContext } from './vector/document-template.js';
import { Fragment } from './vector/fragments.js';

export const TEMPLATE_KINDS = [
  'documentTemplate',
  'chatDocumentTemplate',
  'indexingFragment',
  'searchFragment',
  'inlineDocumentTemplate',
  'inlineFragment',
] as const;
export const INPUT_KINDS = ['indexDocument', 'inlineDocument', 'inlineSearch'] as const;

export interface TemplateQuery {
  kind: (typeof TEMPLATE_KINDS)[number];
  indexUid?: string | null | undefined;
  embedder?: string | null | undefined;
  fragment?: string | null | undefined;
  inline?: unknown;
  documentTemplateMaxBytes?: number | null | undefined;
}

export interface InputQuery {
  kind: (typeof INPUT_KINDS)[number];
  indexUid?: string | null | undefined;
  id?: string | null | undefined;
  inline?: unknown;
}

/** What rendering needs from the node: features, and whether the caller may read an index. */
export interface RenderEnv {
  engine: Engine;
  /** Throws `feature_not_enabled` unless the feature is on. */
  check(feature: 'chatCompletions' | 'multimodal', action: string): void;
  /** Throws when the caller's key may not read `index`. */
  authorize(index: string): void;
}

type Template =
  | { kind: 'text'; source: string; maxBytes: number; indexUid: string | null }
  | { kind: 'fragment'; value: unknown; fragment: Fragment; indexUid: string | null };

type Input = { kind: 'doc'; doc: Doc; searchable: readonly string[] } | { kind: 'search'; q: string | null; media: unknown };

const fetchingTemplate = (code: ErrorCode, why: string) => new ApiError(code, `error while fetching template: ${why}`);
const fetchingInput = (code: ErrorCode, why: string) => new ApiError(code, `error while fetching input: ${why}`);
const rendering = (why: string) => new ApiError('template_rendering_error', `error while rendering template: ${why}`);

const given = (v: unknown) => v !== undefined && v !== null;

/** The reference names parameters in its messages by their internal (snake case) names. */
const PARAM_NAMES: Record<string, string> = { indexUid: 'index_uid', documentTemplateMaxBytes: 'document_template_max_bytes' };

function params<Q extends object>(q: Q, kind: string, wrap: (why: string) => ApiError, rules: { required: (keyof Q)[]; allowed: (keyof Q)[] }) {
  for (const k of Object.keys(q) as (keyof Q)[]) {
    if (k === 'kind' || !given(q[k]) || rules.required.includes(k) || rules.allowed.includes(k)) continue;
    throw wrap(`parameter \`${PARAM_NAMES[k as string] ?? String(k)}\` disallowed for kind \`${kind}\``);
  }
  for (const k of rules.required) {
    if (!given(q[k])) throw wrap(`parameter \`${PARAM_NAMES[k as string] ?? String(k)}\` missing for kind \`${kind}\``);
  }
}

function openIndex(env: RenderEnv, uid: string, wrap: (why: string) => string) {
  env.authorize(uid);
  const h = env.engine.indexes.get(uid);
  if (!h) throw new ApiError('index_not_found', wrap(`Index \`${uid}\` not found.`));
  return h;
}

function embedderOf(env: RenderEnv, q: TemplateQuery): { uid: string; e: Record<string, unknown> } {
  const uid = q.indexUid!;
  const h = openIndex(env, uid, (why) => `error while fetching template: cannot open index \`${uid}\`: ${why}`);
  const e = h.meta.settings.embedders[q.embedder!];
  if (!e) throw fetchingTemplate('invalid_render_template', `cannot find embedder \`${q.embedder}\` in index \`${uid}\``);
  return { uid, e };
}

function hasFragments(e: Record<string, unknown>): boolean {
  const count = (v: unknown) => (v && typeof v === 'object' ? Object.values(v).filter(given).length : 0);
  return count(e['indexingFragments']) + count(e['searchFragments']) > 0;
}

function fragmentTemplate(value: unknown, name: string, indexUid: string | null): Template {
  try {
    return { kind: 'fragment', value, fragment: new Fragment(name, value), indexUid };
  } catch (e) {
    throw fetchingTemplate('template_parsing_error', e instanceof Error ? e.message : String(e));
  }
}

function fetchTemplate(env: RenderEnv, q: TemplateQuery): Template {
  const wrap = (why: string) => fetchingTemplate('invalid_render_template', why);
  const maxBytes = q.documentTemplateMaxBytes ?? null;
  switch (q.kind) {
    case 'documentTemplate': {
      params(q, q.kind, wrap, { required: ['indexUid', 'embedder'], allowed: ['documentTemplateMaxBytes'] });
      const { uid, e } = embedderOf(env, q);
      if (e['source'] === 'userProvided' || e['source'] === 'composite' || hasFragments(e)) {
        throw wrap(`embedder \`${q.embedder}\` in index \`${uid}\` does not use a document template.`);
      }
      const source = typeof e['documentTemplate'] === 'string' ? e['documentTemplate'] : DEFAULT_TEMPLATE;
      const stored = typeof e['documentTemplateMaxBytes'] === 'number' ? e['documentTemplateMaxBytes'] : DEFAULT_MAX_BYTES;
      return { kind: 'text', source, maxBytes: maxBytes ?? stored, indexUid: uid };
    }
    case 'chatDocumentTemplate': {
      env.check('chatCompletions', 'accessing chat settings');
      params(q, q.kind, wrap, { required: ['indexUid'], allowed: ['documentTemplateMaxBytes'] });
      const uid = q.indexUid!;
      const chat = openIndex(env, uid, (why) => `error while fetching template: cannot open index \`${uid}\`: ${why}`).meta.settings.chat;
      const source = typeof chat['documentTemplate'] === 'string' ? chat['documentTemplate'] : DEFAULT_TEMPLATE;
      const stored = typeof chat['documentTemplateMaxBytes'] === 'number' ? chat['documentTemplateMaxBytes'] : DEFAULT_MAX_BYTES;
      return { kind: 'text', source, maxBytes: maxBytes ?? stored, indexUid: uid };
    }
    case 'indexingFragment':
    case 'searchFragment': {
      env.check('multimodal', 'accessing fragments');
      params(q, q.kind, wrap, { required: ['indexUid', 'embedder', 'fragment'], allowed: [] });
      const { uid, e } = embedderOf(env, q);
      if (!hasFragments(e)) throw wrap(`embedder \`${q.embedder}\` in index \`${uid}\` does not use fragments.`);
      const which = q.kind === 'indexingFragment' ? 'indexing' : 'search';
      const list = (e[`${which}Fragments`] ?? {}) as Record<string, { value: unknown } | null>;
      const f = list[q.fragment!];
      if (!f) throw wrap(`cannot find ${which} fragment \`${q.fragment}\` for embedder \`${q.embedder}\` in index \`${uid}\``);
      return fragmentTemplate(f.value, q.fragment!, uid);
    }
    case 'inlineDocumentTemplate': {
      params(q, q.kind, wrap, { required: ['inline'], allowed: ['documentTemplateMaxBytes'] });
      if (typeof q.inline !== 'string') throw wrap('inline document templates must be strings');
      try {
        new DocumentTemplate(q.inline);
      } catch (e) {
        throw fetchingTemplate('template_parsing_error', `cannot parse template: ${e instanceof Error ? e.message : String(e)}`);
      }
      return { kind: 'text', source: q.inline, maxBytes: maxBytes ?? DEFAULT_MAX_BYTES, indexUid: null };
    }
    case 'inlineFragment':
      env.check('multimodal', 'rendering an inline fragment');
      params(q, q.kind, wrap, { required: ['inline'], allowed: [] });
      return fragmentTemplate(q.inline, 'inline', null);
  }
}

function inlineInput(env: RenderEnv, q: InputQuery & { kind: 'inlineDocument' | 'inlineSearch' }): Input {
  const wrap = (why: string) => fetchingInput('invalid_render_input', why);
  const isMap = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  switch (q.kind) {
    case 'inlineDocument':
      params(q, q.kind, wrap, { required: ['inline'], allowed: [] });
      if (!isMap(q.inline)) throw wrap(`parsing inline document: expected a map, found ${JSON.stringify(q.inline)}\n  - Note: the inline document must be a JSON map`);
      return { kind: 'doc', doc: q.inline, searchable: ['*'] };
    case 'inlineSearch': {
      env.check('multimodal', 'rendering search');
      params(q, q.kind, wrap, { required: ['inline'], allowed: [] });
      if (!isMap(q.inline)) {
        throw wrap(`parsing inline search: expected a map, found ${JSON.stringify(q.inline)}\n  - Note: the inline search query must be a JSON map containing \`q\` and/or \`media\``);
      }
      const qv = q.inline['q'];
      if (qv !== undefined && typeof qv !== 'string') throw wrap('`q` is not a string');
      return { kind: 'search', q: qv ?? null, media: q.inline['media'] ?? null };
    }
  }
}

async function loadInput(env: RenderEnv, q: InputQuery): Promise<Input> {
  if (q.kind !== 'indexDocument') return inlineInput(env, { ...q, kind: q.kind });
  params(q, q.kind, (why) => fetchingInput('invalid_render_input', why), { required: ['indexUid', 'id'], allowed: [] });
  const uid = q.indexUid!;
  const h = openIndex(env, uid, (why) => `Cannot open index \`${uid}\`: ${why}`);
  const doc = await env.engine.getDocument(uid, q.id!);
  if (!doc) throw fetchingInput('render_document_not_found', `document \`${q.id}\` not found in \`${uid}\``);
  return { kind: 'doc', doc, searchable: h.meta.settings.searchableAttributes };
}

function render(t: Template, input: Input): unknown {
  if (t.kind === 'text') {
    if (input.kind === 'search') throw rendering('cannot render a document template with a search query');
    try {
      return new DocumentTemplate(t.source, t.maxBytes).render(input.doc, input.searchable);
    } catch (e) {
      throw rendering(e instanceof Error ? e.message : String(e));
    }
  }
  const ctx: Record<string, unknown> = {};
  if (input.kind === 'doc') ctx['doc'] = documentContext(input.doc);
  else {
    if (input.q !== null) ctx['q'] = input.q;
    if (input.media !== null) ctx['media'] = input.media;
  }
  let out: unknown;
  try {
    out = t.fragment.render(ctx);
  } catch (e) {
    throw rendering(e instanceof Error ? e.message : String(e));
  }
  if (out === null) {
    const has = Object.keys(ctx).map((k) => `\`${k}\``).join(', ') || 'nothing';
    throw rendering(`the fragment reads a value the input does not have (the input provides ${has})`);
  }
  return out;
}

/** The template as stored or given, and what it renders to over `input` (null without input). */
export async function renderTemplate(env: RenderEnv, template: TemplateQuery, input: InputQuery | null): Promise<{ template: unknown; rendered: unknown }> {
  const t = fetchTemplate(env, template);
  const shown = t.kind === 'text' ? t.source : t.value;
  if (!input) return { template: shown, rendered: null };
  return { template: shown, rendered: render(t, await loadInput(env, input)) };
}
