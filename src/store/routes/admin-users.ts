/**
 * Administrator user endpoints (docs/api.md "Administrator endpoints", edition 3.0 only): list,
 * create, details, update, delete, and a user's groups. Thin: parse the path, call the
 * operation in ops/admin-users.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { assignUserGroups, createUser, deleteUser, getUser, listUsers, updateUser, userGroups } from '../ops/admin-users.js';
import { pathParam } from './params.js';

export async function adminUserRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const uuid = pathParam('user_uuid');

  app.get('/api/admin/users', async (request) => success('users', await listUsers(ctx, callerOf(request), request.query)));

  app.post('/api/admin/users', async (request) => success('user created', await createUser(ctx, callerOf(request), request.query, request.body)));

  app.get('/api/admin/users/:user_uuid', async (request) => success('user', await getUser(ctx, callerOf(request), uuid(request))));

  app.put('/api/admin/users/:user_uuid', async (request) => {
    await updateUser(ctx, callerOf(request), uuid(request), request.body);
    return success('user updated');
  });

  app.delete('/api/admin/users/:user_uuid', async (request) =>
    success('user deleted', await deleteUser(ctx, callerOf(request), uuid(request), request.query)),
  );

  app.get('/api/admin/users/:user_uuid/groups', async (request) => success('groups of the user', await userGroups(ctx, callerOf(request), uuid(request))));

  app.post('/api/admin/users/:user_uuid/groups', async (request) =>
    success('groups assigned', await assignUserGroups(ctx, callerOf(request), uuid(request), request.body)),
  );
}
