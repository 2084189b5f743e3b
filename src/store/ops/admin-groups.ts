/**
 * The administrator's group endpoints (docs/api.md "Administrator endpoints"): list, create, details,
 * update and delete; the members are ops/members.ts's (door `admin`). Scope as admin-scope.ts
 * says. A new group gets its seven top-level folders in the same transaction.
 */
import { randomUUID } from 'node:crypto';
import { mapInOrder } from '../in-order.js';
import type { StoreContext } from '../context.js';
import type { Sql } from '../storage/sql.js';
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
export async function saveGroupChanges(sql: Sql, group: GroupRow, patch: GroupPatch, nowMs: number): Promise<GroupRow> {
  const current = await getGroupRow(sql, group.uuid);
  if (!current) throw groupNotFound();
  if (patch.name !== undefined && (await isGroupNameTaken(sql, current.org_id, patch.name, current.uuid))) throw nameTaken();
  const quota = patch.diskQuotaBytes;
  if (quota !== undefined && quota !== 0 && quota <= current.disk_used) {
    throw invalid(`disk_quota must exceed current usage (${current.disk_used} bytes) unless it is 0`);
  }
  if (Object.values(patch).some((value) => value !== undefined)) await updateGroup(sql, group.uuid, patch, nowMs);
  return (await getGroupRow(sql, group.uuid)) as GroupRow;
}

export async function listGroups(ctx: StoreContext, caller: AuthenticatedUser, query: unknown): Promise<AdminGroupRecord[]> {
  requireAdmin(caller);
  const org = await targetOrganization(ctx, caller, query);
  return mapInOrder(await groupsOfOrg(ctx.storage.sql, org.id), (group) => adminGroupRecord(ctx, group));
}

export async function createGroup(ctx: StoreContext, caller: AuthenticatedUser, query: unknown, body: unknown): Promise<AdminGroupRecord> {
  requireAdmin(caller);
  const org = await targetOrganization(ctx, caller, query);
  const input = parseInput(adminCreateGroupSchema, body);
  const { storage: { sql }, clock } = ctx;
  const uuid = randomUUID();
  const now = clock.now();
  await sql.transaction(async (tx) => {
    if (await isGroupNameTaken(tx, org.id, input.name)) throw nameTaken();
    await insertGroup(tx, { uuid, orgId: org.id, name: input.name, description: input.description ?? '', diskQuotaBytes: input.disk_quota, nowMs: now });
    await createTopLevelFolders(tx, 'Group', uuid, now);
  });
  return adminGroupRecord(ctx, (await getGroupRow(sql, uuid)) as GroupRow);
}

export async function getGroup(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string): Promise<AdminGroupRecord> {
  requireAdmin(caller);
  return adminGroupRecord(ctx, await administeredGroup(ctx, caller, groupUuid));
}

export async function updateAdminGroup(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, body: unknown): Promise<AdminGroupRecord> {
  requireAdmin(caller);
  const group = await administeredGroup(ctx, caller, groupUuid);
  const input = parseInput(adminUpdateGroupSchema, body);
  const { storage: { sql }, clock } = ctx;
  const patch: GroupPatch = { name: input.name, description: input.description, diskQuotaBytes: input.disk_quota };
  const saved = await sql.transaction(async (tx) => saveGroupChanges(tx, group, patch, clock.now()));
  return adminGroupRecord(ctx, saved);
}

/** Deletes the group (ops/owner-deletion.ts says what goes with it). */
export async function deleteGroup(ctx: StoreContext, caller: AuthenticatedUser, groupUuid: string, query: unknown): Promise<TransferRecord | undefined> {
  requireAdmin(caller);
  const group = await administeredGroup(ctx, caller, groupUuid);
  return deleteOwner(ctx, { type: 'Group', uuid: group.uuid, name: group.name, orgId: group.org_id }, query, (sql) => deleteGroupRow(sql, group.uuid));
}
