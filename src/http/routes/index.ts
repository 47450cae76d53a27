import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { rootRoutes } from './root.js';
import { indexRoutes } from './indexes.js';
import { documentRoutes } from './documents.js';
import { taskRoutes } from './tasks.js';
import { clusterRoutes } from './cluster.js';
import { settingsRoutes } from './settings.js';
import { experimentalFeatureRoutes } from './experimental-features.js';
import { metricsRoutes } from './metrics.js';
import { keyRoutes } from './keys.js';
import { facetSearchRoutes } from './facet-search.js';

export async function registerRoutes(app: FastifyInstance, ctx: AppContext): Promise<void> {
  rootRoutes(app, ctx);
  indexRoutes(app, ctx);
  documentRoutes(app, ctx);
  taskRoutes(app, ctx);
  clusterRoutes(app, ctx);
  settingsRoutes(app, ctx);
  experimentalFeatureRoutes(app, ctx);
  metricsRoutes(app, ctx);
  keyRoutes(app, ctx);
  facetSearchRoutes(app, ctx);
}
