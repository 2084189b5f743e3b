/**
 * Groups and members, with organizations and WebDrive names (sections below). Group rows, memberships and group tags (migration 008). Owns the SQL only: who may read or
 * change a group is decided by access.ts and ops/, and the permission values are checked by the
 * schemas before they get here. Permission lists are stored as JSON arrays.
 */
import type { Sql } from './sql.js';
import { folded, nocase } from './portable.js';
import type { OwnerType } from './nodes.js';

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

export async function getGroup(sql: Sql, uuid: string): Promise<GroupRow | undefined> {
  return (await sql.get('SELECT * FROM groups WHERE uuid = ?', [uuid])) as GroupRow | undefined;
}

/** True when another group of the organization has this name (case-insensitive). */
export async function isGroupNameTaken(sql: Sql, orgId: string, name: string, exceptUuid?: string): Promise<boolean> {
  return (
    (await sql.get(`SELECT 1 FROM groups WHERE org_id = ? AND name = ?${nocase(sql)}${exceptUuid === undefined ? '' : ' AND uuid <> ?'}`, [
      orgId,
      name,
      ...(exceptUuid === undefined ? [] : [exceptUuid]),
    ])) !== undefined
  );
}

export async function groupsOfOrg(sql: Sql, orgId: string): Promise<GroupRow[]> {
  return (await sql.all(`SELECT * FROM groups WHERE org_id = ? ORDER BY name${nocase(sql)}, uuid`, [orgId])) as GroupRow[];
}

export async function memberCount(sql: Sql, groupUuid: string): Promise<number> {
  return ((await sql.get('SELECT COUNT(*) AS n FROM group_members WHERE group_uuid = ?', [groupUuid])) as { n: number }).n;
}

export async function insertGroup(sql: Sql, group: { uuid: string; orgId: string; name: string; description: string; diskQuotaBytes: number; nowMs: number }): Promise<void> {
  await sql.run(`INSERT INTO groups (uuid, org_id, name, description, disk_quota, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?)`, [group.uuid, group.orgId, group.name, group.description, group.diskQuotaBytes, group.nowMs, group.nowMs]);
}

export interface GroupPatch {
  name?: string;
  description?: string;
  diskQuotaBytes?: number;
  acceptIncoming?: InboxPolicy;
  privateSharesNotify?: InboxPolicy;
}

export async function updateGroup(sql: Sql, uuid: string, patch: GroupPatch, nowMs: number): Promise<void> {
  await sql.run(`UPDATE groups SET name = COALESCE(?, name), description = COALESCE(?, description), disk_quota = COALESCE(?, disk_quota),
       accept_incoming = COALESCE(?, accept_incoming), private_shares_notify = COALESCE(?, private_shares_notify), updated = ?
     WHERE uuid = ?`, [patch.name ?? null,
    patch.description ?? null,
    patch.diskQuotaBytes ?? null,
    patch.acceptIncoming ?? null,
    patch.privateSharesNotify ?? null,
    nowMs,
    uuid]);
}

/** Marks the group's profile as changed (its avatar, kept in another table). */
export async function touchGroup(sql: Sql, uuid: string, nowMs: number): Promise<void> {
  await sql.run('UPDATE groups SET updated = ? WHERE uuid = ?', [nowMs, uuid]);
}

/** Removes the row; memberships and tags go with it (ON DELETE CASCADE). Nodes are the caller's. */
export async function deleteGroupRow(sql: Sql, uuid: string): Promise<void> {
  await sql.run('DELETE FROM groups WHERE uuid = ?', [uuid]);
}

/** docs/api.md "Membership permission object", as stored. */
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
export async function membershipOf(sql: Sql, groupUuid: string, userUuid: string): Promise<Membership | undefined> {
  const row = (await sql.get(`SELECT ${MEMBERSHIP_COLUMNS} FROM group_members m WHERE m.group_uuid = ? AND m.user_uuid = ?`, [groupUuid, userUuid])) as
    | MembershipRow
    | undefined;
  return row && toMembership(row);
}

/** A membership with its group's name, for the lists that show both. */
export interface NamedMembership extends Membership {
  groupName: string;
}

/**
 * The clause that narrows memberships to one user, when one is given: written out or left out
 * (PostgreSQL cannot type a parameter that is only compared with NULL).
 */
const ofUser = (userUuid: string | undefined): string => (userUuid === undefined ? '' : ' AND m.user_uuid = @user');

/** Memberships of the users given (all when `userUuid` is undefined) in one organization's groups, by group name. */
export async function membershipsInOrg(sql: Sql, orgId: string, userUuid?: string): Promise<NamedMembership[]> {
  const rows = (await sql.all(`SELECT ${MEMBERSHIP_COLUMNS}, g.name AS group_name FROM group_members m JOIN groups g ON g.uuid = m.group_uuid
       WHERE g.org_id = @org${ofUser(userUuid)} ORDER BY g.name${nocase(sql)}, g.uuid`, userUuid === undefined ? { org: orgId } : { org: orgId, user: userUuid })) as Array<MembershipRow & { group_name: string }>;
  return rows.map((row) => ({ ...toMembership(row), groupName: row.group_name }));
}

/** A member with the user fields the member record shows. */
export interface MemberWithUser extends Membership {
  fullname: string;
  email: string;
  isActive: boolean;
}

export async function membersOf(sql: Sql, groupUuid: string, userUuid?: string): Promise<MemberWithUser[]> {
  const rows = (await sql.all(`SELECT ${MEMBERSHIP_COLUMNS}, u.fullname, u.email, u.is_active FROM group_members m JOIN users u ON u.uuid = m.user_uuid
       WHERE m.group_uuid = @group${ofUser(userUuid)} ORDER BY ${folded(sql, 'u.fullname')}, u.uuid`, userUuid === undefined ? { group: groupUuid } : { group: groupUuid, user: userUuid })) as Array<MembershipRow & { fullname: string; email: string; is_active: number }>;
  return rows.map((row) => ({ ...toMembership(row), fullname: row.fullname, email: row.email, isActive: row.is_active === 1 }));
}

/** Adds the membership, or replaces its permissions when it exists. */
export async function upsertMembership(sql: Sql, groupUuid: string, userUuid: string, p: Permissions, nowMs: number): Promise<void> {
  await sql.run(`INSERT INTO group_members (group_uuid, user_uuid, is_admin, node_permissions, tag_permissions, share_permissions, added)
     VALUES (?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(group_uuid, user_uuid) DO UPDATE SET is_admin = excluded.is_admin, node_permissions = excluded.node_permissions,
       tag_permissions = excluded.tag_permissions, share_permissions = excluded.share_permissions`, [groupUuid,
    userUuid,
    p.isAdmin ? 1 : 0,
    JSON.stringify(p.nodePermissions),
    JSON.stringify(p.tagPermissions),
    JSON.stringify(p.sharePermissions),
    nowMs]);
}

export async function deleteMembership(sql: Sql, groupUuid: string, userUuid: string): Promise<boolean> {
  return (await sql.run('DELETE FROM group_members WHERE group_uuid = ? AND user_uuid = ?', [groupUuid, userUuid])).changes > 0;
}

export interface TagRow {
  name: string;
  class: string;
  creator_uuid: string | null;
  created: number;
}

/** The group's tags by name; `limit` 0 means all of them. */
export async function tagsOf(sql: Sql, groupUuid: string, limit: number): Promise<TagRow[]> {
  const all = `SELECT name, class, creator_uuid, created FROM group_tags WHERE group_uuid = ? ORDER BY name${nocase(sql)}`;
  return (await (limit > 0 ? sql.all(`${all} LIMIT ?`, [groupUuid, limit]) : sql.all(all, [groupUuid]))) as TagRow[];
}

/** Inserts the tag; false when the group has one of that name (case-insensitive). */
export async function insertTag(sql: Sql, groupUuid: string, tag: { name: string; class: string; creatorUuid: string; nowMs: number }): Promise<boolean> {
  const result = await sql.run('INSERT INTO group_tags (group_uuid, name, class, creator_uuid, created) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [groupUuid, tag.name, tag.class, tag.creatorUuid, tag.nowMs]);
  return result.changes > 0;
}

// ---- organizations

/**
 * Organization rows (migration 008). An organization separates users and groups (ops/ decide
 * what that means for each endpoint); this module only keeps the rows and counts what is in one.
 */

export const DEFAULT_ORG = 'default';

export interface OrganizationRow {
  id: string;
  name: string;
  allow_unlimited_quota: number;
  /** Retention settings of its users and groups (migration 016); NULL: the global store.retention value. */
  keep_revisions: number | null;
  keep_revision_days: number | null;
  trash_days: number | null;
  created: number;
  updated: number;
}

/** An organization's own retention settings; `null` follows the global value, `undefined` leaves it as it is. */
export interface OrganizationRetention {
  keepRevisions?: number | null;
  keepRevisionDays?: number | null;
  trashDays?: number | null;
}

export async function getOrganization(sql: Sql, id: string): Promise<OrganizationRow | undefined> {
  return (await sql.get('SELECT * FROM organizations WHERE id = ?', [id])) as OrganizationRow | undefined;
}

export async function listOrganizations(sql: Sql): Promise<OrganizationRow[]> {
  return (await sql.all('SELECT * FROM organizations ORDER BY id')) as OrganizationRow[];
}

export async function insertOrganization(
  sql: Sql,
  org: { id: string; name: string; allowUnlimitedQuota: boolean; nowMs: number } & OrganizationRetention,
): Promise<void> {
  await sql.run(
    `INSERT INTO organizations (id, name, allow_unlimited_quota, keep_revisions, keep_revision_days, trash_days, created, updated)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    [org.id, org.name, org.allowUnlimitedQuota ? 1 : 0, org.keepRevisions ?? null, org.keepRevisionDays ?? null, org.trashDays ?? null, org.nowMs, org.nowMs],
  );
}

export async function updateOrganization(sql: Sql, id: string, patch: { name?: string; allowUnlimitedQuota?: boolean } & OrganizationRetention, nowMs: number): Promise<void> {
  await sql.run(`UPDATE organizations SET name = COALESCE(?, name), allow_unlimited_quota = COALESCE(?, allow_unlimited_quota), updated = ?
     WHERE id = ?`, [patch.name ?? null, patch.allowUnlimitedQuota === undefined ? null : patch.allowUnlimitedQuota ? 1 : 0, nowMs, id]);
  // Retention columns one by one: null is a value here (follow the global setting), not "unchanged".
  const columns = { keep_revisions: patch.keepRevisions, keep_revision_days: patch.keepRevisionDays, trash_days: patch.trashDays };
  for (const [column, value] of Object.entries(columns)) {
    if (value !== undefined) await sql.run(`UPDATE organizations SET ${column} = ? WHERE id = ?`, [value, id]);
  }
}

export async function deleteOrganization(sql: Sql, id: string): Promise<void> {
  await sql.run('DELETE FROM organizations WHERE id = ?', [id]);
}

export interface OrganizationCounts {
  users: number;
  groups: number;
  /** Users without a limit: disk_quota 0 (no quota) or -1 (unlimited by policy). */
  unlimitedUsers: number;
}

export async function countsOf(sql: Sql, id: string): Promise<OrganizationCounts> {
  return (await sql.get(`SELECT (SELECT COUNT(*) FROM users WHERE org_id = @id) AS users,
              (SELECT COUNT(*) FROM groups WHERE org_id = @id) AS groups,
              (SELECT COUNT(*) FROM users WHERE org_id = @id AND disk_quota <= 0) AS "unlimitedUsers"`, { id })) as OrganizationCounts;
}

// ---- webdrive

/**
 * WebDrive endpoint rows and the endpoint name rule (docs/api.md "WebDrive endpoint": 3 to 10
 * lowercase alphanumeric characters). One namespace for users and groups: a name names one
 * drive, whoever owns it. Who may read or set an owner's endpoint is decided in ops/; this
 * module only keeps the rule and the rows.
 */

/**
 * Names that would read as something else in a URL or a support conversation; refused for
 * everyone. *Reason: `/webdrive/admin/` or `/webdrive/api/` suggests an official drive.*
 */
export const RESERVED_ENDPOINTS: ReadonlySet<string> = new Set([
  'admin', 'administrator', 'api', 'auth', 'dav', 'driveway', 'groups', 'help', 'home', 'login', 'logout',
  'public', 'root', 'security', 'shared', 'support', 'system', 'upload', 'webdav', 'webdrive', 'www',
]);

/** What is wrong with a proposed endpoint name, or undefined when it is acceptable. */
export function endpointProblem(value: string): string | undefined {
  if (!/^[a-z0-9]{3,10}$/.test(value)) return 'endpoint must be 3 to 10 lowercase letters (a-z) and digits';
  if (RESERVED_ENDPOINTS.has(value)) return `endpoint "${value}" is reserved`;
  return undefined;
}

export interface EndpointRow {
  endpoint: string;
  owner_type: OwnerType;
  owner_uuid: string;
  show_url_to_group_members: number;
  created: number;
}

export async function endpointOf(sql: Sql, ownerUuid: string): Promise<EndpointRow | undefined> {
  return (await sql.get('SELECT * FROM webdrive_endpoints WHERE owner_uuid = ?', [ownerUuid])) as EndpointRow | undefined;
}

export async function endpointNamed(sql: Sql, endpoint: string): Promise<EndpointRow | undefined> {
  return (await sql.get('SELECT * FROM webdrive_endpoints WHERE endpoint = ?', [endpoint])) as EndpointRow | undefined;
}

/**
 * Gives `endpoint` to the owner, replacing (and so freeing) the owner's previous one. Returns
 * false, writing nothing, when another owner holds the name. Run inside the caller's transaction.
 */
export async function claimEndpoint(
  sql: Sql,
  claim: { endpoint: string; ownerType: OwnerType; ownerUuid: string; showUrlToGroupMembers: boolean; nowMs: number },
): Promise<boolean> {
  const holder = await endpointNamed(sql, claim.endpoint);
  if (holder && holder.owner_uuid !== claim.ownerUuid) return false;
  const previous = await endpointOf(sql, claim.ownerUuid);
  const created = previous?.endpoint === claim.endpoint ? previous.created : claim.nowMs;
  await sql.run('DELETE FROM webdrive_endpoints WHERE owner_uuid = ?', [claim.ownerUuid]);
  await sql.run('INSERT INTO webdrive_endpoints (endpoint, owner_type, owner_uuid, show_url_to_group_members, created) VALUES (?, ?, ?, ?, ?)', [claim.endpoint, claim.ownerType, claim.ownerUuid, claim.showUrlToGroupMembers ? 1 : 0, created]);
  return true;
}

/** Frees the owner's endpoint; returns whether there was one. */
export async function releaseEndpoint(sql: Sql, ownerUuid: string): Promise<boolean> {
  return (await sql.run('DELETE FROM webdrive_endpoints WHERE owner_uuid = ?', [ownerUuid])).changes > 0;
}
