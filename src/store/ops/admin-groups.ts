/**
 * The administrator's group endpoints (SPEC "Administrator endpoints"): list, create, details,
 * update and delete; the members are ops/members.ts's (door `admin`). Scope as admin-scope.ts
 * says. A new group gets its seven top-level folders in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import type { StoreContext } from '../context.js';
import type { Db } from '../storage/dialects/sqlite-open.js';
import { deleteGroupRow, getGroup as getGroupRow, groupsOfOrg, insertGroup, isGroupNameTaken, updateGroup, type GroupPatch, type GroupRow } from '../storage/groups.js';
import { createTopLevelFolders } from '../storage/nodes.js';
import { conflict, invalid } from '../envelope.js';
import { groupNotFound } from '../access.js';
import { adminCreateGroupSchema, adminUpdateGroupSchema, type AdminGroupRecord } from '../schemas/groups.js';
import type { AuthenticatedUser } from '../sessions.js';
import { administeredGroup, requireAdmin, targetOrganization } from './admin-scope.js';
import { adminGroupRecord } from './group-records.js';
import { parseInput } from './input.js';
import { deleteOwner, type TransferRecord } from './owner-deletion.js';

const nameTaken = () => conflict('name: the organization has a group of this name', 'group_name_taken');

/**
 * Applies `patch` to the group inside the caller's transaction, after the rules that need the
 * database: a name unique in the organization (409 `group_name_taken`, case-insensitive), and a
 * `disk_quota` of 0 or above the group's current usage (400). An empty patch changes nothing,
 * not even `updated`. Returns the row as stored.
 */
export function saveGroupChanges(db: Db, group: GroupRow, patch: GroupPatch, nowMs: number): GroupRow {
  const current = getGroupRow(db, group.uuid);
  if (!current) throw groupNotFound();
  if (patch.name !== undefined && isGroupNameTaken(db, current.org_id, patch.name, current.uuid)) throw nameTaken();
  const quota = patch.diskQuotaBytes;
  if (quota !== undefined && quota !== 0 && quota <= current.disk_used) {
    throw invalid(`disk_quota must exceed current usage (${current.disk_used} bytes) unless it is 0`);
  }
  if (Object.values(patch).some((value) => value !== undefined)) updateGroup(db, group.uuid, patch, nowMs);
  return getGroupRow(db, group.uuid) as GroupRow;
}

export function listGroups(ctx: StoreContext, caller: AuthenticatedUser, query: unknown): AdminGroupRecord[] {
  requireAdmin(caller);
  const org = targetOrganization(ctx, caller, query);
  return groupsOfOrg(ctx.db, org.id).map((group) => adminGroupRecord(ctx, group));
}

export function createGroup(ctx: StoreContext, caller: AuthenticatedUser, query: unknown, body: unknown): AdminGroupRecord {
  requireAdmin(caller);
  const org = targetOrganization(ctx, caller, query);
  const input = parseInput(adminCreateGroupSchema, body);
  const { db, clock } = ctx;
  const uuid = randomUUID();
  const now = clock.now();
  db.transaction(() => {
    if (isGroupNameTaken(db, org.id, input.name)) throw nameTaken();
    insertGroup(db, { uuid, orgId: org.id, name: input.name, description: input.description ?? '', diskQuotaBytes: input.disk_quota, nowMs: now });
    createTopLevelFolders(db, 'Group', uuid, now);
  })();
  return adminGroupRecord(ctx, getGroupRow(db, uuid) as GroupRow);
}

export function getGroup(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string): AdminGroupRecord {
  requireAdmin(caller);
  return adminGroupRecord(ctx, administeredGroup(ctx, caller, groupUuid));
}

export function updateAdminGroup(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, body: unknown): AdminGroupRecord {
  requireAdmin(caller);
  const group = administeredGroup(ctx, caller, groupUuid);
  const input = parseInput(adminUpdateGroupSchema, body);
  const { db, clock } = ctx;
  const patch: GroupPatch = { name: input.name, description: input.description, diskQuotaBytes: input.disk_quota };
  const saved = db.transaction(() => saveGroupChanges(db, group, patch, clock.now()))();
  return adminGroupRecord(ctx, saved);
}

/** Deletes the group (ops/owner-deletion.ts says what goes with it). */
export async function deleteGroup(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, query: unknown): Promise<TransferRecord | undefined> {
  requireAdmin(caller);
  const group = administeredGroup(ctx, caller, groupUuid);
  return deleteOwner(ctx, { type: 'Group', uuid: group.uuid, name: group.name, orgId: group.org_id }, query, (db) => deleteGroupRow(db, group.uuid));
}
