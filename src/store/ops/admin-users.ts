/**
 * The administrator's user endpoints (docs/api.md "Administrator endpoints"): list, create, details,
 * update, delete, and a user's groups. Scope as admin-scope.ts says. Rules that protect the
 * installation: the built-in admin keeps `is_active` and `is_admin`, only it may change itself,
 * and it cannot be deleted; nobody deletes their own account. Must not return or log passwords
 * or hashes.
 */
import { randomUUID } from 'node:crypto';
import { mapInOrder } from '../in-order.js';
import type { StoreContext } from '../context.js';
import { getGroup, membershipOf, membershipsInOrg, upsertMembership, type NamedMembership, getOrganization } from '../storage/groups.js';
import { createTopLevelFolders, isUuid } from '../storage/nodes.js';
import {
  deleteUserRow,
  getUserByUuid,
  insertUser,
  isEmailTaken,
  updateUser as updateUserRow,
  usersOfOrg,
  type UserPatch,
  type UserRow,
  deleteUserAppPasswords,
} from '../storage/users.js';
import { conflict, forbidden, invalid, notFound } from '../envelope.js';
import { hashPassword, passwordProblem } from '../passwords.js';
import type { AdminUserRecord } from '../schemas/admin.js';
import { assignGroupsSchema, type GroupEntry } from '../schemas/groups.js';
import { adminCreateUserBodySchema, adminUpdateUserBodySchema } from '../schemas/users.js';
import { revokeUserSessions, type AuthenticatedUser } from '../sessions.js';
import { administeredUser, requireAdmin, targetOrganization, userNotFound } from './admin-scope.js';
import { avatarUrl } from './avatars.js';
import { groupEntry, NEW_MEMBER, withPermissionFields } from './group-records.js';
import { parseInput } from './input.js';
import { deleteOwner, type TransferRecord } from './owner-deletion.js';

const emailTaken = () => conflict('email is already used by another user', 'email_taken');

function assertPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw invalid(problem, 'invalid_password');
}

/**
 * 0 (no quota) and -1 (unlimited by policy) both leave a user without a limit: only where the
 * user's organization allows unlimited quotas (docs/extensions.md "Organizations"); nothing below -1.
 */
async function assertUnlimitedAllowed(ctx: StoreContext, orgId: string, quota: number | undefined): Promise<void> {
  if (quota !== undefined && quota < -1) throw invalid('disk_quota must be -1, 0 or a positive number of bytes');
  if (quota === undefined || quota > 0) return;
  if ((await getOrganization(ctx.storage.sql, orgId))?.allow_unlimited_quota !== 1) {
    throw invalid(`disk_quota: ${quota} (unlimited) is not allowed in organization "${orgId}"; give a quota in bytes`);
  }
}

function entries(ctx: StoreContext, memberships: NamedMembership[]): Promise<GroupEntry[]> {
  return mapInOrder(memberships, (m) => groupEntry(ctx, { uuid: m.groupUuid, name: m.groupName }, m));
}

async function record(ctx: StoreContext, user: UserRow, groups: GroupEntry[]): Promise<AdminUserRecord> {
  return {
    uuid: user.uuid,
    fullname: user.fullname,
    email: user.email,
    org_id: user.org_id,
    is_active: user.is_active === 1,
    is_admin: user.is_admin === 1,
    disk_quota: user.disk_quota,
    disk_used: user.disk_used,
    twofa: user.twofa === 1,
    comment: user.comment,
    avatar: await avatarUrl(ctx, user.uuid),
    created: user.created,
    updated: user.updated,
    groups,
  };
}

/** Every user of the organization (`org_id`, else the caller's), each with their groups. */
export async function listUsers(ctx: StoreContext, caller: AuthenticatedUser, query: unknown): Promise<AdminUserRecord[]> {
  requireAdmin(caller);
  const org = await targetOrganization(ctx, caller, query);
  const byUser = new Map<string, NamedMembership[]>();
  for (const m of (await membershipsInOrg(ctx.storage.sql, org.id))) byUser.set(m.userUuid, [...(byUser.get(m.userUuid) ?? []), m]);
  return mapInOrder(await usersOfOrg(ctx.storage.sql, org.id), async (user) => record(ctx, user, await entries(ctx, byUser.get(user.uuid) ?? [])));
}

export async function getUser(ctx: StoreContext, caller: AuthenticatedUser, userUuid: string): Promise<AdminUserRecord> {
  requireAdmin(caller);
  const user = await administeredUser(ctx, caller, userUuid);
  return record(ctx, user, await entries(ctx, await membershipsInOrg(ctx.storage.sql, user.org_id, user.uuid)));
}

/** Creates the user and its seven top-level folders in one transaction; answers its UUID. */
export async function createUser(ctx: StoreContext, caller: AuthenticatedUser, query: unknown, body: unknown): Promise<{ uuid: string }> {
  requireAdmin(caller);
  const org = await targetOrganization(ctx, caller, query);
  const input = parseInput(adminCreateUserBodySchema, body);
  assertPassword(input.password);
  await assertUnlimitedAllowed(ctx, org.id, input.disk_quota);
  const { storage: { sql }, clock, config } = ctx;
  // Checked before hashing (cheap refusal) and again in the transaction (the hash awaited).
  if (await isEmailTaken(sql, input.email)) throw emailTaken();
  const passwordHash = await hashPassword(input.password, config.store.scryptCost);
  const uuid = randomUUID();
  const now = clock.now();
  await sql.transaction(async (tx) => {
    if (await isEmailTaken(tx, input.email)) throw emailTaken();
    await insertUser(tx, {
      uuid,
      email: input.email,
      fullname: input.fullname,
      passwordHash,
      isActive: input.is_active,
      isAdmin: input.is_admin,
      orgId: org.id,
      diskQuotaBytes: input.disk_quota,
      comment: input.comment ?? '',
      nowMs: now,
    });
    await createTopLevelFolders(tx, 'User', uuid, now);
  });
  return { uuid };
}

/**
 * Changes the fields given. `disk_quota` must be 0, -1 where the organization allows it, or
 * exceed what the user stores. `is_active: false` and a new password end every session of the
 * user (the bridge's next call is 401); `twofa: false` disables two-factor authentication.
 */
export async function updateUser(ctx: StoreContext, caller: AuthenticatedUser, userUuid: string, body: unknown): Promise<void> {
  requireAdmin(caller);
  const target = await administeredUser(ctx, caller, userUuid);
  const input = parseInput(adminUpdateUserBodySchema, body);
  if (target.is_builtin === 1) {
    if (!caller.isBuiltin) throw forbidden('only the built-in admin may change the built-in admin');
    if (input.is_active === false || input.is_admin === false) {
      throw forbidden('the built-in admin cannot be deactivated or lose administrator privileges');
    }
  }
  if (input.twofa === true) throw invalid('twofa can only be disabled here; users enable it themselves');
  // An administrator's own second factor is theirs as a user's: POST /api/user/2fa asks for the
  // password again (ops/reauth.ts), which this route would skip for a session left open.
  if (input.twofa === false && target.uuid === caller.userUuid && target.twofa === 1) {
    throw forbidden('turn your own two-factor authentication off with POST /api/user/2fa {twofa: false}, which asks for your password again');
  }
  if (input.password !== undefined) assertPassword(input.password);
  await assertUnlimitedAllowed(ctx, target.org_id, input.disk_quota);
  const { storage: { sql }, clock, config } = ctx;
  if (input.email !== undefined && (await isEmailTaken(sql, input.email, target.uuid))) throw emailTaken();
  const passwordHash = input.password === undefined ? undefined : await hashPassword(input.password, config.store.scryptCost);

  const patch: UserPatch = {
    fullname: input.fullname,
    email: input.email,
    passwordHash,
    diskQuotaBytes: input.disk_quota,
    isActive: input.is_active,
    isAdmin: input.is_admin,
    disableTwofa: input.twofa === false,
    comment: input.comment,
  };
  await sql.transaction(async (tx) => {
    // Re-read inside the transaction: usage may have grown while the password was hashed.
    const current = await getUserByUuid(tx, target.uuid);
    if (!current) throw userNotFound();
    const quota = input.disk_quota;
    if (quota !== undefined && quota > 0 && quota <= current.disk_used) {
      throw invalid(`disk_quota must exceed current usage (${current.disk_used} bytes) unless it is 0`);
    }
    if (input.email !== undefined && (await isEmailTaken(tx, input.email, target.uuid))) throw emailTaken();
    await updateUserRow(tx, target.uuid, patch, clock.now());
    // A deactivated user or a reset password ends every session of that user at once; a reset
    // also deletes the app passwords (one made by whoever knew the old password must not last).
    if (input.is_active === false || passwordHash !== undefined) await revokeUserSessions(tx, clock, target.uuid);
    if (passwordHash !== undefined) await deleteUserAppPasswords(tx, target.uuid);
  });
}

/** Deletes the user (ops/owner-deletion.ts says what goes with them). */
export async function deleteUser(ctx: StoreContext, caller: AuthenticatedUser, userUuid: string, query: unknown): Promise<TransferRecord | undefined> {
  requireAdmin(caller);
  const target = await administeredUser(ctx, caller, userUuid);
  if (target.is_builtin === 1) throw forbidden('the built-in admin cannot be deleted');
  if (target.uuid === caller.userUuid) throw forbidden('administrators cannot delete their own account');
  return deleteOwner(ctx, { type: 'User', uuid: target.uuid, name: target.fullname, orgId: target.org_id }, query, (sql) =>
    deleteUserRow(sql, target.uuid),
  );
}

/** The user's groups, as Group entries of docs/api.md (`is_admin`: the user administers the group). */
export async function userGroups(ctx: StoreContext, caller: AuthenticatedUser, userUuid: string): Promise<GroupEntry[]> {
  requireAdmin(caller);
  const user = await administeredUser(ctx, caller, userUuid);
  return entries(ctx, await membershipsInOrg(ctx.storage.sql, user.org_id, user.uuid));
}

/**
 * Adds the user to every group of `groups` (keyed by group UUID), or updates the permissions
 * of an existing membership with the fields given; groups left out are unchanged. All or
 * nothing: one unknown group (404 naming it) changes nothing. Answers the user's groups.
 */
export async function assignUserGroups(ctx: StoreContext, caller: AuthenticatedUser, userUuid: string, body: unknown): Promise<GroupEntry[]> {
  requireAdmin(caller);
  const user = await administeredUser(ctx, caller, userUuid);
  const input = parseInput(assignGroupsSchema, body);
  const { storage: { sql }, clock } = ctx;
  await sql.transaction(async (tx) => {
    for (const [rawUuid, fields] of Object.entries(input.groups)) {
      const group = isUuid(rawUuid) ? (await getGroup(tx, rawUuid.toLowerCase())) : undefined;
      if (!group || group.org_id !== user.org_id) throw notFound(`groups.${rawUuid}: no such group in the user's organization`);
      const current = (await membershipOf(tx, group.uuid, user.uuid)) ?? NEW_MEMBER;
      await upsertMembership(tx, group.uuid, user.uuid, withPermissionFields(current, fields), clock.now());
    }
  });
  return entries(ctx, await membershipsInOrg(sql, user.org_id, user.uuid));
}
