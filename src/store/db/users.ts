/**
 * User rows and the login event log (table `login_events`). Owns the SQL for users; it does
 * not hash passwords, check rules or revoke sessions (routes and sessions.ts do), and it never
 * sees a plain password. Callers run multi-row writes inside their own `db.transaction`.
 */
import type { Db } from './database.js';

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
  twofa_secret: string | null;
  comment: string;
  created: number;
  updated: number;
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
                        disk_quota, comment, created, updated)
     VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, ?, ?)`,
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
  );
}

export interface UserPatch {
  fullname?: string;
  email?: string;
  passwordHash?: string;
  diskQuotaBytes?: number;
  isActive?: boolean;
  isAdmin?: boolean;
  /** Only disabling is possible: it also forgets the TOTP secret. */
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
  if (patch.passwordHash !== undefined) set('password_hash', patch.passwordHash);
  if (patch.diskQuotaBytes !== undefined) set('disk_quota', patch.diskQuotaBytes);
  if (patch.isActive !== undefined) set('is_active', patch.isActive ? 1 : 0);
  if (patch.isAdmin !== undefined) set('is_admin', patch.isAdmin ? 1 : 0);
  if (patch.disableTwofa) {
    set('twofa', 0);
    set('twofa_secret', null);
  }
  if (patch.comment !== undefined) set('comment', patch.comment);
  set('updated', nowMs);
  db.prepare(`UPDATE users SET ${sets.join(', ')} WHERE uuid = ?`).run(...values, uuid);
}

export type LoginAction = 'login' | 'logout';
export type LoginStatus = 'success' | 'failure';

export interface LoginEvent {
  /** Undefined when the username named nobody. */
  userUuid?: string;
  action: LoginAction;
  actionArgs?: string;
  errorDetails?: string;
  ip: string;
  status: LoginStatus;
  timestampMs: number;
}

/** Appends one row to the login history. Never pass a password, token or key in any field. */
export function recordLoginEvent(db: Db, event: LoginEvent): void {
  db.prepare(
    `INSERT INTO login_events (user_uuid, action, action_args, error_details, ip_address, status, timestamp)
     VALUES (?, ?, ?, ?, ?, ?, ?)`,
  ).run(
    event.userUuid ?? null,
    event.action,
    event.actionArgs ?? '',
    event.errorDetails ?? '',
    event.ip,
    event.status,
    event.timestampMs,
  );
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
