/**
 * Administrator endpoints (edition 3.0 only). This issue: POST /api/admin/users and
 * PUT /api/admin/users/{user_uuid}. Every handler first requires `is_admin` (403 otherwise).
 * The built-in admin acts on any organization (`org_id`); other administrators only inside
 * their own, and a user of another organization is unknown to them (404). Rules that protect
 * the installation: the built-in admin keeps `is_active` and `is_admin`, and only it may
 * change itself. Sessions opened with an app password are refused (403). Must not return or log
 * passwords or hashes.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../app.js';
import type { StoreContext } from '../context.js';
import { deleteUserAppPasswords } from '../db/app-passwords.js';
import { createTopLevelFolders, isUuid } from '../db/nodes.js';
import { getUserByUuid, insertUser, isEmailTaken, updateUser, type UserPatch, type UserRow } from '../db/users.js';
import { conflict, forbidden, invalid, StoreHttpError, success } from '../envelope.js';
import { refuseAppPasswordSession } from '../ops/app-passwords.js';
import { hashPassword, passwordProblem } from '../passwords.js';
import {
  adminCreateUserBodySchema,
  adminUpdateUserBodySchema,
  firstIssue,
  orgQuerySchema,
  userUuidParamsSchema,
} from '../schemas/users.js';
import { revokeUserSessions, type AuthenticatedUser } from '../sessions.js';

const userNotFound = (): StoreHttpError => new StoreHttpError(404, 'not_found', 'user not found');
const emailTaken = (): StoreHttpError => conflict('email is already used by another user', 'email_taken');

function requireAdmin(caller: AuthenticatedUser): void {
  if (!caller.isAdmin) throw forbidden('administrator privileges required');
  // An administrator's app password must not reach what could make new accounts or reset this one.
  refuseAppPasswordSession(caller, 'use administrator endpoints');
}

/** A user the caller may administer, or 404: unknown and other-organization look the same. */
function administeredUser(ctx: StoreContext, caller: AuthenticatedUser, rawUuid: string): UserRow {
  if (!isUuid(rawUuid)) throw userNotFound();
  const user = getUserByUuid(ctx.db, rawUuid.toLowerCase());
  if (!user) throw userNotFound();
  if (!caller.isBuiltin && user.org_id !== caller.orgId) throw userNotFound();
  return user;
}

export async function adminRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const { db, clock, config } = ctx;

  app.post('/api/admin/users', async (request) => {
    const caller = callerOf(request);
    requireAdmin(caller);
    const query = orgQuerySchema.safeParse(request.query);
    if (!query.success) throw invalid(firstIssue(query.error));
    const orgId = query.data.org_id ?? caller.orgId;
    if (!caller.isBuiltin && orgId !== caller.orgId) {
      throw forbidden('only the built-in admin may act on another organization');
    }
    const parsed = adminCreateUserBodySchema.safeParse(request.body);
    if (!parsed.success) throw invalid(firstIssue(parsed.error));
    const body = parsed.data;
    const problem = passwordProblem(body.password);
    if (problem) throw invalid(problem, 'invalid_password');
    // Checked before hashing (cheap refusal) and again in the transaction (the hash awaited).
    if (isEmailTaken(db, body.email)) throw emailTaken();

    const passwordHash = await hashPassword(body.password, config.store.scryptCost);
    const uuid = randomUUID();
    const now = clock.now();
    db.transaction(() => {
      if (isEmailTaken(db, body.email)) throw emailTaken();
      insertUser(db, {
        uuid,
        email: body.email,
        fullname: body.fullname,
        passwordHash,
        isActive: body.is_active,
        isAdmin: body.is_admin,
        orgId,
        diskQuotaBytes: body.disk_quota,
        comment: body.comment ?? '',
        nowMs: now,
      });
      createTopLevelFolders(db, 'User', uuid, now);
    })();
    return success('user created', { uuid });
  });

  app.put('/api/admin/users/:user_uuid', async (request) => {
    const caller = callerOf(request);
    requireAdmin(caller);
    const params = userUuidParamsSchema.safeParse(request.params);
    if (!params.success) throw userNotFound();
    const target = administeredUser(ctx, caller, params.data.user_uuid);
    const parsed = adminUpdateUserBodySchema.safeParse(request.body ?? {});
    if (!parsed.success) throw invalid(firstIssue(parsed.error));
    const body = parsed.data;

    if (target.is_builtin === 1) {
      if (!caller.isBuiltin) throw forbidden('only the built-in admin may change the built-in admin');
      if (body.is_active === false || body.is_admin === false) {
        throw forbidden('the built-in admin cannot be deactivated or lose administrator privileges');
      }
    }
    if (body.twofa === true) throw invalid('twofa can only be disabled here; users enable it themselves');
    if (body.password !== undefined) {
      const problem = passwordProblem(body.password);
      if (problem) throw invalid(problem, 'invalid_password');
    }
    if (body.email !== undefined && isEmailTaken(db, body.email, target.uuid)) throw emailTaken();
    const passwordHash = body.password === undefined ? undefined : await hashPassword(body.password, config.store.scryptCost);

    const patch: UserPatch = {
      fullname: body.fullname,
      email: body.email,
      passwordHash,
      diskQuotaBytes: body.disk_quota,
      isActive: body.is_active,
      isAdmin: body.is_admin,
      disableTwofa: body.twofa === false,
      comment: body.comment,
    };
    db.transaction(() => {
      // Re-read inside the transaction: usage may have grown while the password was hashed.
      const current = getUserByUuid(db, target.uuid);
      if (!current) throw userNotFound();
      if (body.disk_quota !== undefined && body.disk_quota !== 0 && body.disk_quota <= current.disk_used) {
        throw invalid(`disk_quota must exceed current usage (${current.disk_used} bytes) unless it is 0`);
      }
      if (body.email !== undefined && isEmailTaken(db, body.email, target.uuid)) throw emailTaken();
      updateUser(db, target.uuid, patch, clock.now());
      // A deactivated user or a reset password ends every session of that user at once; a reset
      // also deletes the app passwords (one made by whoever knew the old password must not last).
      if (body.is_active === false || passwordHash !== undefined) revokeUserSessions(db, clock, target.uuid);
      if (passwordHash !== undefined) deleteUserAppPasswords(db, target.uuid);
    })();
    return success('user updated');
  });
}
