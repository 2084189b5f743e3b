/** The person's notifications (docs/api.md "Notifications"): listed, deleted one or all. */
import type { NotificationRecord } from '../../store/schemas/notifications.js';
import { api } from './client.js';

export type Notification = NotificationRecord;

export const listNotifications = () => api<Notification[]>('GET', '/api/notifications');
export const deleteNotification = (id: number) => api<unknown>('DELETE', `/api/notifications/${encodeURIComponent(String(id))}`);
export const deleteAllNotifications = () => api<{ deleted: number }>('DELETE', '/api/notifications');
