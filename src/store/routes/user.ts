/**
 * The current user's own endpoints (edition 3.0 only; 1.0 has no /api/user). This issue:
 * GET /api/user. Logout lives with login in auth.ts. Reads only the caller's own row; must
 * never expose the password hash or the TOTP secret.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../app.js';
import type { StoreContext } from '../context.js';
import { getUserByUuid } from '../db/users.js';
import { success, unauthenticated } from '../envelope.js';
import { type UserProfileBody } from '../schemas/users.js';
import { avatarUrl } from '../ops/avatars.js';

export async function userRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const { db } = ctx;

  app.get('/api/user', async (request) => {
    const caller = callerOf(request);
    const user = getUserByUuid(db, caller.userUuid);
    // The auth hook joined the session to an active user a moment ago; a row gone since is a logout.
    if (!user) throw unauthenticated();
    const profile: UserProfileBody = {
      uuid: user.uuid,
      fullname: user.fullname,
      email: user.email,
      is_active: user.is_active === 1,
      is_admin: user.is_admin === 1,
      avatar: avatarUrl(ctx, user.uuid),
      disk_quota: user.disk_quota,
      disk_used: user.disk_used,
      twofa: user.twofa === 1,
      created: user.created,
    };
    return success('current user', profile);
  });
}
