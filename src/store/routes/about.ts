/**
 * GET /api/admin/about (extension, docs/extensions.md "About this server"): what an
 * administrator's page shows of the server: the interface edition served, driveway's version,
 * and what the caller is (the built-in admin, whose alone some operations are, and their
 * organization). Edition 3.0 only, as every /api/admin route.
 */
import type { FastifyInstance } from 'fastify';
import { packageVersion } from '../../common/package-version.js';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';

export async function aboutRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  app.get('/api/admin/about', async (request) => {
    const caller = callerOf(request);
    return success('about', { edition: ctx.config.store.edition, version: packageVersion(), builtin_admin: caller.isBuiltin, org_id: caller.orgId });
  });
}
