/**
 * The caller's notifications (an extension: docs/extensions.md "Notifications"): GET and DELETE
 * /api/notifications[/{id}]. A server without them answers not-found; the bridge then answers
 * with an empty list (bridge/nextcloud/notifications.ts).
 */
import { z } from 'zod';
import type { StoreHttp } from './http.js';
import { parseWith } from './parse.js';
import { dataEnvelope, notificationRecordSchema } from './schemas.js';
import type { NotificationEntry, StoreSession } from './types.js';

export function toNotificationEntry(d: z.infer<typeof notificationRecordSchema>): NotificationEntry {
  return { id: d.id, kind: d.kind, objectType: d.object_type, objectId: d.object_id, subject: d.subject, params: d.params, createdMs: d.created };
}

export async function listNotifications(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<NotificationEntry[]> {
  const operation = 'notifications.list';
  const res = await http.call({ method: 'GET', path: '/api/notifications', token: s.token, signal }, operation);
  return parseWith(dataEnvelope(z.array(notificationRecordSchema)), res.body, operation, res.status).data.map(toNotificationEntry);
}

export async function getNotification(http: StoreHttp, s: StoreSession, id: number, signal?: AbortSignal): Promise<NotificationEntry> {
  const operation = 'notifications.get';
  const res = await http.call({ method: 'GET', path: `/api/notifications/${encodeURIComponent(String(id))}`, token: s.token, signal }, operation);
  return toNotificationEntry(parseWith(dataEnvelope(notificationRecordSchema), res.body, operation, res.status).data);
}

export async function deleteNotification(http: StoreHttp, s: StoreSession, id: number, signal?: AbortSignal): Promise<void> {
  await http.call({ method: 'DELETE', path: `/api/notifications/${encodeURIComponent(String(id))}`, token: s.token, signal }, 'notifications.delete');
}

export async function deleteNotifications(http: StoreHttp, s: StoreSession, signal?: AbortSignal): Promise<void> {
  await http.call({ method: 'DELETE', path: '/api/notifications', token: s.token, signal }, 'notifications.deleteAll');
}
