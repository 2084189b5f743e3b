/**
 * The caller's notifications (docs/api.md "Notifications"; edition 3.0, as the notification
 * settings at /api/user/notifications). Thin: parse, call ops/notification-inbox.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { deleteMyNotification, deleteMyNotifications, getMyNotification, listMyNotifications } from '../ops/notification-inbox.js';
import { pathParam } from './params.js';

export async function notificationInboxRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const id = pathParam('id');
  app.get('/api/notifications', async (request) => success('notifications', await listMyNotifications(ctx, callerOf(request))));
  app.delete('/api/notifications', async (request) => success('notifications deleted', await deleteMyNotifications(ctx, callerOf(request))));
  app.get('/api/notifications/:id', async (request) => success('notification', await getMyNotification(ctx, callerOf(request), id(request))));
  app.delete('/api/notifications/:id', async (request) => {
    await deleteMyNotification(ctx, callerOf(request), id(request));
    return success('notification deleted');
  });
}
