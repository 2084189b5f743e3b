/**
 * A group's members and their permissions, through either door: `/api/groups/{uuid}/users`
 * (members read, group administrators change; access.ts resolveGroup) and
 * `/api/admin/groups/{uuid}/users` (administrators of the group's organization; admin-scope.ts).
 * A member must belong to the group's organization. One transaction per change.
 */
import { withSql, type StoreContext } from '../context.js';
import { mapInOrder } from '../in-order.js';
import { deleteMembership, membersOf, membershipOf, upsertMembership, type GroupRow } from '../storage/groups.js';
import { isUuid } from '../storage/nodes.js';
import { getUserByUuid, type UserRow } from '../storage/users.js';
import { conflict, notFound, StoreHttpError } from '../envelope.js';
import { resolveGroup } from '../access.js';
import { addMemberSchema, permissionFieldsSchema, type MemberRecord } from '../schemas/groups.js';
import type { AuthenticatedUser } from '../sessions.js';
import { administeredGroup, requireAdmin } from './admin-scope.js';
import { memberRecord, NEW_MEMBER, withPermissionFields } from './group-records.js';
import { parseInput } from './input.js';

/** Which endpoint family a call came through. */
export type GroupDoor = 'groups' | 'admin';

const memberNotFound = (): StoreHttpError => notFound('member not found');

/** The group a call may read (`change` false) or change, as its door decides. */
async function groupThrough(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, rawUuid: string, change: boolean): Promise<GroupRow> {
  if (door === 'admin') {
    requireAdmin(caller);
    return administeredGroup(ctx, caller, rawUuid);
  }
  return (await resolveGroup(ctx.storage.sql, caller, rawUuid, change ? 'admin' : 'member')).group;
}

/** A user of the group's organization named by `field`, or 404 naming the field. */
async function userInOrg(ctx: StoreContext, orgId: string, rawUuid: string, field: string): Promise<UserRow> {
  const user = isUuid(rawUuid) ? (await getUserByUuid(ctx.storage.sql, rawUuid.toLowerCase())) : undefined;
  if (!user || user.org_id !== orgId) throw notFound(`${field}: no such user in the group's organization`);
  return user;
}

async function recordOf(ctx: StoreContext, groupUuid: string, userUuid: string): Promise<MemberRecord> {
  const [member] = await membersOf(ctx.storage.sql, groupUuid, userUuid);
  if (!member) throw memberNotFound();
  return memberRecord(ctx, member);
}

function memberUuid(rawUuid: string): string {
  if (!isUuid(rawUuid)) throw memberNotFound();
  return rawUuid.toLowerCase();
}

export async function listMembers(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string): Promise<MemberRecord[]> {
  const group = await groupThrough(ctx, caller, door, groupUuid, false);
  return mapInOrder(await membersOf(ctx.storage.sql, group.uuid), (member) => memberRecord(ctx, member));
}

export async function getMember(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string, userUuid: string): Promise<MemberRecord> {
  const group = await groupThrough(ctx, caller, door, groupUuid, false);
  return recordOf(ctx, group.uuid, memberUuid(userUuid));
}

/** Adds `body.user` with `body.permissions` (fields left out: NEW_MEMBER's). 409 `already_member`. */
export async function addMember(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string, body: unknown): Promise<MemberRecord> {
  const group = await groupThrough(ctx, caller, door, groupUuid, true);
  const input = parseInput(addMemberSchema, body);
  const { storage: { sql }, clock } = ctx;
  const user = await userInOrg(ctx, group.org_id, input.user, 'user');
  await sql.transaction(async (tx) => {
    if (await membershipOf(tx, group.uuid, user.uuid)) throw conflict('user: already a member of the group', 'already_member');
    await upsertMembership(tx, group.uuid, user.uuid, withPermissionFields(NEW_MEMBER, input.permissions), clock.now());
  });
  return recordOf(ctx, group.uuid, user.uuid);
}

/** Replaces the permission fields given; the others stay. */
export async function updateMember(
  ctx: StoreContext,
  caller: AuthenticatedUser,
  door: GroupDoor,
  groupUuid: string,
  userUuid: string,
  body: unknown,
): Promise<MemberRecord> {
  const group = await groupThrough(ctx, caller, door, groupUuid, true);
  const fields = parseInput(permissionFieldsSchema, body);
  const { storage: { sql }, clock } = ctx;
  const uuid = memberUuid(userUuid);
  await sql.transaction(async (tx) => {
    const current = await membershipOf(tx, group.uuid, uuid);
    if (!current) throw memberNotFound();
    await upsertMembership(tx, group.uuid, uuid, withPermissionFields(current, fields), clock.now());
  });
  return recordOf(ctx, group.uuid, uuid);
}

export async function removeMember(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string, userUuid: string): Promise<void> {
  await ctx.storage.sql.transaction(async (tx) => {
    const group = await groupThrough(withSql(ctx, tx), caller, door, groupUuid, true);
    if (!(await deleteMembership(tx, group.uuid, memberUuid(userUuid)))) throw memberNotFound();
  });
}
