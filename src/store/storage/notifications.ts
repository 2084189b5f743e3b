/**
 * Notifications (migration 031; docs/api.md "Notifications"): the rows of each user's list, and
 * the links whose coming expiry was announced. The SQL only: which events make one, for whom and
 * with which words is ops/notification-inbox.ts's. A user keeps the newest 100 (the migration's
 * trim trigger); the quota triggers of the migration write rows of their own.
 */
import type { Sql } from './sql.js';

export interface NotificationRow {
  id: number;
  user_uuid: string;
  kind: string;
  object_type: string;
  object_id: string;
  /** JSON object: what the words about the event need. */
  params: string;
  created: number;
}

export type NewNotification = Omit<NotificationRow, 'id'>;

/** Adds the rows, in order (ids grow with them). */
export async function insertNotifications(sql: Sql, rows: readonly NewNotification[]): Promise<void> {
  for (const row of rows) {
    await sql.run('INSERT INTO notifications (user_uuid, kind, object_type, object_id, params, created) VALUES (@user_uuid, @kind, @object_type, @object_id, @params, @created)', { ...row });
  }
}

/** The user's notifications, newest first. */
export async function listNotifications(sql: Sql, userUuid: string): Promise<NotificationRow[]> {
  return await sql.all<NotificationRow>('SELECT * FROM notifications WHERE user_uuid = ? ORDER BY id DESC', [userUuid]);
}

/** One of the user's notifications; undefined when it is unknown or another user's. */
export async function getNotification(sql: Sql, userUuid: string, id: number): Promise<NotificationRow | undefined> {
  return await sql.get<NotificationRow>('SELECT * FROM notifications WHERE user_uuid = ? AND id = ?', [userUuid, id]);
}

/** Removes one of the user's notifications; false when it is unknown or another user's. */
export async function deleteNotification(sql: Sql, userUuid: string, id: number): Promise<boolean> {
  return (await sql.run('DELETE FROM notifications WHERE user_uuid = ? AND id = ?', [userUuid, id])).changes > 0;
}

/** Removes every notification of the user; how many there were. */
export async function deleteAllNotifications(sql: Sql, userUuid: string): Promise<number> {
  return (await sql.run('DELETE FROM notifications WHERE user_uuid = ?', [userUuid])).changes;
}

export interface ExpiringLinkRow {
  share_uuid: string;
  type: string;
  expires: number;
  creator_uuid: string;
  node_uuid: string;
  node_name: string;
  owner_type: 'User' | 'Group';
}

/**
 * Links (public and upload) of a live creator expiring in (from, to] whose expiry at that time
 * was not announced yet, oldest expiry first.
 */
export async function linksExpiringUnnoticed(sql: Sql, fromMs: number, toMs: number): Promise<ExpiringLinkRow[]> {
  return await sql.all<ExpiringLinkRow>(
    `SELECT s.uuid AS share_uuid, s.type, s.expires, s.creator_uuid, n.uuid AS node_uuid, n.name AS node_name, n.owner_type
       FROM shares s JOIN nodes n ON n.uuid = s.node_uuid
      WHERE s.type <> 'private' AND s.expires > ? AND s.expires <= ? AND s.creator_uuid IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM link_expiry_notices e WHERE e.share_uuid = s.uuid AND e.expires = s.expires)
      ORDER BY s.expires, s.uuid`,
    [fromMs, toMs],
  );
}

/** Records that the link's expiry at `expires` was announced. */
export async function markLinkExpiryNoticed(sql: Sql, shareUuid: string, expires: number): Promise<void> {
  await sql.run('INSERT INTO link_expiry_notices (share_uuid, expires) VALUES (?, ?) ON CONFLICT (share_uuid) DO UPDATE SET expires = excluded.expires', [shareUuid, expires]);
}
