import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { prepareRoutes } from '../route.js';
import { rootRoutes } from './root.js';
import { indexRoutes } from './indexes.js';
import { documentRoutes } from './documents.js';
import { taskRoutes } from './tasks.js';
import { clusterRoutes } from './cluster.js';
import { settingsRoutes } from './settings.js';
import { experimentalFeatureRoutes } from './experimental-features.js';
import { metricsRoutes } from './metrics.js';
import { keyRoutes } from './keys.js';
import { backupRoutes } from './backups.js';
import { openapiRoutes } from './openapi.js';
import { facetSearchRoutes } from './facet-search.js';
import { searchRoutes } from './search.js';
import { multiSearchRoutes } from './multi-search.js';
import { similarRoutes } from './similar.js';
import { fieldRoutes } from './fields.js';
import { renderRoutes } from './render.js';
import { webhookRoutes } from './webhooks.js';
import { logRoutes } from './logs.js';
import { searchRuleRoutes } from './search-rules.js';
import { chatRoutes } from './chats.js';
import { networkRoutes } from './network.js';
import { exportRoutes } from './export.js';

/** Every route of the API, on `app` (which records their descriptions for the OpenAPI document). */
export async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  prepareRoutes(app, { payload: ctx.options.httpPayloadSizeLimit, json: ctx.options.httpJsonPayloadSizeLimit });
  rootRoutes(app, ctx);
  indexRoutes(app, ctx);
  documentRoutes(app, ctx);
  taskRoutes(app, ctx);
  clusterRoutes(app, ctx);
  settingsRoutes(app, ctx);
  experimentalFeatureRoutes(app, ctx);
  metricsRoutes(app, ctx);
  keyRoutes(app, ctx);
  backupRoutes(app, ctx);
  searchRoutes(app, ctx);
  multiSearchRoutes(app, ctx);
  similarRoutes(app, ctx);
  fieldRoutes(app, ctx);
  renderRoutes(app, ctx);
  webhookRoutes(app, ctx);
  logRoutes(app, ctx);
  searchRuleRoutes(app, ctx);
  chatRoutes(app, ctx);
  networkRoutes(app, ctx);
  exportRoutes(app, ctx);
  // Builds its document on first request, from every route registered by then.
  openapiRoutes(app, ctx);
  facetSearchRoutes(app, ctx);
}
