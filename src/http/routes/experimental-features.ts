import type { FastifyInstance } from 'fastify';
import { at, expectBool, expectFields, type VCtx } from '../../engine/settings/validate-core.js';
import { ExperimentalFeatures } from '../../features/experimental-features.js';
import { FEATURE_NAMES, type FeatureName } from '../../engine/feature-switches.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';

const featuresSchema = {
  type: 'object',
  properties: Object.fromEntries(FEATURE_NAMES.map((f) => [f, { type: ['boolean', 'null'] }])),
  additionalProperties: false,
};

/** A partial update of the flags; `null` (like absence) keeps a flag as it is. */
function parseFeaturesPatch(body: unknown): Partial<Record<FeatureName, boolean>> {
  const root: VCtx = { path: '', code: 'bad_request' };
  const obj = expectFields(body, root, FEATURE_NAMES);
  const patch: Partial<Record<FeatureName, boolean>> = {};
  for (const [name, value] of Object.entries(obj)) {
    if (value !== null) patch[name as FeatureName] = expectBool(value, at(root, name));
  }
  return patch;
}

export function experimentalFeatureRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'GET',
    url: '/experimental-features',
    summary: 'The experimental features and whether each is on',
    tags: ['Experimental features'],
    action: 'experimental.get',
    status: 200,
    handler: async () => ctx.features.get(),
  });

  route(app, {
    method: 'PATCH',
    url: '/experimental-features',
    summary: 'Turn experimental features on or off; answers with all of them once applied',
    tags: ['Experimental features'],
    action: 'experimental.update',
    body: s.any(featuresSchema),
    read: 'unchecked',
    status: 200,
    errors: ['bad_request'],
    handler: async (_req, _reply, { body }) => {
      const patch = parseFeaturesPatch(body);
      // Through the log, so that every node holds the same flags.
      return ctx.configure(ExperimentalFeatures.COMMAND, patch);
    },
  });
}
