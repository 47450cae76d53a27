import type { FastifyInstance } from 'fastify';
import { indexVisibility } from '../../auth/request-auth.js';
import { rfc3339 } from '../../util/time.js';
import type { AppContext } from '../context.js';
import { route } from '../route.js';
import { s } from '../schema.js';
import { indexStats } from './indexes.js';
import { VERSION } from '../../version.js';

const statsQuery = s.object({
  showInternalDatabaseSizes: s.field(s.boolean(), 'invalid_stats_show_internal_database_sizes'),
  sizeFormat: s.field(s.enum(['raw', 'human'] as const), 'invalid_stats_size_format'),
});

function human(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number.isInteger(v) ? v : v.toFixed(2)} ${units[i]}`;
}

export function rootRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'GET',
    url: '/',
    summary: 'Tells that the server runs',
    tags: ['Health'],
    status: 200,
    handler: async () => ({ status: 'Trine is running' }),
  });
  route(app, {
    method: 'GET',
    url: '/health',
    summary: 'Health of the node (public)',
    tags: ['Health'],
    status: 200,
    response: '{status: "available"}',
    handler: async () => ({ status: 'available' }),
  });
  route(app, {
    method: 'GET',
    url: '/version',
    summary: 'Version of the server',
    tags: ['Version'],
    action: 'version',
    status: 200,
    handler: async () => ({ commitSha: VERSION.commitSha, commitDate: VERSION.commitDate, pkgVersion: VERSION.pkgVersion }),
  });
  route(app, {
    method: 'GET',
    url: '/stats',
    summary: 'Statistics of the database and of every index',
    tags: ['Stats'],
    action: 'stats.get',
    query: statsQuery,
    status: 200,
    handler: async (req, _reply, { query: q }) => {
      const databaseSize = await ctx.engine.diskSize();
      const indexes: Record<string, unknown> = {};
      const visible = indexVisibility(req);
      for (const h of ctx.engine.listIndexes()) if (!visible || visible(h.uid)) indexes[h.uid] = await indexStats(ctx, h.uid);
      const fmt = (n: number) => (q.sizeFormat === 'human' ? human(n) : n);
      const lastUpdate = ctx.engine.lastUpdate;
      return {
        databaseSize: fmt(databaseSize),
        usedDatabaseSize: fmt(databaseSize),
        lastUpdate: lastUpdate === null ? null : rfc3339(lastUpdate),
        indexes,
      };
    },
  });
}
