/**
 * User rows: the SQL for users, their 2FA state and notification settings. It does not hash
 * passwords, check rules or revoke sessions (ops/ and sessions.ts do), and it never sees a plain
 * password. Callers run multi-row writes inside their own `sql.transaction`.
 */
import type { Sql } from './sql.js';
import { folded, nocase } from './portable.js';

export interface UserRow {
  uuid: string;
  username: string;
  email: string;
  fullname: string;
  password_hash: string;
  is_active: number;
  is_admin: number;
  is_builtin: number;
  org_id: string;
  disk_quota: number;
  disk_used: number;
  twofa: number;
  /** Base32 TOTP secret while 2FA is on. */
  twofa_secret: string | null;
  /** RFC 6238 time step of the last accepted code (replay guard). */
  twofa_last_step: number | null;
  comment: string;
  created: number;
  updated: number;
  password_changed: number;
  /** JSON object of the notification settings the user changed. */
  notifications: string;
}

export async function getUserByUuid(sql: Sql, uuid: string): Promise<UserRow | undefined> {
  return (await sql.get('SELECT * FROM users WHERE uuid = ?', [uuid])) as UserRow | undefined;
}

/** `username` is compared case-insensitively (the column is COLLATE NOCASE). */
export async function getUserByUsername(sql: Sql, username: string): Promise<UserRow | undefined> {
  return (await sql.get('SELECT * FROM users WHERE username = ?', [username])) as UserRow | undefined;
}

/**
 * True when another user already has this email (case-insensitive), either as email or as
 * login name; `exceptUuid` leaves out the user being updated.
 */
export async function isEmailTaken(sql: Sql, email: string, exceptUuid?: string): Promise<boolean> {
  const except = exceptUuid === undefined ? '' : ' AND uuid <> ?';
  const row = await sql.get(`SELECT 1 FROM users WHERE (${folded(sql, 'email')} = ${sql.dialect === 'sqlite' ? '?' : 'LOWER(?)'} OR username = ?${nocase(sql)})${except} LIMIT 1`, [
    email,
    email,
    ...(exceptUuid === undefined ? [] : [exceptUuid]),
  ]);
  return row !== undefined;
}

export interface NewUser {
  uuid: string;
  email: string;
  fullname: string;
  passwordHash: string;
  isActive: boolean;
  isAdmin: boolean;
  orgId: string;
  diskQuotaBytes: number;
  comment: string;
  nowMs: number;
}

/** Inserts a (non built-in) user whose login name is their email. */
export async function insertUser(sql: Sql, user: NewUser): Promise<void> {
  (await sql.run(`INSERT INTO users (uuid, username, email, fullname, password_hash, is_active, is_admin, is_builtin, org_id,
                        disk_quota, comment, created, updated, password_changed)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`, [user.uuid,
    user.email,
    user.email,
    user.fullname,
    user.passwordHash,
    user.isActive ? 1 : 0,
    user.isAdmin ? 1 : 0,
    user.orgId,
    user.diskQuotaBytes,
    user.comment,
    user.nowMs,
    user.nowMs,
    user.nowMs]));
}

export interface UserPatch {
  fullname?: string;
  email?: string;
  passwordHash?: string;
  diskQuotaBytes?: number;
  isActive?: boolean;
  isAdmin?: boolean;
  /** Only disabling is possible here: it also forgets the TOTP secret and the replay guard. */
  disableTwofa?: boolean;
  comment?: string;
}

/**
 * Applies the given fields and bumps `updated`. A new email also becomes the login name,
 * except for the built-in admin, whose login name stays `admin`.
 */
export async function updateUser(sql: Sql, uuid: string, patch: UserPatch, nowMs: number): Promise<void> {
  const sets: string[] = [];
  const values: Array<string | number | null> = [];
  const set = (column: string, value: string | number | null): void => {
    sets.push(`${column} = ?`);
    values.push(value);
  };
  if (patch.fullname !== undefined) set('fullname', patch.fullname);
  if (patch.email !== undefined) {
    set('email', patch.email);
    sets.push('username = CASE WHEN is_builtin = 1 THEN username ELSE ? END');
    values.push(patch.email);
  }
  if (patch.passwordHash !== undefined) {
    set('password_hash', patch.passwordHash);
    set('password_changed', nowMs);
  }
  if (patch.diskQuotaBytes !== undefined) set('disk_quota', patch.diskQuotaBytes);
  if (patch.isActive !== undefined) set('is_active', patch.isActive ? 1 : 0);
  if (patch.isAdmin !== undefined) set('is_admin', patch.isAdmin ? 1 : 0);
  if (patch.disableTwofa) {
    set('twofa', 0);
    set('twofa_secret', null);
    set('twofa_last_step', null);
  }
  if (patch.comment !== undefined) set('comment', patch.comment);
  set('updated', nowMs);
  (await sql.run(`UPDATE users SET ${sets.join(', ')} WHERE uuid = ?`, [...values, uuid]));
}

/** Turns 2FA on with a new secret (the replay guard starts over), or off forgetting both. */
export async function setTwofa(sql: Sql, uuid: string, secret: string | null, nowMs: number): Promise<void> {
  (await sql.run('UPDATE users SET twofa = ?, twofa_secret = ?, twofa_last_step = NULL, updated = ? WHERE uuid = ?', [secret === null ? 0 : 1, secret, nowMs, uuid]));
}

/** Remembers the time step of an accepted TOTP code. */
export async function setTwofaLastStep(sql: Sql, uuid: string, step: number): Promise<void> {
  (await sql.run('UPDATE users SET twofa_last_step = ? WHERE uuid = ?', [step, uuid]));
}

/** The user's stored notification settings (JSON); undefined for no such user. */
export async function notificationsOf(sql: Sql, uuid: string): Promise<string | undefined> {
  return (await sql.get<{ notifications: string }>('SELECT notifications FROM users WHERE uuid = ?', [uuid]))?.notifications;
}

/** True once the built-in admin exists. */
export async function hasBuiltinAdmin(sql: Sql): Promise<boolean> {
  return (await sql.get('SELECT 1 FROM users WHERE is_builtin = 1')) !== undefined;
}

/** Inserts the built-in `admin` (no top-level folders: the caller makes them in the same transaction). */
export async function insertBuiltinAdmin(sql: Sql, uuid: string, passwordHash: string, nowMs: number): Promise<void> {
  await sql.run(
    `INSERT INTO users (uuid, username, email, fullname, password_hash, is_active, is_admin, is_builtin, created, updated, password_changed)
     VALUES (?, 'admin', 'admin', 'Administrator', ?, 1, 1, 1, ?, ?, ?)`,
    [uuid, passwordHash, nowMs, nowMs, nowMs],
  );
}

export async function setNotifications(sql: Sql, uuid: string, json: string, nowMs: number): Promise<void> {
  (await sql.run('UPDATE users SET notifications = ?, updated = ? WHERE uuid = ?', [json, nowMs, uuid]));
}

export interface DirectoryRow {
  uuid: string;
  fullname: string;
  email: string;
  is_active: number;
  is_admin: number;
}

/** The users of one organization (active ones only on request), by name. */
export async function listOrganizationUsers(sql: Sql, orgId: string, activeOnly: boolean): Promise<DirectoryRow[]> {
  return (await sql.all(`SELECT uuid, fullname, email, is_active, is_admin FROM users
       WHERE org_id = ? AND (? = 0 OR is_active = 1) ORDER BY ${folded(sql, 'fullname')}, uuid`, [orgId, activeOnly ? 1 : 0])) as DirectoryRow[];
}

/**
 * Removes the user's row; sessions, stars, login history and group memberships go with it
 * (ON DELETE CASCADE). Nodes, avatar and WebDrive endpoint are the caller's (ops/owner-deletion.ts).
 */
export async function deleteUserRow(sql: Sql, uuid: string): Promise<void> {
  (await sql.run('DELETE FROM users WHERE uuid = ?', [uuid]));
}

/** Users of an organization, by full name. */
export async function usersOfOrg(sql: Sql, orgId: string): Promise<UserRow[]> {
  return (await sql.all(`SELECT * FROM users WHERE org_id = ? ORDER BY ${folded(sql, 'fullname')}, uuid`, [orgId])) as UserRow[];
}
