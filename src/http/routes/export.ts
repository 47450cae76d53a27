import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../errors/api-error.js';
import { parseFilter } from '../../engine/filter/filter-tree.js';
import { hideSecret } from '../../engine/settings/embedder-fields.js';
import { formatByteSize, parseByteSize } from '../../util/byte-size.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { enqueueTask, writeQuery } from './params.js';

const indexSettings = s.object(
  {
    filter: s.field(s.any(), 'invalid_export_index_filter'),
    overrideSettings: s.field(s.boolean(), 'invalid_export_index_override_settings'),
  },
  { unknownCode: 'bad_request' },
);

const exportBody = s.object({
  url: s.field(s.string(), 'invalid_export_url'),
  apiKey: s.field(s.string().nullable(), 'invalid_export_api_key'),
  payloadSize: s.field(s.any({ type: ['integer', 'string'] }), 'invalid_export_payload_size'),
  indexes: s.field(s.record(indexSettings).nullable(), 'invalid_export_indexes_patterns'),
});

/** An index uid, optionally ending with `*` (`movies`, `movies*`, `*`). */
const PATTERN = /^[A-Za-z0-9_-]*\*?$/;

export function exportRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'POST',
    url: '/export',
    summary:
      'Send indexes (primary key, settings, documents) to another instance: `url`, its `apiKey`, `payloadSize` (bytes, or `"24MiB"`; default 20 MiB), `indexes` (`{pattern: {filter, overrideSettings}}`, default every index). An `export` task',
    tags: ['Export'],
    action: 'export',
    body: exportBody,
    query: writeQuery,
    status: 200,
    errors: ['invalid_export_url', 'invalid_export_api_key', 'invalid_export_payload_size', 'invalid_export_indexes_patterns', 'invalid_export_index_filter', 'invalid_export_index_override_settings', 'bad_request'],
    handler: async (_req, _reply, { body, query }) => {
      const url = body.url ?? '';
      let parsed: URL | null = null;
      try {
        parsed = new URL(url);
      } catch {
        parsed = null;
      }
      if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
        throw new ApiError('invalid_export_url', `Invalid value at \`.url\`: \`${url}\` is not an absolute http or https URL of the instance to export to.`);
      }
      let payloadSize: number | null = null;
      if (body.payloadSize !== undefined && body.payloadSize !== null) {
        payloadSize = parseByteSize(body.payloadSize);
        if (payloadSize === null || payloadSize === 0) {
          throw new ApiError('invalid_export_payload_size', `Invalid value at \`.payloadSize\`: \`${JSON.stringify(body.payloadSize)}\` is not a size in bytes: give a positive integer or a number with a unit, such as \`"24MiB"\` or \`"20 MB"\`.`);
        }
      }
      const indexes: Record<string, { filter: unknown; overrideSettings: boolean }> = {};
      for (const [pattern, settings] of Object.entries(body.indexes ?? { '*': {} })) {
        if (!PATTERN.test(pattern) || pattern.length === 0 || pattern.length > 400) {
          throw new ApiError('invalid_export_indexes_patterns', `Invalid value at \`.indexes\`: \`${pattern}\` is not a valid index uid pattern: an index uid (alphanumeric characters, \`-\` and \`_\`), optionally ending with \`*\`.`);
        }
        const filter = settings?.filter ?? null;
        // Checked for syntax here; whether the index filters by its attributes, when the task runs.
        parseFilter(filter, { code: 'invalid_export_index_filter', containsFilter: ctx.features.isEnabled('containsFilter'), foreignKeys: ctx.features.isEnabled('foreignKeys') });
        indexes[pattern] = { filter, overrideSettings: settings?.overrideSettings ?? false };
      }
      const apiKey = body.apiKey ?? null;
      const details: Record<string, unknown> = { url };
      if (apiKey !== null) details['apiKey'] = hideSecret(apiKey);
      if (payloadSize !== null) details['payloadSize'] = formatByteSize(payloadSize);
      details['indexes'] = indexes;
      return enqueueTask(ctx, { type: 'export', indexUid: null, details, params: { op: 'export', url, apiKey, payloadSize, indexes } }, query);
    },
  });
}
