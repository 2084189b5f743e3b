/**
 * Group rows, memberships and group tags (migration 008). Owns the SQL only: who may read or
 * change a group is decided by access.ts and ops/, and the permission values are checked by the
 * schemas before they get here. Permission lists are stored as JSON arrays.
 */
import type { Db } from './dialects/sqlite-open.js';

export type InboxPolicy = 'members' | 'admins';

export interface GroupRow {
  uuid: string;
  org_id: string;
  name: string;
  description: string;
  disk_quota: number;
  disk_used: number;
  accept_incoming: InboxPolicy;
  private_shares_notify: InboxPolicy;
  created: number;
  updated: number;
}

export function getGroup(db: Db, uuid: string): GroupRow | undefined {
  return db.prepare('SELECT * FROM groups WHERE uuid = ?').get(uuid) as GroupRow | undefined;
}

/** True when another group of the organization has this name (case-insensitive). */
export function isGroupNameTaken(db: Db, orgId: string, name: string, exceptUuid?: string): boolean {
  return (
    db.prepare('SELECT 1 FROM groups WHERE org_id = ? AND name = ? COLLATE NOCASE AND uuid IS NOT ?').get(orgId, name, exceptUuid ?? null) !==
    undefined
  );
}

export function groupsOfOrg(db: Db, orgId: string): GroupRow[] {
  return db.prepare('SELECT * FROM groups WHERE org_id = ? ORDER BY name COLLATE NOCASE, uuid').all(orgId) as GroupRow[];
}

export function memberCount(db: Db, groupUuid: string): number {
  return (db.prepare('SELECT COUNT(*) AS n FROM group_members WHERE group_uuid = ?').get(groupUuid) as { n: number }).n;
}

export function insertGroup(db: Db, group: { uuid: string; orgId: string; name: string; description: string; diskQuotaBytes: number; nowMs: number }): void {
  db.prepare(
    `INSERT INTO groups (uuid, org_id, name, description, disk_quota, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(group.uuid, group.orgId, group.name, group.description, group.diskQuotaBytes, group.nowMs, group.nowMs);
}

export interface GroupPatch {
  name?: string;
  description?: string;
  diskQuotaBytes?: number;
  acceptIncoming?: InboxPolicy;
  privateSharesNotify?: InboxPolicy;
}

export function updateGroup(db: Db, uuid: string, patch: GroupPatch, nowMs: number): void {
  db.prepare(
    `UPDATE groups SET name = COALESCE(?, name), description = COALESCE(?, description), disk_quota = COALESCE(?, disk_quota),
       accept_incoming = COALESCE(?, accept_incoming), private_shares_notify = COALESCE(?, private_shares_notify), updated = ?
     WHERE uuid = ?`,
  ).run(
    patch.name ?? null,
    patch.description ?? null,
    patch.diskQuotaBytes ?? null,
    patch.acceptIncoming ?? null,
    patch.privateSharesNotify ?? null,
    nowMs,
    uuid,
  );
}

/** Marks the group's profile as changed (its avatar, kept in another table). */
export function touchGroup(db: Db, uuid: string, nowMs: number): void {
  db.prepare('UPDATE groups SET updated = ? WHERE uuid = ?').run(nowMs, uuid);
}

/** Removes the row; memberships and tags go with it (ON DELETE CASCADE). Nodes are the caller's. */
export function deleteGroupRow(db: Db, uuid: string): void {
  db.prepare('DELETE FROM groups WHERE uuid = ?').run(uuid);
}

/** SPEC "Membership permission object", as stored. */
export interface Permissions {
  isAdmin: boolean;
  nodePermissions: string[];
  tagPermissions: string[];
  sharePermissions: string[];
}

export interface Membership extends Permissions {
  groupUuid: string;
  userUuid: string;
  addedMs: number;
}

interface MembershipRow {
  group_uuid: string;
  user_uuid: string;
  is_admin: number;
  node_permissions: string;
  tag_permissions: string;
  share_permissions: string;
  added: number;
}

const MEMBERSHIP_COLUMNS = 'm.group_uuid, m.user_uuid, m.is_admin, m.node_permissions, m.tag_permissions, m.share_permissions, m.added';

function toMembership(row: MembershipRow): Membership {
  return {
    groupUuid: row.group_uuid,
    userUuid: row.user_uuid,
    isAdmin: row.is_admin === 1,
    nodePermissions: JSON.parse(row.node_permissions) as string[],
    tagPermissions: JSON.parse(row.tag_permissions) as string[],
    sharePermissions: JSON.parse(row.share_permissions) as string[],
    addedMs: row.added,
  };
}

/** The membership of one user in one group: a primary-key lookup (access.ts runs it per request). */
export function membershipOf(db: Db, groupUuid: string, userUuid: string): Membership | undefined {
  const row = db.prepare(`SELECT ${MEMBERSHIP_COLUMNS} FROM group_members m WHERE m.group_uuid = ? AND m.user_uuid = ?`).get(groupUuid, userUuid) as
    | MembershipRow
    | undefined;
  return row && toMembership(row);
}

/** A membership with its group's name, for the lists that show both. */
export interface NamedMembership extends Membership {
  groupName: string;
}

/** Memberships of the users given (all when `userUuid` is undefined) in one organization's groups, by group name. */
export function membershipsInOrg(db: Db, orgId: string, userUuid?: string): NamedMembership[] {
  const rows = db
    .prepare(
      `SELECT ${MEMBERSHIP_COLUMNS}, g.name AS group_name FROM group_members m JOIN groups g ON g.uuid = m.group_uuid
       WHERE g.org_id = @org AND (@user IS NULL OR m.user_uuid = @user) ORDER BY g.name COLLATE NOCASE, g.uuid`,
    )
    .all({ org: orgId, user: userUuid ?? null }) as Array<MembershipRow & { group_name: string }>;
  return rows.map((row) => ({ ...toMembership(row), groupName: row.group_name }));
}

/** A member with the user fields the member record shows. */
export interface MemberWithUser extends Membership {
  fullname: string;
  email: string;
  isActive: boolean;
}

export function membersOf(db: Db, groupUuid: string, userUuid?: string): MemberWithUser[] {
  const rows = db
    .prepare(
      `SELECT ${MEMBERSHIP_COLUMNS}, u.fullname, u.email, u.is_active FROM group_members m JOIN users u ON u.uuid = m.user_uuid
       WHERE m.group_uuid = @group AND (@user IS NULL OR m.user_uuid = @user) ORDER BY u.fullname COLLATE NOCASE, u.uuid`,
    )
    .all({ group: groupUuid, user: userUuid ?? null }) as Array<MembershipRow & { fullname: string; email: string; is_active: number }>;
  return rows.map((row) => ({ ...toMembership(row), fullname: row.fullname, email: row.email, isActive: row.is_active === 1 }));
}

/** Adds the membership, or replaces its permissions when it exists. */
export function upsertMembership(db: Db, groupUuid: string, userUuid: string, p: Permissions, nowMs: number): void {
  db.prepare(
    `INSERT INTO group_members (group_uuid, user_uuid, is_admin, node_permissions, tag_permissions, share_permissions, added)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(group_uuid, user_uuid) DO UPDATE SET is_admin = excluded.is_admin, node_permissions = excluded.node_permissions,
       tag_permissions = excluded.tag_permissions, share_permissions = excluded.share_permissions`,
  ).run(
    groupUuid,
    userUuid,
    p.isAdmin ? 1 : 0,
    JSON.stringify(p.nodePermissions),
    JSON.stringify(p.tagPermissions),
    JSON.stringify(p.sharePermissions),
    nowMs,
  );
}

export function deleteMembership(db: Db, groupUuid: string, userUuid: string): boolean {
  return db.prepare('DELETE FROM group_members WHERE group_uuid = ? AND user_uuid = ?').run(groupUuid, userUuid).changes > 0;
}

export interface TagRow {
  name: string;
  class: string;
  creator_uuid: string | null;
  created: number;
}

/** The group's tags by name; `limit` 0 means all of them. */
export function tagsOf(db: Db, groupUuid: string, limit: number): TagRow[] {
  return db
    .prepare('SELECT name, class, creator_uuid, created FROM group_tags WHERE group_uuid = ? ORDER BY name COLLATE NOCASE LIMIT ?')
    .all(groupUuid, limit > 0 ? limit : -1) as TagRow[];
}

/** Inserts the tag; false when the group has one of that name (case-insensitive). */
export function insertTag(db: Db, groupUuid: string, tag: { name: string; class: string; creatorUuid: string; nowMs: number }): boolean {
  const result = db
    .prepare('INSERT OR IGNORE INTO group_tags (group_uuid, name, class, creator_uuid, created) VALUES (?, ?, ?, ?, ?)')
    .run(groupUuid, tag.name, tag.class, tag.creatorUuid, tag.nowMs);
  return result.changes > 0;
}
