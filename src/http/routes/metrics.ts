import type { FastifyInstance } from 'fastify';
import type { AppContext } from '../context.js';
import { route } from '../route.js';

export function metricsRoutes(app: FastifyInstance, ctx: AppContext): void {
  route(app, {
    method: 'GET',
    url: '/metrics',
    summary: 'Metrics of this node in the Prometheus text format',
    tags: ['Metrics'],
    action: 'metrics.get',
    status: 200,
    response: 'Prometheus text exposition format 0.0.4',
    responseMediaType: 'text/plain',
    handler: async (_req, reply) => {
      const { contentType, body } = await ctx.metrics.expose();
      reply.type(contentType);
      return body;
    },
  });
}
