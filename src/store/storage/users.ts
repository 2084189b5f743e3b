/**
 * Users and credentials: user rows, app passwords, the login history and avatars (sections
 * below). User rows: the SQL for users, their 2FA state and notification settings. It does not hash
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
  /** Base32 secret of a two-factor set-up not yet confirmed (migration 029), and when it expires. */
  twofa_pending_secret: string | null;
  twofa_pending_expires: number | null;
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
  await sql.run(`INSERT INTO users (uuid, username, email, fullname, password_hash, is_active, is_admin, is_builtin, org_id,
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
    user.nowMs]);
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
    set('twofa_pending_secret', null);
    set('twofa_pending_expires', null);
  }
  if (patch.comment !== undefined) set('comment', patch.comment);
  set('updated', nowMs);
  await sql.run(`UPDATE users SET ${sets.join(', ')} WHERE uuid = ?`, [...values, uuid]);
  if (patch.disableTwofa) await deleteRecoveryCodes(sql, uuid);
}

/**
 * Turns 2FA on with a new secret (the replay guard starts at `lastStep`: the step of the code
 * that confirmed it, if any), or off forgetting it and the recovery codes. Either way a pending
 * set-up is forgotten.
 */
export async function setTwofa(sql: Sql, uuid: string, secret: string | null, nowMs: number, lastStep: number | null = null): Promise<void> {
  await sql.run(
    'UPDATE users SET twofa = ?, twofa_secret = ?, twofa_last_step = ?, twofa_pending_secret = NULL, twofa_pending_expires = NULL, updated = ? WHERE uuid = ?',
    [secret === null ? 0 : 1, secret, lastStep, nowMs, uuid],
  );
  if (secret === null) await deleteRecoveryCodes(sql, uuid);
}

/** Keeps the secret of a set-up until `expiresMs` (replacing any earlier one). */
export async function setTwofaPending(sql: Sql, uuid: string, secret: string, expiresMs: number): Promise<void> {
  await sql.run('UPDATE users SET twofa_pending_secret = ?, twofa_pending_expires = ? WHERE uuid = ?', [secret, expiresMs, uuid]);
}

// ---- recovery codes (migration 029): only their SHA-256 is kept, each used once

/** Replaces the user's recovery codes with these hashes. */
export async function replaceRecoveryCodes(sql: Sql, userUuid: string, hashes: readonly string[], nowMs: number): Promise<void> {
  await deleteRecoveryCodes(sql, userUuid);
  for (const hash of hashes) await sql.run('INSERT INTO twofa_recovery_codes (user_uuid, code_hash, created) VALUES (?, ?, ?)', [userUuid, hash, nowMs]);
}

export async function deleteRecoveryCodes(sql: Sql, userUuid: string): Promise<void> {
  await sql.run('DELETE FROM twofa_recovery_codes WHERE user_uuid = ?', [userUuid]);
}

/** Marks the unused code `hash` used; false when the user has no such unused code (a second use loses). */
export async function useRecoveryCode(sql: Sql, userUuid: string, hash: string, nowMs: number): Promise<boolean> {
  const { changes } = await sql.run('UPDATE twofa_recovery_codes SET used = ? WHERE user_uuid = ? AND code_hash = ? AND used IS NULL', [nowMs, userUuid, hash]);
  return changes === 1;
}

export async function hasUnusedRecoveryCode(sql: Sql, userUuid: string, hash: string): Promise<boolean> {
  return (await sql.get('SELECT 1 AS one FROM twofa_recovery_codes WHERE user_uuid = ? AND code_hash = ? AND used IS NULL', [userUuid, hash])) !== undefined;
}

export async function countUnusedRecoveryCodes(sql: Sql, userUuid: string): Promise<number> {
  return Number(((await sql.get('SELECT COUNT(*) AS n FROM twofa_recovery_codes WHERE user_uuid = ? AND used IS NULL', [userUuid])) as { n: number | string }).n);
}

/** Remembers the time step of an accepted TOTP code. */
export async function setTwofaLastStep(sql: Sql, uuid: string, step: number): Promise<void> {
  await sql.run('UPDATE users SET twofa_last_step = ? WHERE uuid = ?', [step, uuid]);
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
  await sql.run('UPDATE users SET notifications = ?, updated = ? WHERE uuid = ?', [json, nowMs, uuid]);
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
  await sql.run('DELETE FROM users WHERE uuid = ?', [uuid]);
}

/** Users of an organization, by full name. */
export async function usersOfOrg(sql: Sql, orgId: string): Promise<UserRow[]> {
  return (await sql.all(`SELECT * FROM users WHERE org_id = ? ORDER BY ${folded(sql, 'fullname')}, uuid`, [orgId])) as UserRow[];
}

// ---- app passwords

/**
 * App password rows (table `app_passwords`). Only the SHA-256 of a password is stored; this
 * module never sees the password itself (ops/app-passwords.ts makes and hashes it). Callers run
 * multi-row writes inside their own `sql.transaction`.
 */

export interface AppPasswordRow {
  uuid: string;
  user_uuid: string;
  name: string;
  secret_hash: string;
  created: number;
  last_used: number | null;
  /** 1 when its sessions may make shares (migration 037). */
  may_share: number;
}

export async function insertAppPassword(sql: Sql, row: Omit<AppPasswordRow, 'last_used'>): Promise<void> {
  await sql.run('INSERT INTO app_passwords (uuid, user_uuid, name, secret_hash, created, may_share) VALUES (?, ?, ?, ?, ?, ?)', [row.uuid,
    row.user_uuid,
    row.name,
    row.secret_hash,
    row.created,
    row.may_share]);
}

/** A user's app passwords, newest first. */
export async function listAppPasswords(sql: Sql, userUuid: string): Promise<AppPasswordRow[]> {
  return (await sql.all(
    // Newest first; of two made in the same millisecond, SQLite knows which came last (rowid),
    // PostgreSQL has no insertion order to ask for, so there the uuid decides.
    `SELECT * FROM app_passwords WHERE user_uuid = ? ORDER BY created DESC, ${sql.dialect === 'sqlite' ? 'rowid' : 'uuid'} DESC`,
    [userUuid],
  )) as AppPasswordRow[];
}

export async function countAppPasswords(sql: Sql, userUuid: string): Promise<number> {
  return ((await sql.get('SELECT COUNT(*) AS n FROM app_passwords WHERE user_uuid = ?', [userUuid])) as { n: number }).n;
}

export async function appPasswordOf(sql: Sql, userUuid: string, uuid: string): Promise<AppPasswordRow | undefined> {
  return (await sql.get('SELECT * FROM app_passwords WHERE user_uuid = ? AND uuid = ?', [userUuid, uuid])) as AppPasswordRow | undefined;
}

export async function appPasswordByHash(sql: Sql, userUuid: string, secretHash: string): Promise<AppPasswordRow | undefined> {
  return (await sql.get('SELECT * FROM app_passwords WHERE user_uuid = ? AND secret_hash = ?', [userUuid, secretHash])) as AppPasswordRow | undefined;
}

export async function touchAppPassword(sql: Sql, uuid: string, nowMs: number): Promise<void> {
  await sql.run('UPDATE app_passwords SET last_used = ? WHERE uuid = ?', [nowMs, uuid]);
}

export async function deleteAppPassword(sql: Sql, uuid: string): Promise<void> {
  await sql.run('DELETE FROM app_passwords WHERE uuid = ?', [uuid]);
}

export async function deleteUserAppPasswords(sql: Sql, userUuid: string): Promise<void> {
  await sql.run('DELETE FROM app_passwords WHERE user_uuid = ?', [userUuid]);
}

// ---- login history

/**
 * The login history (table `login_events`): one row per login attempt and logout, newest first
 * by id. Each owner keeps at most `keep` rows: an insert drops that owner's oldest beyond the
 * bound, in the same transaction. Failures for unknown usernames have no owner and share one
 * bound, so a spraying attacker cannot grow the file. Never pass a password, token or key in
 * any field.
 */

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

export interface LoginEventRow {
  action: LoginAction;
  action_args: string;
  error_details: string;
  ip_address: string;
  status: LoginStatus;
  timestamp: number;
}

/** Appends one event and prunes its owner's history to the newest `keep` rows. */
export async function recordLoginEvent(sql: Sql, event: LoginEvent, keep: number): Promise<void> {
  const owner = event.userUuid ?? null;
  await sql.transaction(async (tx) => {
    await tx.run(`INSERT INTO login_events (user_uuid, action, action_args, error_details, ip_address, status, timestamp)
       VALUES (?, ?, ?, ?, ?, ?, ?)`, [owner, event.action, event.actionArgs ?? '', event.errorDetails ?? '', event.ip, event.status, event.timestampMs]);
    // `= ?` for an owner, `IS NULL` for the events of no user: both use the index in both dialects.
    const ofOwner = owner === null ? 'user_uuid IS NULL' : 'user_uuid = ?';
    const bound = owner === null ? [keep] : [owner, owner, keep];
    await tx.run(
      `DELETE FROM login_events WHERE ${ofOwner}
         AND id <= (SELECT id FROM login_events WHERE ${ofOwner} ORDER BY id DESC LIMIT 1 OFFSET ?)`,
      bound,
    );
  });
}

/** A user's history, newest first. */
export async function listLoginEvents(sql: Sql, userUuid: string): Promise<LoginEventRow[]> {
  return (await sql.all('SELECT action, action_args, error_details, ip_address, status, timestamp FROM login_events WHERE user_uuid = ? ORDER BY id DESC', [userUuid])) as LoginEventRow[];
}

// ---- avatars

/** Avatar rows: one picture per owner (user or group), replaced whole; its version follows its bytes. */

export interface AvatarRow {
  content_type: string;
  bytes: Buffer;
  version: string;
  updated: number;
}

export async function putAvatar(sql: Sql, ownerUuid: string, row: AvatarRow): Promise<void> {
  await sql.run(
    `INSERT INTO avatars (owner_uuid, content_type, bytes, version, updated) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT(owner_uuid) DO UPDATE SET content_type = excluded.content_type, bytes = excluded.bytes,
       version = excluded.version, updated = excluded.updated`,
    [ownerUuid, row.content_type, row.bytes, row.version, row.updated],
  );
}

export async function deleteAvatar(sql: Sql, ownerUuid: string): Promise<void> {
  await sql.run('DELETE FROM avatars WHERE owner_uuid = ?', [ownerUuid]);
}

/** The current version of the owner's avatar; undefined when there is none. */
export async function avatarVersionOf(sql: Sql, ownerUuid: string): Promise<string | undefined> {
  return (await sql.get<{ version: string }>('SELECT version FROM avatars WHERE owner_uuid = ?', [ownerUuid]))?.version;
}

/** The avatar of that version; undefined when the owner has none or another. */
export function avatarRowAt(sql: Sql, ownerUuid: string, version: string): Promise<AvatarRow | undefined> {
  return sql.get<AvatarRow>('SELECT content_type, bytes, version, updated FROM avatars WHERE owner_uuid = ? AND version = ?', [ownerUuid, version]);
}

/** Every user of every organization, by organization then login name (the operator's `driveway user list`). */
export function allUsers(sql: Sql): Promise<UserRow[]> {
  return sql.all<UserRow>('SELECT * FROM users ORDER BY org_id, is_builtin DESC, username');
}
