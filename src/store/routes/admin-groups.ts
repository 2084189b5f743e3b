/**
 * Administrator group endpoints (docs/api.md "Administrator endpoints", edition 3.0 only): list,
 * create, details, update, delete and the members (routes/members.ts, door `admin`). Thin:
 * parse the path, call the operation in ops/admin-groups.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { createGroup, deleteGroup, getGroup, listGroups, updateAdminGroup } from '../ops/admin-groups.js';
import { memberRoutes } from './members.js';
import { pathParam } from './params.js';

export async function adminGroupRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const uuid = pathParam('group_uuid');

  app.get('/api/admin/groups', async (request) => success('groups', await listGroups(ctx, callerOf(request), request.query)));

  app.post('/api/admin/groups', async (request) => success('group created', await createGroup(ctx, callerOf(request), request.query, request.body)));

  app.get('/api/admin/groups/:group_uuid', async (request) => success('group', await getGroup(ctx, callerOf(request), uuid(request))));

  app.put('/api/admin/groups/:group_uuid', async (request) =>
    success('group updated', await updateAdminGroup(ctx, callerOf(request), uuid(request), request.body)),
  );

  app.delete('/api/admin/groups/:group_uuid', async (request) =>
    success('group deleted', await deleteGroup(ctx, callerOf(request), uuid(request), request.query)),
  );

  await memberRoutes(app, ctx, 'admin');
}
