/**
 * The user directory (edition 3.0 only): GET /api/users. Thin: parse, call
 * ops/users-directory.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { listUsers } from '../ops/users-directory.js';

export async function userDirectoryRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/users', async (request) => success('users of your organization', await listUsers(ctx, callerOf(request), request.query)));
}
