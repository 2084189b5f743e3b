/**
 * Session rows (sessions.ts signs and verifies the tokens; this module only keeps the rows): a
 * session is live while it is neither revoked nor expired and its user is active. On SQLite it
 * also watches them, so live sessions may be answered from memory (SqliteSessionMemo).
 */
import type Database from 'better-sqlite3';
import { sqliteConnectionOf } from './dialects/sqlite.js';
import type { Sql } from './sql.js';

export interface SessionInsert {
  sessionId: string;
  userUuid: string;
  fileaccesskey: string;
  createdMs: number;
  expiresMs: number;
  ip: string;
  appPasswordUuid: string | null;
  /** A web app session's idle lifetime (migration 030); null for every other session. */
  idleSec: number | null;
}

export async function insertSessionRow(sql: Sql, row: SessionInsert): Promise<void> {
  await sql.run('INSERT INTO sessions (id, user_uuid, fileaccesskey, created, expires, ip, app_password_uuid, idle_sec, seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
    row.sessionId,
    row.userUuid,
    row.fileaccesskey,
    row.createdMs,
    row.expiresMs,
    row.ip,
    row.appPasswordUuid,
    row.idleSec,
    row.idleSec === null ? null : row.createdMs,
  ]);
}

export interface ActiveSessionRow {
  user_uuid: string;
  id: string;
  is_admin: number;
  is_builtin: number;
  org_id: string;
  app_password_uuid: string | null;
  /** 1 when the session's app password may make shares (migration 037); 0 otherwise. */
  app_may_share: number;
  password_changed: number;
  /** When the session expires (ms). */
  expires: number;
  /** A web app session's idle lifetime (s) and when it was last used (ms); null for others (migration 030). */
  idle_sec: number | null;
  seen: number | null;
}

const ACTIVE_SESSION_BY = (column: 'id' | 'fileaccesskey') => `SELECT s.id, s.user_uuid, s.app_password_uuid, COALESCE(a.may_share, 0) AS app_may_share, u.is_admin, u.is_builtin, u.org_id, u.password_changed, s.expires, s.idle_sec, s.seen
  FROM sessions s JOIN users u ON u.uuid = s.user_uuid LEFT JOIN app_passwords a ON a.uuid = s.app_password_uuid
  WHERE s.${column} = ? AND s.revoked IS NULL AND s.expires > ? AND u.is_active = 1 AND (s.idle_sec IS NULL OR s.seen + s.idle_sec * 1000 > ?)`;
const BY_ID = ACTIVE_SESSION_BY('id');
const BY_KEY = ACTIVE_SESSION_BY('fileaccesskey');

/** The live session with this id (or fileaccesskey) and its active user. */
export function activeSession(sql: Sql, by: 'id' | 'fileaccesskey', value: string, nowMs: number): Promise<ActiveSessionRow | undefined> {
  return sql.get<ActiveSessionRow>(by === 'id' ? BY_ID : BY_KEY, [value, nowMs, nowMs]);
}

/** Whether a session row is live at `nowMs` by its clocks (expiry, and idle expiry for a web session). */
export function liveAt(row: Pick<ActiveSessionRow, 'expires' | 'idle_sec' | 'seen'>, nowMs: number): boolean {
  return Number(row.expires) > nowMs && (row.idle_sec === null || Number(row.seen) + Number(row.idle_sec) * 1000 > nowMs);
}

/** How stale `seen` may get before a use writes it again: one write a minute per web session at most. */
export const SEEN_WRITE_MS = 60_000;

/** Marks a web session used now (its idle clock starts over), when `seen` is older than SEEN_WRITE_MS; nothing for other sessions. */
export async function touchSession(sql: Sql, row: Pick<ActiveSessionRow, 'id' | 'idle_sec' | 'seen'>, nowMs: number): Promise<void> {
  if (row.idle_sec === null || nowMs - Number(row.seen) < SEEN_WRITE_MS) return;
  await sql.run('UPDATE sessions SET seen = ? WHERE id = ? AND revoked IS NULL', [nowMs, row.id]);
}

/** The fileaccesskey and the clocks of a live session (GET /api/session answers them). */
export function sessionKeyOf(sql: Sql, sessionId: string): Promise<{ fileaccesskey: string; expires: number; idle_sec: number | null; seen: number | null } | undefined> {
  return sql.get('SELECT fileaccesskey, expires, idle_sec, seen FROM sessions WHERE id = ?', [sessionId]);
}

/** Revokes the live sessions a filter names: one session, a user's (all, or all but one), an app password's. */
export async function revokeSessions(
  sql: Sql,
  nowMs: number,
  which: { sessionId: string } | { userUuid: string; exceptSessionId?: string } | { appPasswordUuid: string },
): Promise<void> {
  if ('sessionId' in which) {
    await sql.run('UPDATE sessions SET revoked = ? WHERE id = ? AND revoked IS NULL', [nowMs, which.sessionId]);
  } else if ('appPasswordUuid' in which) {
    await sql.run('UPDATE sessions SET revoked = ? WHERE app_password_uuid = ? AND revoked IS NULL', [nowMs, which.appPasswordUuid]);
  } else if (which.exceptSessionId !== undefined) {
    await sql.run('UPDATE sessions SET revoked = ? WHERE user_uuid = ? AND id <> ? AND revoked IS NULL', [nowMs, which.userUuid, which.exceptSessionId]);
  } else {
    await sql.run('UPDATE sessions SET revoked = ? WHERE user_uuid = ? AND revoked IS NULL', [nowMs, which.userUuid]);
  }
}

/** How many sessions of the user are live (not revoked, not expired). */
/** When session `id` was opened (ms), if it exists. */
export async function sessionCreated(sql: Sql, id: string): Promise<number | undefined> {
  const row = await sql.get<{ created: number | string }>('SELECT created FROM sessions WHERE id = ?', [id]);
  return row && Number(row.created);
}

export async function countLiveSessions(sql: Sql, userUuid: string, nowMs: number): Promise<number> {
  const row = await sql.get<{ n: number }>('SELECT COUNT(*) AS n FROM sessions WHERE user_uuid = ? AND revoked IS NULL AND expires > ?', [userUuid, nowMs]);
  return Number(row?.n ?? 0);
}

/**
 * What a SQLite connection knows of changes to live sessions (installSessionWatch): `generation`
 * grows whenever this connection changes a session row or what a session carries of its user
 * (TEMP triggers, fired at the statement, whether its transaction later commits or rolls back);
 * `dataVersion` reads PRAGMA data_version, which moves whenever another connection (the admin
 * commands beside a server, another process) committed anything to the file.
 */
interface SessionWatch {
  generation: number;
  dataVersion: () => number;
}
const sessionWatches = new WeakMap<Database.Database, SessionWatch>();

/** Lets SqliteSessionMemo keep live sessions on this SQLite connection (openDatabase calls it). */
export function installSessionWatch(db: Database.Database): void {
  const version = db.prepare('PRAGMA data_version').pluck();
  const watch: SessionWatch = { generation: 0, dataVersion: () => version.get() as number };
  db.function('driveway_session_rows_changed', { deterministic: false, varargs: false }, () => {
    watch.generation += 1;
    return null;
  });
  // Every column of ActiveSessionRow: the session's own, and of its user is_active and those it
  // carries. Not users' disk_used, which every upload changes.
  db.exec(`CREATE TEMP TRIGGER IF NOT EXISTS session_rows_updated AFTER UPDATE ON main.sessions BEGIN SELECT driveway_session_rows_changed(); END;
           CREATE TEMP TRIGGER IF NOT EXISTS session_rows_deleted AFTER DELETE ON main.sessions BEGIN SELECT driveway_session_rows_changed(); END;
           CREATE TEMP TRIGGER IF NOT EXISTS session_users_updated AFTER UPDATE OF uuid, is_active, is_admin, is_builtin, org_id, password_changed ON main.users
             BEGIN SELECT driveway_session_rows_changed(); END;
           CREATE TEMP TRIGGER IF NOT EXISTS session_users_deleted AFTER DELETE ON main.users BEGIN SELECT driveway_session_rows_changed(); END;`);
  sessionWatches.set(db, watch);
}

/** Sessions kept at most before the memory starts over (~200 bytes each). */
const SESSION_MEMO_LIMIT = 10_000;

/**
 * Live sessions in memory on the embedded database (the in-process client's: sessions.ts
 * authenticateToken), so a small PUT does not read its session row and user again: that read
 * was the largest statement of a bridge PUT after its commit (~60 µs of ~700 on the event
 * loop). Sound because every answer is dropped, all at once, when the connection's watch
 * (installSessionWatch) saw anything that may change one: a session or user change of this
 * connection (TEMP triggers), or any commit by another connection (data_version). Both are
 * compared before an answer is used, and an answer is kept under the values seen before it was
 * read, so one read across a change is dropped at the next call. A missing session is never
 * kept (a new one is not watched for); expiry is checked by the caller at every use.
 */
export class SqliteSessionMemo {
  private readonly rows = new Map<string, ActiveSessionRow>();
  private generation = -1;
  private dataVersion = -1;

  constructor(
    private readonly db: Database.Database,
    private readonly watch: SessionWatch,
  ) {}

  async get<R extends ActiveSessionRow | undefined>(key: string, read: () => Promise<R>, keep: (value: ActiveSessionRow) => boolean = () => true): Promise<R> {
    if (!this.db.open) return read();
    const generation = this.watch.generation;
    const dataVersion = this.watch.dataVersion();
    if (generation !== this.generation || dataVersion !== this.dataVersion) {
      this.rows.clear();
      this.generation = generation;
      this.dataVersion = dataVersion;
    }
    const known = this.rows.get(key);
    if (known !== undefined) return known as R;
    const value = await read();
    if (value !== undefined && keep(value) && this.generation === generation && this.dataVersion === dataVersion) {
      if (this.rows.size >= SESSION_MEMO_LIMIT) this.rows.clear();
      this.rows.set(key, value);
    }
    return value;
  }
}

/** The session memo of a SQLite handle whose connection is watched; undefined for any other. */
export function sqliteSessionMemo(sql: Sql): SqliteSessionMemo | undefined {
  const db = sqliteConnectionOf(sql);
  const watch = db && sessionWatches.get(db);
  return db && watch ? new SqliteSessionMemo(db, watch) : undefined;
}
