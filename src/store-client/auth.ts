/** POST /auth and GET /api/user/logout. */
import type { StoreHttp } from './http.js';
import { parseWith } from './parse.js';
import { sessionSchema } from './schemas.js';
import type { StoreSession } from './types.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Reads `exp` from a JWT without verifying it (the store verifies; we only plan renewal). */
function jwtExpiryMs(token: string): number | undefined {
  const payload = token.split('.')[1];
  if (!payload) return undefined;
  try {
    const exp = (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { exp?: unknown }).exp;
    return typeof exp === 'number' ? exp * 1000 : undefined;
  } catch {
    return undefined;
  }
}

/** The client a relaying caller (the bridge) logs in for. */
export interface RelayedClient {
  /** The client's address: sent as X-Forwarded-For (a store believes it only from a trusted proxy). */
  ip?: string;
  /** The client program (its User-Agent), recorded in the store's login history. */
  userAgent?: string;
}

export interface LoginOptions {
  signal?: AbortSignal;
  client?: RelayedClient;
  /** Our name in the User-Agent of the login request. */
  via?: string;
}

export async function login(http: StoreHttp, username: string, password: string, options: LoginOptions = {}): Promise<StoreSession> {
  const operation = 'auth.login';
  const headers: Record<string, string> = {};
  if (options.client?.ip) headers['x-forwarded-for'] = options.client.ip;
  const agent = [options.via, options.client?.userAgent && `(${options.client.userAgent})`].filter(Boolean).join(' ');
  if (agent) headers['user-agent'] = agent.replace(/[^\x20-\x7e]/g, '').slice(0, 200);
  const res = await http.call({ method: 'POST', path: '/auth', json: { username, password }, headers, signal: options.signal }, operation);
  return toStoreSession(parseWith(sessionSchema, res.body, operation, res.status));
}

/** A Session object (docs/api.md) in the bridge's terms; the token's own expiry plans its renewal. */
export function toStoreSession(body: { uuid: string; token: string; fileaccesskey: string; is_admin: boolean; fullname: string }): StoreSession {
  return {
    userId: body.uuid,
    token: body.token,
    fileAccessKey: body.fileaccesskey,
    isAdmin: body.is_admin,
    fullname: body.fullname,
    expiresAtMs: jwtExpiryMs(body.token) ?? Date.now() + DAY_MS,
  };
}

export async function logout(http: StoreHttp, session: StoreSession): Promise<void> {
  await http.call({ method: 'GET', path: '/api/user/logout', token: session.token }, 'auth.logout');
}
