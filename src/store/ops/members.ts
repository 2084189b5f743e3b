/**
 * A group's members and their permissions, through either door: `/api/groups/{uuid}/users`
 * (members read, group administrators change; access.ts resolveGroup) and
 * `/api/admin/groups/{uuid}/users` (administrators of the group's organization; admin-scope.ts).
 * A member must belong to the group's organization. One transaction per change.
 */
import type { StoreContext } from '../context.js';
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
function groupThrough(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, rawUuid: string, change: boolean): GroupRow {
  if (door === 'admin') {
    requireAdmin(caller);
    return administeredGroup(ctx, caller, rawUuid);
  }
  return resolveGroup(ctx.db, caller, rawUuid, change ? 'admin' : 'member').group;
}

/** A user of the group's organization named by `field`, or 404 naming the field. */
function userInOrg(ctx: StoreContext, orgId: string, rawUuid: string, field: string): UserRow {
  const user = isUuid(rawUuid) ? getUserByUuid(ctx.db, rawUuid.toLowerCase()) : undefined;
  if (!user || user.org_id !== orgId) throw notFound(`${field}: no such user in the group's organization`);
  return user;
}

function recordOf(ctx: StoreContext, groupUuid: string, userUuid: string): MemberRecord {
  const [member] = membersOf(ctx.db, groupUuid, userUuid);
  if (!member) throw memberNotFound();
  return memberRecord(ctx, member);
}

function memberUuid(rawUuid: string): string {
  if (!isUuid(rawUuid)) throw memberNotFound();
  return rawUuid.toLowerCase();
}

export function listMembers(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string): MemberRecord[] {
  const group = groupThrough(ctx, caller, door, groupUuid, false);
  return membersOf(ctx.db, group.uuid).map((member) => memberRecord(ctx, member));
}

export function getMember(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string, userUuid: string): MemberRecord {
  const group = groupThrough(ctx, caller, door, groupUuid, false);
  return recordOf(ctx, group.uuid, memberUuid(userUuid));
}

/** Adds `body.user` with `body.permissions` (fields left out: NEW_MEMBER's). 409 `already_member`. */
export function addMember(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string, body: unknown): MemberRecord {
  const group = groupThrough(ctx, caller, door, groupUuid, true);
  const input = parseInput(addMemberSchema, body);
  const { db, clock } = ctx;
  const user = userInOrg(ctx, group.org_id, input.user, 'user');
  db.transaction(() => {
    if (membershipOf(db, group.uuid, user.uuid)) throw conflict('user: already a member of the group', 'already_member');
    upsertMembership(db, group.uuid, user.uuid, withPermissionFields(NEW_MEMBER, input.permissions), clock.now());
  })();
  return recordOf(ctx, group.uuid, user.uuid);
}

/** Replaces the permission fields given; the others stay. */
export function updateMember(
  ctx: StoreContext,
  caller: AuthenticatedUser,
  door: GroupDoor,
  groupUuid: string,
  userUuid: string,
  body: unknown,
): MemberRecord {
  const group = groupThrough(ctx, caller, door, groupUuid, true);
  const fields = parseInput(permissionFieldsSchema, body);
  const { db, clock } = ctx;
  const uuid = memberUuid(userUuid);
  db.transaction(() => {
    const current = membershipOf(db, group.uuid, uuid);
    if (!current) throw memberNotFound();
    upsertMembership(db, group.uuid, uuid, withPermissionFields(current, fields), clock.now());
  })();
  return recordOf(ctx, group.uuid, uuid);
}

export function removeMember(ctx: StoreContext, caller: AuthenticatedUser, door: GroupDoor, groupUuid: string, userUuid: string): void {
  const group = groupThrough(ctx, caller, door, groupUuid, true);
  if (!deleteMembership(ctx.db, group.uuid, memberUuid(userUuid))) throw memberNotFound();
}
