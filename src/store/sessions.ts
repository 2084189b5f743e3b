/**
 * Sessions: a JWT (HS256, 24 h) whose `jti` names a row in `sessions`, so logout and
 * deactivation revoke it at once, and a random fileaccesskey per session. Tokens are signed with
 * the newest key of the ring in `jwt_keys` and name it in their header (`kid`), so keys can
 * rotate while every instance over the database verifies every live token; DRIVEWAY_JWT_SECRET,
 * when set, is the one key instead (openSessionKeys, docs/scale-out.md "Shared state").
 * A session remembers the app password it was opened with, so revoking that ends it and the
 * operations a leaked app password must not reach can refuse it. A web app session (its cookie:
 * web-session.ts) also ends after its idle lifetime unused: every use marks it (touchSession).
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import type { ChangeFeed } from '../common/change-feed.js';
import type { Clock } from '../common/clock.js';
import { FeedMemo } from '../common/feed-memo.js';
import { activeSession, insertSessionRow, liveAt as rowLiveAt, revokeSessions, sqliteSessionMemo, touchSession, type ActiveSessionRow } from './storage/sessions.js';
import { insertSessionKey, liveSessionKeys, newestSessionKeyCreated, retireReplacedSessionKeys } from './storage/session-keys.js';
import type { Sql } from './storage/sql.js';

/** A signing key of session tokens: `kid` goes into the token's header. */
export interface SessionKey {
  kid: string;
  secret: Uint8Array;
}

/** The keys tokens are signed and verified with (a key ring in `jwt_keys`, or the configured secret). */
export interface SessionKeys {
  /** The key new tokens are signed with: the newest not retired. */
  signing(): Promise<SessionKey>;
  /** The secret of key `kid` if it may verify; a token without kid (made before keys had ids) names the first key. */
  verifying(kid: string | undefined): Promise<Uint8Array | undefined>;
}

/** The kid of the first key of a ring, the one `<data dir>/jwt-secret` held before keys had ids. */
export const FIRST_KID = '0';
/** How often an instance re-reads the ring to sign with the newest key; rotation waits this long beyond the TTL before retiring. */
export const KEY_REFRESH_MS = 60_000;
/** At most one reload per this many ms for tokens naming an unknown kid. */
const UNKNOWN_KID_RELOAD_MS = 1_000;

const encode = (secret: string): Uint8Array => new TextEncoder().encode(secret);
const newSecret = (): string => randomBytes(48).toString('base64url');

/**
 * The session keys of a store. DRIVEWAY_JWT_SECRET (store.jwtSecret), when set, is the one key
 * (every instance configured with it agrees; no rotation). Otherwise the ring in `jwt_keys`
 * (migration 013), shared by every instance over the database: on first start with an empty
 * ring the key of `<data dir>/jwt-secret` is imported as kid '0' (tokens signed before carry no
 * kid and verify with it), or one is made; two instances starting at once insert the same kid
 * and one insert wins (ON CONFLICT DO NOTHING), then both read.
 */
export async function openSessionKeys(sql: Sql, clock: Clock, dataDir: string, configured?: string): Promise<SessionKeys> {
  if (configured) {
    const key: SessionKey = { kid: `cfg-${createHash('sha256').update(configured).digest('base64url').slice(0, 8)}`, secret: encode(configured) };
    return {
      signing: async () => key,
      verifying: async (kid) => (kid === undefined || kid === key.kid ? key.secret : undefined),
    };
  }
  const ring = new SessionKeyRing(sql);
  await ring.reload();
  if (!ring.hasKeys) {
    const file = path.join(dataDir, 'jwt-secret');
    const legacy = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    await insertSessionKey(sql, { kid: FIRST_KID, secret: legacy || newSecret(), created: clock.now() }, true);
    await ring.reload();
    // kid '0' was there but retired (every key retired by hand): start a fresh one.
    if (!ring.hasKeys) {
      await addSessionKey(sql, clock);
      await ring.reload();
    }
  }
  return ring;
}

class SessionKeyRing implements SessionKeys {
  private keys = new Map<string, Uint8Array>();
  private newest: SessionKey | undefined;
  /** Real time (not the store's clock, which tests freeze) of the last read. */
  private loadedAt = 0;
  private loading: Promise<void> | undefined;

  constructor(private readonly sql: Sql) {}

  get hasKeys(): boolean {
    return this.newest !== undefined;
  }

  reload(): Promise<void> {
    this.loading ??= this.read().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private async read(): Promise<void> {
    const rows = await liveSessionKeys(this.sql);
    this.keys = new Map(rows.map((r) => [r.kid, encode(r.secret)]));
    const last = rows.at(-1);
    this.newest = last && { kid: last.kid, secret: this.keys.get(last.kid) as Uint8Array };
    this.loadedAt = Date.now();
  }

  async signing(): Promise<SessionKey> {
    // Another instance may have rotated: re-read now and then (one query a minute).
    if (Date.now() - this.loadedAt >= KEY_REFRESH_MS) await this.reload();
    if (!this.newest) throw new Error('no session signing key: every key in jwt_keys is retired');
    return this.newest;
  }

  async verifying(kid: string | undefined): Promise<Uint8Array | undefined> {
    const id = kid ?? FIRST_KID;
    // A key retired elsewhere stops verifying here within KEY_REFRESH_MS.
    if (Date.now() - this.loadedAt >= KEY_REFRESH_MS) await this.reload();
    const known = this.keys.get(id);
    if (known || Date.now() - this.loadedAt < UNKNOWN_KID_RELOAD_MS) return known;
    // A kid made by another instance since we read the ring (or a bogus one: at most one read a second).
    await this.reload();
    return this.keys.get(id);
  }
}

/**
 * Adds a key to the ring (it signs from the next read of every instance); its kid. The newest key
 * signs, so its `created` is later than every live key's, even within one millisecond (a rotation
 * right after the first start, or a clock set back): a tie would leave the order to the random kid.
 */
export async function addSessionKey(sql: Sql, clock: Clock): Promise<string> {
  const kid = randomBytes(9).toString('base64url');
  const newest = await newestSessionKeyCreated(sql);
  const created = newest === undefined ? clock.now() : Math.max(clock.now(), newest + 1);
  await insertSessionKey(sql, { kid, secret: newSecret(), created });
  return kid;
}

export interface RotationResult {
  /** The kid of the key added, when one was. */
  added?: string;
  /** Keys retired now. */
  retired: number;
}

/**
 * Rotation of the ring: adds a key when the newest is `everyMs` old or more (always, when
 * `everyMs` is 0: the admin command's "rotate now"), and retires every key replaced more than the
 * session TTL (plus KEY_REFRESH_MS, the time other instances may still sign with it) ago: no
 * token it signed is still valid then. A key is never retired for its own age, only for having
 * been replaced long enough: the newest signs until a newer one exists. One transaction, so two
 * instances rotating at once add one key.
 */
export async function rotateSessionKeys(sql: Sql, clock: Clock, options: { everyMs: number; ttlSec: number }): Promise<RotationResult> {
  const now = clock.now();
  return sql.transaction(async (tx) => {
    const newest = await newestSessionKeyCreated(tx);
    let added: string | undefined;
    if (newest === undefined || options.everyMs === 0 || newest <= now - options.everyMs) added = await addSessionKey(tx, clock);
    const retired = await retireReplacedSessionKeys(tx, now, now - options.ttlSec * 1000 - KEY_REFRESH_MS);
    return added === undefined ? { retired } : { added, retired };
  });
}

export interface SessionRow {
  id: string;
  user_uuid: string;
  fileaccesskey: string;
  created: number;
  expires: number;
  revoked: number | null;
  ip: string | null;
  app_password_uuid: string | null;
}

/** A signed session not yet stored: signing awaits, storing does not, so a login can store it in its one transaction. */
export interface SignedSession {
  token: string;
  fileaccesskey: string;
  sessionId: string;
  userUuid: string;
  createdMs: number;
  expiresMs: number;
}

async function signToken(keys: SessionKeys, userUuid: string, sessionId: string, nowMs: number, expiresMs: number): Promise<string> {
  const key = await keys.signing();
  return new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT', kid: key.kid })
    .setSubject(userUuid)
    .setJti(sessionId)
    .setIssuedAt(Math.floor(nowMs / 1000))
    .setExpirationTime(Math.floor(expiresMs / 1000))
    .sign(key.secret);
}

export async function signSession(keys: SessionKeys, clock: Clock, userUuid: string, ttlSec: number): Promise<SignedSession> {
  const now = clock.now();
  const sessionId = randomUUID();
  const expiresMs = now + ttlSec * 1000;
  const token = await signToken(keys, userUuid, sessionId, now, expiresMs);
  return { token, fileaccesskey: randomBytes(24).toString('base64url'), sessionId, userUuid, createdMs: now, expiresMs };
}

/**
 * A short-lived token of an existing session (the web app's bridge token: routes/web-session.ts):
 * the same `jti`, so it is refused the moment its session ends (logout, idle or absolute expiry,
 * revocation), and its own `exp`, `ttlSec` from now and never past the session's. Answers the
 * token and its expiry (ms).
 */
export async function signSessionToken(keys: SessionKeys, clock: Clock, caller: AuthenticatedUser, sessionExpiresMs: number, ttlSec: number): Promise<{ token: string; expiresMs: number }> {
  const now = clock.now();
  const expiresMs = Math.min(sessionExpiresMs, now + ttlSec * 1000);
  return { token: await signToken(keys, caller.userUuid, caller.sessionId, now, expiresMs), expiresMs };
}

/** Stores a signed session; until then its token is refused (no row). `idleSec`: a web app session's idle lifetime. */
export async function insertSession(sql: Sql, session: SignedSession, origin: { ip: string; appPasswordUuid?: string; idleSec?: number }): Promise<void> {
  await insertSessionRow(sql, { ...session, ip: origin.ip, appPasswordUuid: origin.appPasswordUuid ?? null, idleSec: origin.idleSec ?? null });
}

export interface AuthenticatedUser {
  userUuid: string;
  sessionId: string;
  isAdmin: boolean;
  isBuiltin: boolean;
  orgId: string;
  /** The app password the session was opened with; null for the account password. */
  appPasswordUuid: string | null;
  /** The app password may make shares (chosen when it was made); false for the account password. */
  appMayShare: boolean;
  /** When the account password was last set (its age decides `password_expired`). */
  passwordChangedMs: number;
}

function toUser(row: ActiveSessionRow | undefined): AuthenticatedUser | undefined {
  if (!row) return undefined;
  return {
    userUuid: row.user_uuid,
    sessionId: row.id,
    isAdmin: row.is_admin === 1,
    isBuiltin: row.is_builtin === 1,
    orgId: row.org_id,
    appPasswordUuid: row.app_password_uuid,
    appMayShare: Number(row.app_may_share) === 1,
    passwordChangedMs: row.password_changed,
  };
}

/**
 * Verifies a bearer token: signature, expiry, and that its session is neither revoked nor its
 * user inactive. With `memo` (the in-process client's: clientSessionMemo), a live session checked
 * before answers from memory until anything that may change a session happens.
 */
export async function authenticateToken(sql: Sql, keys: SessionKeys, clock: Clock, token: string, memo?: SessionMemo): Promise<AuthenticatedUser | undefined> {
  const claims = await verifiedClaims(keys, clock, token);
  if (!claims) return undefined;
  const now = clock.now();
  const row = memo ? liveAt(await memo.get(claims.jti, () => activeSession(sql, 'id', claims.jti, now)), now) : await activeSession(sql, 'id', claims.jti, now);
  if (row?.user_uuid !== claims.sub) return undefined;
  await touchSession(sql, row, now);
  return toUser(row);
}

/** Live sessions kept in memory by session id: behind a change feed (common/feed-memo.ts) or on SQLite (storage/sessions.ts SqliteSessionMemo). */
export interface SessionMemo {
  get<R extends ActiveSessionRow | undefined>(key: string, read: () => Promise<R>, keep?: (value: ActiveSessionRow) => boolean): Promise<R>;
}

/**
 * A memory of live sessions for callers that first wait for the change feed to settle (the
 * in-process bridge: every DAV request does), so a small PUT does not ask the database whether
 * its session still holds. Migration 018 announces every change that ends a session or changes
 * what it carries of its user (logout, revocation, deactivation, role, organization, password),
 * on any instance, and that drops the memory; a session not found is never kept (new ones are
 * not announced); expiry is checked at every use. Undefined without a feed (SQLite watches its
 * own connection instead: clientSessionMemo). HTTP requests, which wait for no feed, always ask.
 */
export function sessionMemo(feed: ChangeFeed | undefined): SessionMemo | undefined {
  return feed ? new FeedMemo<ActiveSessionRow>(feed, (change) => change.sessions, { max: 10_000, ttlMs: 2000 }) : undefined;
}

/**
 * The in-process client's memory of live sessions: on SQLite the connection's own
 * (SqliteSessionMemo: exact at every call, so for any caller), over PostgreSQL the feed's, only
 * for a caller behind the feed's barrier (sessionMemo); undefined otherwise (every call reads).
 */
export function clientSessionMemo(sql: Sql, feed: ChangeFeed | undefined, behindFeedBarrier: boolean): SessionMemo | undefined {
  if (sql.dialect === 'sqlite') return sqliteSessionMemo(sql);
  return behindFeedBarrier ? sessionMemo(feed) : undefined;
}

function liveAt(row: ActiveSessionRow | undefined, nowMs: number): ActiveSessionRow | undefined {
  return row && rowLiveAt(row, nowMs) ? row : undefined;
}

export interface Claims {
  jti: string;
  sub: string;
  expMs: number;
}

/**
 * Tokens whose signature was checked, per signing key. A signature never stops being valid, so
 * the HMAC (and the promise turns of WebCrypto) is paid once per token rather than per request;
 * expiry is still checked against the clock, and the session row on every call, so logout and
 * revocation take effect at once.
 */
const verified = new WeakMap<SessionKeys, LRUCache<string, Claims>>();

/** The claims of a token whose signature (by a key of `keys`) and expiry hold; undefined otherwise. Sessions are not checked. */
export async function verifiedClaims(keys: SessionKeys, clock: Clock, token: string): Promise<Claims | undefined> {
  let cache = verified.get(keys);
  if (!cache) {
    cache = new LRUCache<string, Claims>({ max: 10_000 });
    verified.set(keys, cache);
  }
  const now = clock.now();
  const hit = cache.get(token);
  if (hit) return hit.expMs > now ? hit : undefined;
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const secret = await keys.verifying(header.kid);
        if (!secret) throw new Error('unknown or retired key');
        return secret;
      },
      { algorithms: ['HS256'], currentDate: new Date(now) },
    );
    if (!payload.jti || !payload.sub || payload.exp === undefined) return undefined;
    const claims = { jti: payload.jti, sub: payload.sub, expMs: payload.exp * 1000 };
    cache.set(token, claims);
    return claims;
  } catch {
    return undefined;
  }
}

/** The live session `sessionId` with its active user (upload tokens name their session; a change that awaited re-checks its caller). */
export async function sessionUser(sql: Sql, nowMs: number, sessionId: string): Promise<AuthenticatedUser | undefined> {
  return toUser(await activeSession(sql, 'id', sessionId, nowMs));
}

/** Resolves a fileaccesskey from a view/download URL to its live session. */
export async function authenticateFileAccessKey(sql: Sql, clock: Clock, key: string): Promise<AuthenticatedUser | undefined> {
  const now = clock.now();
  const row = await activeSession(sql, 'fileaccesskey', key, now);
  if (row) await touchSession(sql, row, now);
  return toUser(row);
}

export async function revokeSession(sql: Sql, clock: Clock, sessionId: string): Promise<void> {
  await revokeSessions(sql, clock.now(), { sessionId });
}

export async function revokeUserSessions(sql: Sql, clock: Clock, userUuid: string): Promise<void> {
  await revokeSessions(sql, clock.now(), { userUuid });
}

/** Ends every session of the user except `keepSessionId` (the caller's). */
export async function revokeOtherSessions(sql: Sql, clock: Clock, userUuid: string, keepSessionId: string): Promise<void> {
  await revokeSessions(sql, clock.now(), { userUuid, exceptSessionId: keepSessionId });
}

/** Ends the sessions opened with one app password. */
export async function revokeAppPasswordSessions(sql: Sql, clock: Clock, appPasswordUuid: string): Promise<void> {
  await revokeSessions(sql, clock.now(), { appPasswordUuid });
}
