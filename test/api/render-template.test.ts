import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Meilisearch, type RenderTemplateParams } from 'meilisearch';
import { startTestNode, type TestNode } from '../helpers/node.js';
import { fakeEmbedding, fakeProvider, type FakeProvider } from '../helpers/vector-api.js';
import { apiError } from '../helpers/api-error.js';

const MASTER = 'render-template-master-key';
let t: TestNode;
let provider: FakeProvider;

beforeAll(async () => {
  t = await startTestNode(['--master-key', MASTER]);
  provider = await fakeProvider((_p, body) => ({ data: fakeEmbedding(JSON.stringify(body)) }));
  await t.client.updateExperimentalFeatures({ renderRoute: true, multimodal: true, chatCompletions: true });
  const books = t.client.index('books');
  const rest = { source: 'rest', url: provider.url, dimensions: 4, response: { data: '{{embedding}}' } };
  const task = await books
    .updateSettings({
      searchableAttributes: ['title'],
      embedders: {
        text: { ...rest, request: '{{text}}', documentTemplate: 'A book titled {{ doc.title }} by {{ doc.author.name }}', documentTemplateMaxBytes: 30 },
        plain: { ...rest, request: '{{text}}' },
        frags: {
          ...rest,
          request: '{{fragment}}',
          indexingFragments: { cover: { value: { text: 'cover of {{ doc.title }}' } } },
          searchFragments: { query: { value: 'search for {{ q }}' } },
        },
        own: { source: 'userProvided', dimensions: 4 },
      } as never,
    })
    .waitTask();
  expect(task.status, JSON.stringify(task.error)).toBe('succeeded');
  await books.addDocuments([{ id: 1, title: 'Dune', author: { name: 'Frank Herbert' }, year: 1965, _vectors: { own: [1, 0, 0, 0] } }]).waitTask();
  await books.updateChat({ description: 'books', documentTemplate: '{{ doc.title }} ({{ doc.year }})' }).waitTask();
});
afterAll(async () => {
  await t.close();
  await provider.close();
});

const render = (params: unknown) => t.client.renderTemplate(params as RenderTemplateParams);

describe('POST /render-template', () => {
  it('renders an embedder document template over a stored document, truncated to its byte limit', async () => {
    const r = await render({ template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'text' }, input: { kind: 'indexDocument', indexUid: 'books', id: '1' } });
    expect(r).toEqual({ template: 'A book titled {{ doc.title }} by {{ doc.author.name }}', rendered: 'A book titled Dune by Frank He' });
    const longer = await render({
      template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'text', documentTemplateMaxBytes: 400 },
      input: { kind: 'indexDocument', indexUid: 'books', id: '1' },
    });
    expect(longer.rendered).toBe('A book titled Dune by Frank Herbert');
  });

  it('uses the default template of an embedder that sets none, over the searchable fields', async () => {
    const r = await render({ template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'plain' }, input: { kind: 'indexDocument', indexUid: 'books', id: '1' } });
    expect(r.template).toContain('{% for field in fields %}');
    expect(r.rendered).toBe('title: Dune\n');
  });

  it('answers the template alone without input', async () => {
    expect(await render({ template: { kind: 'inlineDocumentTemplate', inline: 'hi {{ doc.name }}' } })).toEqual({ template: 'hi {{ doc.name }}', rendered: null });
    expect(await render({ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: null })).toEqual({ template: 'x', rendered: null });
  });

  it('renders inline templates over inline documents', async () => {
    const r = await render({ template: { kind: 'inlineDocumentTemplate', inline: '{{ doc.breed }} called {{ doc.name }}' }, input: { kind: 'inlineDocument', inline: { name: 'Iko', breed: 'A Jack Russell' } } });
    expect(r.rendered).toBe('A Jack Russell called Iko');
    const cut = await render({ template: { kind: 'inlineDocumentTemplate', inline: '{{ doc.name }}', documentTemplateMaxBytes: 3 }, input: { kind: 'inlineDocument', inline: { name: 'Iko the dog' } } });
    expect(cut.rendered).toBe('Iko');
  });

  it('renders the chat document template of an index', async () => {
    const r = await render({ template: { kind: 'chatDocumentTemplate', indexUid: 'books' }, input: { kind: 'indexDocument', indexUid: 'books', id: '1' } });
    expect(r).toEqual({ template: '{{ doc.title }} ({{ doc.year }})', rendered: 'Dune (1965)' });
  });

  it('renders indexing and search fragments, stored or inline, into JSON', async () => {
    const idx = await render({ template: { kind: 'indexingFragment', indexUid: 'books', embedder: 'frags', fragment: 'cover' }, input: { kind: 'indexDocument', indexUid: 'books', id: '1' } });
    expect(idx).toEqual({ template: { text: 'cover of {{ doc.title }}' }, rendered: { text: 'cover of Dune' } });
    const search = await render({ template: { kind: 'searchFragment', indexUid: 'books', embedder: 'frags', fragment: 'query' }, input: { kind: 'inlineSearch', inline: { q: 'sand' } } });
    expect(search).toEqual({ template: 'search for {{ q }}', rendered: 'search for sand' });
    const inline = await render({ template: { kind: 'inlineFragment', inline: { image: '{{ media.url }}', n: 3 } }, input: { kind: 'inlineSearch', inline: { media: { url: 'http://x/y.png' } } } });
    expect(inline.rendered).toEqual({ image: 'http://x/y.png', n: 3 });
  });

  it('explains what is wrong with a template or an input', async () => {
    const cases: [unknown, number, string, string][] = [
      [{ template: { kind: 'documentTemplate', indexUid: 'books' } }, 400, 'invalid_render_template', 'error while fetching template: parameter `embedder` missing for kind `documentTemplate`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x', embedder: 'e' } }, 400, 'invalid_render_template', 'error while fetching template: parameter `embedder` disallowed for kind `inlineDocumentTemplate`'],
      [{ template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'nope' } }, 400, 'invalid_render_template', 'error while fetching template: cannot find embedder `nope` in index `books`'],
      [{ template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'own' } }, 400, 'invalid_render_template', 'error while fetching template: embedder `own` in index `books` does not use a document template.'],
      [{ template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'frags' } }, 400, 'invalid_render_template', 'error while fetching template: embedder `frags` in index `books` does not use a document template.'],
      [{ template: { kind: 'indexingFragment', indexUid: 'books', embedder: 'text', fragment: 'a' } }, 400, 'invalid_render_template', 'error while fetching template: embedder `text` in index `books` does not use fragments.'],
      [{ template: { kind: 'searchFragment', indexUid: 'books', embedder: 'frags', fragment: 'b' } }, 400, 'invalid_render_template', 'error while fetching template: cannot find search fragment `b` for embedder `frags` in index `books`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 3 } }, 400, 'invalid_render_template', 'error while fetching template: inline document templates must be strings'],
      [{ template: { kind: 'documentTemplate', indexUid: 'nowhere', embedder: 'x' } }, 404, 'index_not_found', 'error while fetching template: cannot open index `nowhere`: Index `nowhere` not found.'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'indexDocument', indexUid: 'books', id: '9' } }, 404, 'render_document_not_found', 'error while fetching input: document `9` not found in `books`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'indexDocument', indexUid: 'gone', id: '9' } }, 404, 'index_not_found', 'Cannot open index `gone`: Index `gone` not found.'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'inlineDocument' } }, 400, 'invalid_render_input', 'error while fetching input: parameter `inline` missing for kind `inlineDocument`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'inlineDocument', inline: { a: 1 }, id: '1' } }, 400, 'invalid_render_input', 'error while fetching input: parameter `id` disallowed for kind `inlineDocument`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'inlineSearch', inline: { q: 3 } } }, 400, 'invalid_render_input', 'error while fetching input: `q` is not a string'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'inlineSearch', inline: { q: 'a' } } }, 400, 'template_rendering_error', 'error while rendering template: cannot render a document template with a search query'],
    ];
    for (const [body, status, code, message] of cases) {
      expect(await apiError(render(body)), JSON.stringify(body)).toEqual({ status, code, message, type: 'invalid_request', link: `https://docs.meilisearch.com/errors#${code}` });
    }
  });

  it('reports template syntax and rendering errors with their own codes', async () => {
    const parse = await apiError(render({ template: { kind: 'inlineDocumentTemplate', inline: '{{ doc.name ' } }));
    expect(parse).toMatchObject({ status: 400, code: 'template_parsing_error' });
    expect(parse.message).toMatch(/^error while fetching template: cannot parse template: /);
    const frag = await apiError(render({ template: { kind: 'inlineFragment', inline: '{{ doc.missing }}' }, input: { kind: 'inlineDocument', inline: { a: 1 } } }));
    expect(frag).toMatchObject({ status: 400, code: 'template_rendering_error' });
  });

  it('refuses malformed bodies with the part-specific code', async () => {
    const cases: [unknown, string, string][] = [
      [{}, 'invalid_render_template', 'Missing field `template`'],
      [{ template: {} }, 'invalid_render_template', 'Missing field `kind` inside `.template`'],
      [{ template: { kind: 'nope' } }, 'invalid_render_template', 'Unknown value `nope` at `.template.kind`: expected one of `documentTemplate`, `chatDocumentTemplate`, `indexingFragment`, `searchFragment`, `inlineDocumentTemplate`, `inlineFragment`'],
      [{ template: { kind: 'inlineFragment', extra: 1 } }, 'invalid_render_template', 'Unknown field `extra` inside `.template`: expected one of `kind`, `indexUid`, `embedder`, `fragment`, `inline`, `documentTemplateMaxBytes`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x' }, input: { kind: 'x' } }, 'invalid_render_input', 'Unknown value `x` at `.input.kind`: expected one of `indexDocument`, `inlineDocument`, `inlineSearch`'],
      [{ template: { kind: 'inlineDocumentTemplate', inline: 'x', documentTemplateMaxBytes: 0 } }, 'invalid_render_template', 'Invalid value at `.template.documentTemplateMaxBytes`: the value must be greater than zero'],
      [{ template: { kind: 'documentTemplate', indexUid: 'bad uid!' } }, 'invalid_render_template', 'Invalid value at `.template.indexUid`: `bad uid!` is not a valid index uid. Index uid can be an integer or a string containing only alphanumeric characters, hyphens (-) and underscores (_), and can not be more than 512 bytes.'],
      [{ template: { kind: 'inlineFragment' }, other: 1 }, 'bad_request', 'Unknown field `other`: expected one of `template`, `input`'],
    ];
    for (const [body, code, message] of cases) {
      expect(await apiError(render(body)), JSON.stringify(body)).toMatchObject({ status: 400, code, message });
    }
  });

  it('needs the experimental features the template kind uses', async () => {
    await t.client.updateExperimentalFeatures({ multimodal: false, chatCompletions: false });
    try {
      expect(await apiError(render({ template: { kind: 'inlineFragment', inline: 'x' } }))).toMatchObject({
        code: 'feature_not_enabled',
        message: 'rendering an inline fragment requires enabling the `multimodal` experimental feature. See https://github.com/orgs/meilisearch/discussions/846',
      });
      expect(await apiError(render({ template: { kind: 'chatDocumentTemplate', indexUid: 'books' } }))).toMatchObject({ code: 'feature_not_enabled' });
      await t.client.updateExperimentalFeatures({ renderRoute: false });
      expect(await apiError(render({ template: { kind: 'inlineDocumentTemplate', inline: 'x' } }))).toMatchObject({
        code: 'feature_not_enabled',
        message: 'calling the /render-template route requires enabling the `render_route` experimental feature. See https://github.com/orgs/meilisearch/discussions/888',
      });
    } finally {
      await t.client.updateExperimentalFeatures({ renderRoute: true, multimodal: true, chatCompletions: true });
    }
  });

  it('needs both settings.get and documents.get, and the indexes it reads', async () => {
    const make = async (actions: string[], indexes: string[]) =>
      new Meilisearch({ host: t.url, apiKey: (await t.client.createKey({ actions, indexes, expiresAt: null })).key });
    const body = { template: { kind: 'documentTemplate', indexUid: 'books', embedder: 'text' }, input: { kind: 'indexDocument', indexUid: 'books', id: '1' } } as never;
    expect(await apiError((await make(['settings.get'], ['*'])).renderTemplate(body))).toMatchObject({ status: 403, code: 'invalid_api_key' });
    expect(await apiError((await make(['documents.get'], ['*'])).renderTemplate(body))).toMatchObject({ status: 403, code: 'invalid_api_key' });
    expect(await apiError((await make(['settings.get', 'documents.get'], ['other'])).renderTemplate(body))).toMatchObject({ status: 403, code: 'invalid_api_key' });
    expect((await (await make(['settings.get', 'documents.get'], ['books'])).renderTemplate(body)).rendered).toBe('A book titled Dune by Frank He');
    expect((await (await make(['*.get'], ['*'])).renderTemplate(body)).rendered).toBe('A book titled Dune by Frank He');
  });
});
