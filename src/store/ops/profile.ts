/**
 * The current user's profile (docs/api.md "Current user": GET/PUT /api/user). PUT changes `fullname`,
 * `password` and `avatar` (ops/avatars.ts checks the bytes) and answers the updated profile. A new
 * password must follow the password rule (docs/api.md "Limits") and differ from the current one; it ends the user's other
 * sessions (the caller's stays) and deletes their app passwords, and it lifts an expired
 * password's restriction. Never exposes the password hash or the TOTP secret.
 */
import { z } from 'zod';
import { withSql } from '../context.js';
import type { StoreContext } from '../context.js';
import { deleteUserAppPasswords, updateUser, type UserRow } from '../storage/users.js';
import { invalid, unauthenticated } from '../envelope.js';
import { hashPassword, passwordProblem, verifyPassword } from '../passwords.js';
import type { UserProfileBody } from '../schemas/users.js';
import { revokeOtherSessions, sessionUser, type AuthenticatedUser } from '../sessions.js';
import { refuseAppPasswordSession } from './app-passwords.js';
import { avatarUrl, decodeAvatar, storeAvatar } from './avatars.js';
import { callerRow } from './caller.js';
import { parseInput, textLine } from './input.js';
import { passwordExpiresMs } from './password-age.js';

const updateSchema = z.strictObject({
  fullname: textLine(3, 255).optional(),
  password: z.string({ error: 'must be a string' }).max(1024, 'is too long').optional(),
  avatar: z.string({ error: 'must be a string: a base64 data URL, or "" for the default picture' }).optional(),
});

async function profileOf(ctx: StoreContext, user: UserRow): Promise<UserProfileBody> {
  const profile: UserProfileBody = {
    uuid: user.uuid,
    fullname: user.fullname,
    email: user.email,
    is_active: user.is_active === 1,
    is_admin: user.is_admin === 1,
    avatar: await avatarUrl(ctx, user.uuid),
    disk_quota: user.disk_quota,
    disk_used: user.disk_used,
    twofa: user.twofa === 1,
    created: user.created,
  };
  const expires = passwordExpiresMs(ctx.config, user.password_changed);
  if (expires !== undefined) profile.pass_expires = expires;
  return profile;
}

export async function getProfile(ctx: StoreContext, caller: AuthenticatedUser): Promise<UserProfileBody> {
  return profileOf(ctx, await callerRow(ctx, caller));
}

/** Applies the given fields in one transaction; 400 naming the field, 403 for a password change from an app password session. */
export async function updateProfile(ctx: StoreContext, caller: AuthenticatedUser, body: unknown): Promise<UserProfileBody> {
  const input = parseInput(updateSchema, body);
  const { storage: { sql }, clock, config } = ctx;
  let passwordHash: string | undefined;
  if (input.password !== undefined) {
    refuseAppPasswordSession(caller, 'change the password');
    const problem = passwordProblem(input.password);
    if (problem) throw invalid(problem, 'invalid_password');
  }
  const avatar = input.avatar === undefined ? undefined : decodeAvatar(input.avatar, config.store.avatarMaxBytes, 'avatar');
  if (input.password !== undefined) {
    // Re-setting the same password would lift an expiry without changing anything.
    if (await verifyPassword(input.password, (await callerRow(ctx, caller)).password_hash)) {
      throw invalid('password must differ from the current password', 'invalid_password');
    }
    passwordHash = await hashPassword(input.password, config.store.scryptCost);
  }

  const user = await sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    // The hashing awaited: the caller may have been logged out or deactivated meanwhile.
    if (!(await sessionUser(tx, clock.now(), caller.sessionId))) throw unauthenticated();
    const now = clock.now();
    if (input.fullname !== undefined || passwordHash !== undefined) {
      await updateUser(tx, caller.userUuid, { fullname: input.fullname, passwordHash }, now);
    }
    if (avatar !== undefined) await storeAvatar(tx, caller.userUuid, avatar, now);
    if (passwordHash !== undefined) {
      await revokeOtherSessions(tx, clock, caller.userUuid, caller.sessionId);
      await deleteUserAppPasswords(tx, caller.userUuid);
    }
    return callerRow(txCtx, caller);
  });
  return profileOf(ctx, user);
}
