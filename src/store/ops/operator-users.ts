/**
 * What the machine's operator does to accounts from the command line (src/cli/user.ts): list,
 * create, reset a password, disable and enable. There is no caller and no session: whoever may
 * run `driveway` on the data directory or with the database's URL is trusted as the built-in
 * admin is. The rules that protect an installation still hold (the built-in admin stays active;
 * passwords follow passwords.ts), and each change is one transaction with the session
 * revocations it implies, exactly as the admin endpoints (ops/admin-users.ts) do, so a running
 * server, which reads users and sessions on every request, sees it at once.
 *
 * Two-factor authentication is never removed as a side effect: a reset keeps it unless asked
 * (`disableTwofa`), since the password alone is what was lost in the usual case.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../common/clock.js';
import { getOrganization } from '../storage/groups.js';
import { createTopLevelFolders, isUuid } from '../storage/nodes.js';
import type { Sql } from '../storage/sql.js';
import { countLiveSessions, revokeSessions } from '../storage/sessions.js';
import { countAppPasswords, deleteUserAppPasswords, getUserByUsername, getUserByUuid, insertUser, isEmailTaken, updateUser, type UserRow } from '../storage/users.js';
import { hashPassword, passwordProblem } from '../passwords.js';

/** A refusal the operator can act on (unknown user, a taken email, a weak password): the message says what. */
export class OperatorRefusal extends Error {
  override name = 'OperatorRefusal';
}

export interface OperatorEnv {
  sql: Sql;
  clock: Clock;
  scryptCost: number;
}

/** The user named by login name (`admin`, or an email) or by UUID. */
export async function findUser(sql: Sql, name: string): Promise<UserRow> {
  const user = (await getUserByUsername(sql, name)) ?? (isUuid(name) ? await getUserByUuid(sql, name.toLowerCase()) : undefined);
  if (!user) throw new OperatorRefusal(`no user ${JSON.stringify(name)} (give the login name: admin, or the user's email; \`driveway user list\` shows them)`);
  return user;
}

function assertPassword(password: string): void {
  const problem = passwordProblem(password);
  if (problem) throw new OperatorRefusal(problem);
}

export interface NewAccount {
  fullname: string;
  email: string;
  password: string;
  isAdmin: boolean;
  orgId: string;
}

/** Creates an active user (quota 0: the organization's default) with its top-level folders; answers its UUID. */
export async function createAccount(env: OperatorEnv, account: NewAccount): Promise<string> {
  assertPassword(account.password);
  if (!/^[^\s@]+@[^\s@]+$/.test(account.email)) throw new OperatorRefusal(`--email must be an email address, not ${JSON.stringify(account.email)}`);
  if (account.fullname.trim() === '') throw new OperatorRefusal('the name must not be empty');
  const passwordHash = await hashPassword(account.password, env.scryptCost);
  const uuid = randomUUID();
  const now = env.clock.now();
  await env.sql.transaction(async (tx) => {
    if (!(await getOrganization(tx, account.orgId))) throw new OperatorRefusal(`no organization ${JSON.stringify(account.orgId)}`);
    if (await isEmailTaken(tx, account.email)) throw new OperatorRefusal(`the email ${account.email} is already used by another user`);
    await insertUser(tx, {
      uuid,
      email: account.email,
      fullname: account.fullname,
      passwordHash,
      isActive: true,
      isAdmin: account.isAdmin,
      orgId: account.orgId,
      diskQuotaBytes: 0,
      comment: '',
      nowMs: now,
    });
    await createTopLevelFolders(tx, 'User', uuid, now);
  });
  return uuid;
}

export interface PasswordReset {
  /** Sessions that were live and are now ended. */
  sessionsEnded: number;
  /** App passwords deleted (one made by whoever knew the old password must not last). */
  appPasswordsDeleted: number;
  /** Whether 2FA is still required at login after the reset. */
  twofaKept: boolean;
}

/**
 * Sets a new password, ends every session of the user and deletes their app passwords, in one
 * transaction (as PATCH /api/admin/users does). 2FA stays on unless `disableTwofa`.
 */
export async function resetPassword(env: OperatorEnv, name: string, password: string, options: { disableTwofa: boolean }): Promise<PasswordReset> {
  assertPassword(password);
  const passwordHash = await hashPassword(password, env.scryptCost);
  return env.sql.transaction(async (tx) => {
    const user = await findUser(tx, name);
    const now = env.clock.now();
    const live = await countLiveSessions(tx, user.uuid, now);
    const apps = await countAppPasswords(tx, user.uuid);
    await updateUser(tx, user.uuid, { passwordHash, disableTwofa: options.disableTwofa }, now);
    await revokeSessions(tx, now, { userUuid: user.uuid });
    await deleteUserAppPasswords(tx, user.uuid);
    return { sessionsEnded: live, appPasswordsDeleted: apps, twofaKept: user.twofa === 1 && !options.disableTwofa };
  });
}

/**
 * Disables (every session ends at once; login is refused) or enables a user. The built-in
 * admin cannot be disabled: it is the way back in.
 */
export async function setAccountActive(env: OperatorEnv, name: string, active: boolean): Promise<{ user: UserRow; changed: boolean; sessionsEnded: number }> {
  return env.sql.transaction(async (tx) => {
    const user = await findUser(tx, name);
    if (!active && user.is_builtin === 1) throw new OperatorRefusal('the built-in admin cannot be disabled');
    const now = env.clock.now();
    const changed = (user.is_active === 1) !== active;
    if (changed) await updateUser(tx, user.uuid, { isActive: active }, now);
    const live = active ? 0 : await countLiveSessions(tx, user.uuid, now);
    if (!active) await revokeSessions(tx, now, { userUuid: user.uuid });
    return { user, changed, sessionsEnded: live };
  });
}
