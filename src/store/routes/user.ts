/**
 * The current user's own endpoints (edition 3.0 only; 1.0 has no /api/user): the profile,
 * notification settings and login history. Thin: parse, call the operation, write the envelope.
 * Logout lives with login in auth.ts; 2FA, app passwords and WebDrive have their own files.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { getLoginHistory } from '../ops/login-history.js';
import { getNotifications, updateNotifications } from '../ops/notifications.js';
import { getProfile, updateProfile } from '../ops/profile.js';

export async function userRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/user', async (request) => success('current user', await getProfile(ctx, callerOf(request))));

  app.put('/api/user', async (request) => success('profile updated', await updateProfile(ctx, callerOf(request), request.body)));

  app.get('/api/user/notifications', async (request) => success('notification settings', await getNotifications(ctx, callerOf(request))));

  app.put('/api/user/notifications', async (request) =>
    success('notification settings updated', await updateNotifications(ctx, callerOf(request), request.body)),
  );

  app.get('/api/user/login_history', async (request) => success('login history', await getLoginHistory(ctx, callerOf(request))));
}
