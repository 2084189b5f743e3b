/**
 * Notifications (docs/api.md "Notifications"; docs/store-semantics.md "Notifications"): each
 * user's list of what happened that they should hear of, written in the transaction of the event
 * that caused it (a copy offered, a share request waiting for its approver, a request decided; a
 * drive crossing 90 % of its quota is migration 031's trigger; a link about to expire is the
 * sweep below), listed, read and deleted by its user only (another user's id is 404, as an
 * unknown one). The user's notification settings (ops/notifications.ts) decide where one applies:
 *   copy offered to you                 realtime_alert_shared_with_me
 *   copy offered to a group of yours    realtime_alert_shared_with_my_groups (the members who answer it)
 *   your share request decided          realtime_alert_owned
 *   your drive near its quota           realtime_alert_owned
 *   a group's drive near its quota      realtime_alert_group_owned (each member)
 *   your link about to expire           realtime_alert_owned (group_owned for a group's node)
 *   a request waiting for you           always: a task given to you, not an alert about resources
 */
import type { StoreContext } from '../context.js';
import { notFound } from '../envelope.js';
import { membersOf } from '../storage/groups.js';
import {
  deleteAllNotifications,
  deleteNotification,
  getNotification,
  insertNotifications,
  linksExpiringUnnoticed,
  listNotifications,
  markLinkExpiryNoticed,
  type NewNotification,
  type NotificationRow,
} from '../storage/notifications.js';
import type { Sql } from '../storage/sql.js';
import { approversOf, type ShareRequestRow } from '../storage/shares.js';
import type { NotificationKind, NotificationRecord } from '../schemas/notifications.js';
import type { AuthenticatedUser } from '../sessions.js';
import { wantsAlertOf, type NotificationKey } from './notifications.js';

/** How long before a link's expiry its creator hears of it. */
export const LINK_EXPIRY_NOTICE_MS = 24 * 3600_000;

type Params = Record<string, string | number | boolean | null>;

function row(userUuid: string, kind: NotificationKind, object: { type: string; id: string }, params: Params, nowMs: number): NewNotification {
  return { user_uuid: userUuid, kind, object_type: object.type, object_id: object.id, params: JSON.stringify(params), created: nowMs };
}

/** Those of `userUuids` whose setting `key` is on, in order. */
async function wanting(sql: Sql, userUuids: readonly string[], key: NotificationKey): Promise<string[]> {
  const kept: string[] = [];
  for (const uuid of userUuids) if (await wantsAlertOf(sql, uuid, key)) kept.push(uuid);
  return kept;
}

/**
 * A copy offered (or, in edition 1.0, delivered) to a user or a group: the user, or the group's
 * active members who answer its incoming shares (every member, or its administrators when
 * `accept_incoming` is `admins`). Runs in the offer's transaction.
 */
export async function noteCopyOffered(
  sql: Sql,
  recipient: { type: 'User' | 'Group'; uuid: string; name: string },
  share: { uuid: string; name: string; sharerFullname: string },
  nowMs: number,
): Promise<void> {
  const params: Params = { name: share.name, sharer_fullname: share.sharerFullname, ...(recipient.type === 'Group' ? { group_uuid: recipient.uuid, group_name: recipient.name } : {}) };
  const policy = recipient.type === 'Group' ? (await sql.get<{ accept_incoming: string }>('SELECT accept_incoming FROM groups WHERE uuid = ?', [recipient.uuid]))?.accept_incoming : undefined;
  const users =
    recipient.type === 'User'
      ? await wanting(sql, [recipient.uuid], 'realtime_alert_shared_with_me')
      : await wanting(
          sql,
          (await membersOf(sql, recipient.uuid)).filter((m) => m.isActive && (policy !== 'admins' || m.isAdmin)).map((m) => m.userUuid),
          'realtime_alert_shared_with_my_groups',
        );
  await insertNotifications(sql, users.map((u) => row(u, 'copy_offered', { type: 'incoming_share', id: share.uuid }, params, nowMs)));
}

/** A share request opened: each approver of its workspace and type hears of it. Runs in the request's transaction. */
export async function noteApprovalWaiting(sql: Sql, request: { uuid: string; workspaceUuid: string; shareType: string; nodeName: string; requesterUuid: string }, nowMs: number): Promise<void> {
  const approvers = (await approversOf(sql, request.workspaceUuid)).filter((a) => a.share_type === request.shareType && a.approver_uuid !== request.requesterUuid);
  const requester = await sql.get<{ fullname: string }>('SELECT fullname FROM users WHERE uuid = ?', [request.requesterUuid]);
  const params: Params = { name: request.nodeName, share_type: request.shareType, requester_fullname: requester?.fullname ?? '' };
  await insertNotifications(sql, approvers.map((a) => row(a.approver_uuid, 'approval_waiting', { type: 'share_request', id: request.uuid }, params, nowMs)));
}

/** A request approved or rejected: its requester hears of it. Runs in the decision's transaction. */
export async function noteRequestDecided(sql: Sql, request: ShareRequestRow, decision: { state: 'approved' | 'rejected'; byFullname: string; comment: string }, nowMs: number): Promise<void> {
  if (request.requester_uuid === null || !(await wantsAlertOf(sql, request.requester_uuid, 'realtime_alert_owned'))) return;
  const params: Params = { name: request.node_name, share_type: request.share_type, by_fullname: decision.byFullname, comment: decision.comment };
  await insertNotifications(sql, [row(request.requester_uuid, decision.state === 'approved' ? 'request_approved' : 'request_rejected', { type: 'share_request', id: request.uuid }, params, nowMs)]);
}

/**
 * The sweep of links about to expire (the store runs it every few minutes, like the tree
 * versions' compaction): each public or upload link expiring within LINK_EXPIRY_NOTICE_MS is
 * announced to its creator once (once more if its expiry changes). One transaction; answers how
 * many links it announced.
 */
export async function sweepExpiringLinks(ctx: StoreContext): Promise<number> {
  const now = ctx.clock.now();
  return await ctx.storage.sql.transaction(async (tx) => {
    const links = await linksExpiringUnnoticed(tx, now, now + LINK_EXPIRY_NOTICE_MS);
    for (const link of links) {
      await markLinkExpiryNoticed(tx, link.share_uuid, link.expires);
      if (!(await wantsAlertOf(tx, link.creator_uuid, link.owner_type === 'Group' ? 'realtime_alert_group_owned' : 'realtime_alert_owned'))) continue;
      const params: Params = { name: link.node_name, link_type: link.type, node_uuid: link.node_uuid, expires: link.expires };
      await insertNotifications(tx, [row(link.creator_uuid, 'link_expiring', { type: 'share', id: link.share_uuid }, params, now)]);
    }
    return links.length;
  });
}

const SHARE_WORDS: Record<string, string> = { share_copy: 'copy', private: 'private share', public: 'public link', upload: 'upload link' };

function percentOf(p: Record<string, unknown>): number {
  const used = Number(p.used);
  const quota = Number(p.quota);
  return quota > 0 ? Math.floor((used * 100) / quota) : 0;
}

/** The store's words for a notification (English; clients may make their own from kind and params). */
function subjectOf(kind: string, p: Record<string, unknown>): string {
  const name = String(p.name ?? '');
  switch (kind) {
    case 'copy_offered':
      return p.group_name === undefined ? `${String(p.sharer_fullname)} shared a copy of "${name}" with you` : `${String(p.sharer_fullname)} shared a copy of "${name}" with ${String(p.group_name)}`;
    case 'approval_waiting':
      return `${String(p.requester_fullname)} asks you to approve a ${SHARE_WORDS[String(p.share_type)] ?? 'share'} of "${name}"`;
    case 'request_approved':
      return `${String(p.by_fullname)} approved your ${SHARE_WORDS[String(p.share_type)] ?? 'share'} of "${name}"`;
    case 'request_rejected':
      return `${String(p.by_fullname)} rejected your ${SHARE_WORDS[String(p.share_type)] ?? 'share'} of "${name}"`;
    case 'quota_near':
      return p.group_name === undefined ? `Your drive is ${percentOf(p)} % full` : `The drive of ${String(p.group_name)} is ${percentOf(p)} % full`;
    case 'link_expiring':
      return `Your ${SHARE_WORDS[String(p.link_type)] ?? 'link'} to "${name}" expires ${new Date(Number(p.expires)).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
    default:
      return kind;
  }
}

function record(r: NotificationRow): NotificationRecord {
  let params: Record<string, unknown> = {};
  try {
    params = JSON.parse(r.params) as Record<string, unknown>;
  } catch {
    // A row written by hand: no params.
  }
  return { id: r.id, kind: r.kind, object_type: r.object_type, object_id: r.object_id, subject: subjectOf(r.kind, params), params, created: r.created };
}

/** An id as the path carries it: a positive integer, else no such notification (404). */
function idOf(raw: string): number {
  if (!/^[1-9]\d{0,15}$/.test(raw)) throw notFound('notification not found');
  return Number(raw);
}

/** GET /api/notifications: the caller's, newest first. */
export async function listMyNotifications(ctx: StoreContext, caller: AuthenticatedUser): Promise<NotificationRecord[]> {
  return (await listNotifications(ctx.storage.sql, caller.userUuid)).map(record);
}

/** GET /api/notifications/{id}: 404 unless it is the caller's. */
export async function getMyNotification(ctx: StoreContext, caller: AuthenticatedUser, rawId: string): Promise<NotificationRecord> {
  const found = await getNotification(ctx.storage.sql, caller.userUuid, idOf(rawId));
  if (!found) throw notFound('notification not found');
  return record(found);
}

/** DELETE /api/notifications/{id}: 404 unless it is the caller's. */
export async function deleteMyNotification(ctx: StoreContext, caller: AuthenticatedUser, rawId: string): Promise<void> {
  if (!(await deleteNotification(ctx.storage.sql, caller.userUuid, idOf(rawId)))) throw notFound('notification not found');
}

/** DELETE /api/notifications: every one of the caller's; how many. */
export async function deleteMyNotifications(ctx: StoreContext, caller: AuthenticatedUser): Promise<{ deleted: number }> {
  return { deleted: await deleteAllNotifications(ctx.storage.sql, caller.userUuid) };
}
