/**
 * Sessions: a JWT (HS256, 24 h) whose `jti` names a row in `sessions`, so logout and
 * deactivation revoke it at once, and a random fileaccesskey per session. The signing
 * secret comes from DRIVEWAY_JWT_SECRET or is generated once into `<data dir>/jwt-secret`.
 * A session remembers the app password it was opened with, so revoking that ends it and the
 * operations a leaked app password must not reach can refuse it.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { jwtVerify, SignJWT } from 'jose';
import { LRUCache } from 'lru-cache';
import type { Clock } from '../common/clock.js';
import { activeSession, insertSessionRow, revokeSessions, type ActiveSessionRow } from './storage/sessions.js';
import type { Sql } from './storage/sql.js';

export interface SessionKeys {
  jwtSecret: Uint8Array;
}

export function loadSessionKeys(dataDir: string, configured?: string): SessionKeys {
  if (configured) return { jwtSecret: new TextEncoder().encode(configured) };
  const file = path.join(dataDir, 'jwt-secret');
  if (!existsSync(file)) writeFileSync(file, randomBytes(48).toString('base64url'), { mode: 0o600, flag: 'wx' });
  return { jwtSecret: new TextEncoder().encode(readFileSync(file, 'utf8').trim()) };
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

export async function signSession(keys: SessionKeys, clock: Clock, userUuid: string, ttlSec: number): Promise<SignedSession> {
  const now = clock.now();
  const sessionId = randomUUID();
  const expiresMs = now + ttlSec * 1000;
  const token = await new SignJWT({})
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(userUuid)
    .setJti(sessionId)
    .setIssuedAt(Math.floor(now / 1000))
    .setExpirationTime(Math.floor(expiresMs / 1000))
    .sign(keys.jwtSecret);
  return { token, fileaccesskey: randomBytes(24).toString('base64url'), sessionId, userUuid, createdMs: now, expiresMs };
}

/** Stores a signed session; until then its token is refused (no row). */
export async function insertSession(sql: Sql, session: SignedSession, origin: { ip: string; appPasswordUuid?: string }): Promise<void> {
  await insertSessionRow(sql, { ...session, ip: origin.ip, appPasswordUuid: origin.appPasswordUuid ?? null });
}

export interface AuthenticatedUser {
  userUuid: string;
  sessionId: string;
  isAdmin: boolean;
  isBuiltin: boolean;
  orgId: string;
  /** The app password the session was opened with; null for the account password. */
  appPasswordUuid: string | null;
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
    passwordChangedMs: row.password_changed,
  };
}

/** Verifies a bearer token: signature, expiry, and that its session is neither revoked nor its user inactive. */
export async function authenticateToken(sql: Sql, keys: SessionKeys, clock: Clock, token: string): Promise<AuthenticatedUser | undefined> {
  const claims = await verifiedClaims(keys, clock, token);
  if (!claims) return undefined;
  const user = await sessionUser(sql, clock.now(), claims.jti);
  return user?.userUuid === claims.sub ? user : undefined;
}

interface Claims {
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

async function verifiedClaims(keys: SessionKeys, clock: Clock, token: string): Promise<Claims | undefined> {
  let cache = verified.get(keys);
  if (!cache) {
    cache = new LRUCache<string, Claims>({ max: 10_000 });
    verified.set(keys, cache);
  }
  const now = clock.now();
  const hit = cache.get(token);
  if (hit) return hit.expMs > now ? hit : undefined;
  try {
    const { payload } = await jwtVerify(token, keys.jwtSecret, { algorithms: ['HS256'], currentDate: new Date(now) });
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
  return toUser(await activeSession(sql, 'fileaccesskey', key, clock.now()));
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
