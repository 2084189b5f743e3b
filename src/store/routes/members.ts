/**
 * A group's member endpoints, registered under both doors: `/api/groups/{group_uuid}/users`
 * (docs/api.md "Groups for members") and `/api/admin/groups/{group_uuid}/users` (docs/api.md "Administrator
 * endpoints"). Thin: the door decides access inside ops/members.ts.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { addMember, getMember, listMembers, removeMember, updateMember, type GroupDoor } from '../ops/members.js';
import { pathParam } from './params.js';

export async function memberRoutes(app: FastifyInstance, ctx: StoreContext, door: GroupDoor): Promise<void> {
  const base = door === 'admin' ? '/api/admin/groups/:group_uuid/users' : '/api/groups/:group_uuid/users';
  const group = pathParam('group_uuid');
  const user = pathParam('user_uuid');

  app.get(base, async (request) => success('members', await listMembers(ctx, callerOf(request), door, group(request))));

  app.post(base, async (request) => success('member added', await addMember(ctx, callerOf(request), door, group(request), request.body)));

  app.get(`${base}/:user_uuid`, async (request) => success('member', await getMember(ctx, callerOf(request), door, group(request), user(request))));

  app.put(`${base}/:user_uuid`, async (request) =>
    success('member updated', await updateMember(ctx, callerOf(request), door, group(request), user(request), request.body)),
  );

  app.delete(`${base}/:user_uuid`, async (request) => {
    await removeMember(ctx, callerOf(request), door, group(request), user(request));
    return success('member removed');
  });
}
