/**
 * User rows: the SQL for users, their 2FA state and notification settings. It does not hash
 * passwords, check rules or revoke sessions (ops/ and sessions.ts do), and it never sees a plain
 * password. Callers run multi-row writes inside their own `db.transaction`.
 */
import type { Db } from './dialects/sqlite-open.js';

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

export function getUserByUuid(db: Db, uuid: string): UserRow | undefined {
  return db.prepare('SELECT * FROM users WHERE uuid = ?').get(uuid) as UserRow | undefined;
}

/** `username` is compared case-insensitively (the column is COLLATE NOCASE). */
export function getUserByUsername(db: Db, username: string): UserRow | undefined {
  return db.prepare('SELECT * FROM users WHERE username = ?').get(username) as UserRow | undefined;
}

/**
 * True when another user already has this email (case-insensitive), either as email or as
 * login name; `exceptUuid` leaves out the user being updated.
 */
export function isEmailTaken(db: Db, email: string, exceptUuid?: string): boolean {
  const row = db
    .prepare('SELECT 1 FROM users WHERE (email = ? COLLATE NOCASE OR username = ? COLLATE NOCASE) AND uuid IS NOT ? LIMIT 1')
    .get(email, email, exceptUuid ?? null);
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
export function insertUser(db: Db, user: NewUser): void {
  db.prepare(
    `INSERT INTO users (uuid, username, email, fullname, password_hash, is_active, is_admin, is_builtin, org_id,
                        disk_quota, comment, created, updated, password_changed)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?, ?)`,
  ).run(
    user.uuid,
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
    user.nowMs,
  );
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
export function updateUser(db: Db, uuid: string, patch: UserPatch, nowMs: number): void {
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
  db.prepare(`UPDATE users SET ${sets.join(', ')} WHERE uuid = ?`).run(...values, uuid);
}

/** Turns 2FA on with a new secret (the replay guard starts over), or off forgetting both. */
export function setTwofa(db: Db, uuid: string, secret: string | null, nowMs: number): void {
  db.prepare('UPDATE users SET twofa = ?, twofa_secret = ?, twofa_last_step = NULL, updated = ? WHERE uuid = ?').run(secret === null ? 0 : 1, secret, nowMs, uuid);
}

/** Remembers the time step of an accepted TOTP code. */
export function setTwofaLastStep(db: Db, uuid: string, step: number): void {
  db.prepare('UPDATE users SET twofa_last_step = ? WHERE uuid = ?').run(step, uuid);
}

export function setNotifications(db: Db, uuid: string, json: string, nowMs: number): void {
  db.prepare('UPDATE users SET notifications = ?, updated = ? WHERE uuid = ?').run(json, nowMs, uuid);
}

export interface DirectoryRow {
  uuid: string;
  fullname: string;
  email: string;
  is_active: number;
  is_admin: number;
}

/** The users of one organization (active ones only on request), by name. */
export function listOrganizationUsers(db: Db, orgId: string, activeOnly: boolean): DirectoryRow[] {
  return db
    .prepare(
      `SELECT uuid, fullname, email, is_active, is_admin FROM users
       WHERE org_id = ? AND (? = 0 OR is_active = 1) ORDER BY fullname COLLATE NOCASE, uuid`,
    )
    .all(orgId, activeOnly ? 1 : 0) as DirectoryRow[];
}

/**
 * Removes the user's row; sessions, stars, login history and group memberships go with it
 * (ON DELETE CASCADE). Nodes, avatar and WebDrive endpoint are the caller's (ops/owner-deletion.ts).
 */
export function deleteUserRow(db: Db, uuid: string): void {
  db.prepare('DELETE FROM users WHERE uuid = ?').run(uuid);
}

/** Users of an organization, by full name. */
export function usersOfOrg(db: Db, orgId: string): UserRow[] {
  return db.prepare('SELECT * FROM users WHERE org_id = ? ORDER BY fullname COLLATE NOCASE, uuid').all(orgId) as UserRow[];
}
