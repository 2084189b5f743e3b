/**
 * Organizations (docs/extensions.md, "Organizations"; edition 3.0 only):
 * GET/POST /api/admin/organizations, GET/PUT/DELETE /api/admin/organizations/{id}.
 * Thin: parse the path, call the operation in ops/organizations.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { createOrganization, deleteOrganization, getOrganization, listOrganizations, updateOrganization } from '../ops/organizations.js';
import { pathParam } from './params.js';

export async function organizationRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const id = pathParam('org_id');

  app.get('/api/admin/organizations', async (request) => success('organizations', await listOrganizations(ctx, callerOf(request))));

  app.post('/api/admin/organizations', async (request) => success('organization created', await createOrganization(ctx, callerOf(request), request.body)));

  app.get('/api/admin/organizations/:org_id', async (request) => success('organization', await getOrganization(ctx, callerOf(request), id(request))));

  app.put('/api/admin/organizations/:org_id', async (request) =>
    success('organization updated', await updateOrganization(ctx, callerOf(request), id(request), request.body)),
  );

  app.delete('/api/admin/organizations/:org_id', async (request) => {
    await deleteOrganization(ctx, callerOf(request), id(request));
    return success('organization deleted');
  });
}
