/**
 * The one way the app calls the store's REST API (docs/api.md; the app is a client like any
 * other): JSON in, the envelope's `data` out, every failure an ApiError with the store's `code`
 * and words for a person (errorText). The app's session is the store's HttpOnly cookie
 * (docs/api.md "Sessions of the web app"): every call sends it with the CSRF header, and no
 * token is ever in this page's reach except the bridge's short-lived one (bridgeAuthorization).
 * A 401 on a signed-in call means the session ended: the session is dropped and the person goes
 * to sign-in, and comes back here afterwards.
 */
// The store's record of the web session (POST and GET /api/session): a type only, no bundle cost.
import type { WebSessionBody } from '../../store/schemas/users.js';
import { navigate } from '../router.js';
import { clearSession, currentSession, onSessionChange, onSessionEndedElsewhere, saveSession, type Session } from '../session.js';
import { t } from '../strings/index.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Seconds to wait, from Retry-After (429). */
    readonly retryAfterSec?: number,
  ) {
    super(message);
  }

  /** The field the store named (`endpoint: endpoint must be ...`), if any. */
  field(): string | undefined {
    return /^([a-z_][a-z0-9_.]*): /.exec(this.message)?.[1];
  }
}

/** What sign-in says after the session ended or the person signed out. */
let notice: string | undefined;
export function takeSignInNotice(): string | undefined {
  const taken = notice;
  notice = undefined;
  return taken;
}

/** Drops the session and goes to sign-in; `returnHere` brings the person back afterwards. */
export function endSession(message: string, returnHere: boolean): void {
  // Several calls under way may each get their 401: the first one ends the session.
  if (!currentSession()) return;
  notice = message;
  clearSession();
  const next = `${window.location.pathname}${window.location.search}`;
  navigate(returnHere ? `/sign-in?next=${encodeURIComponent(next)}` : '/sign-in', { replace: true });
}

// Another tab signed out: this one follows at once, saying so.
onSessionEndedElsewhere(() => {
  notice = t.signIn.signedOutElsewhere;
  navigate('/sign-in', { replace: true });
});

interface RawAnswer {
  status: number;
  body: unknown;
  headers: Headers;
}

/** What a call of the app's session carries (the cookie goes by itself): the store's CSRF header. */
export const SESSION_HEADERS: Readonly<Record<string, string>> = { 'x-driveway-csrf': '1' };

/** `token`: a call with that bearer token and without the cookie; otherwise the cookie's session. */
async function send(method: string, path: string, body: unknown, token: string | undefined): Promise<RawAnswer> {
  const headers: Record<string, string> = { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : SESSION_HEADERS) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: token ? 'omit' : 'same-origin', cache: 'no-store' });
  } catch {
    throw new ApiError(0, 'network', t.networkError);
  }
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    parsed = undefined;
  }
  return { status: response.status, body: parsed, headers: response.headers };
}

function failure(answer: RawAnswer): ApiError {
  const envelope = (typeof answer.body === 'object' && answer.body !== null ? answer.body : {}) as { msg?: unknown; code?: unknown };
  const msg = typeof envelope.msg === 'string' ? envelope.msg : '';
  const code = typeof envelope.code === 'string' ? envelope.code : answer.status >= 500 ? 'internal' : 'invalid_request';
  const retry = Number(answer.headers.get('retry-after'));
  return new ApiError(answer.status, code, msg, Number.isFinite(retry) && retry > 0 ? retry : undefined);
}

const sessionOf = (record: WebSessionBody): Session => ({
  uuid: record.uuid,
  fullname: record.fullname || record.username,
  isAdmin: record.is_admin,
  username: record.username,
  fileaccesskey: record.fileaccesskey,
});

/**
 * Signs in (POST /api/session: POST /auth's body and refusals, the session in the cookie):
 * the session, and whether its password expired (then sign-in keeps it only once a new one is set).
 */
export async function signIn(body: { username: string; password: string; code?: string }): Promise<{ session: Session; passwordExpired: boolean }> {
  const answer = await send('POST', '/api/session', body, undefined);
  if (answer.status !== 200) throw failure(answer);
  const record = (answer.body as { data: WebSessionBody }).data;
  return { session: sessionOf(record), passwordExpired: record.password_expired === true };
}

/**
 * Asks the store who this browser's session is (GET /api/session, with the cookie) and keeps
 * the answer: run at every load, so what localStorage says is confirmed (and the file access
 * key learned), or the session found ended (a 401: to sign-in).
 */
let confirming: Promise<void> | undefined;
export function confirmSession(): Promise<void> {
  confirming ??= (async () => {
    try {
      const record = await api<WebSessionBody>('GET', '/api/session');
      // A session waiting for its new password is not one the app works with: sign-in again.
      if (record.password_expired === true) {
        if (currentSession()) clearSession();
      } else saveSession(sessionOf(record));
    } catch {
      // A 401 ended the session already (api); anything else leaves it as it is until the next call.
    }
  })().finally(() => (confirming = undefined));
  return confirming;
}

// Signed in in another tab: this tab learns the session's file access key from the store.
onSessionChange(() => {
  const session = currentSession();
  if (session && session.fileaccesskey === undefined) void confirmSession();
});

/** POST /auth: the flat Session object, or an ApiError (never ends a session: there is none yet). */
export async function postAuth(body: { username: string; password: string; code?: string }): Promise<Record<string, unknown>> {
  const answer = await send('POST', '/auth', body, undefined);
  if (answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null) throw failure(answer);
  return answer.body as Record<string, unknown>;
}

/**
 * A call of the session (its cookie), or with `token` (a session the page opened by POST /auth
 * for a moment, not the app's); answers the envelope's `data`. A 401 ends the session unless
 * `token` was given.
 */
export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, token?: string): Promise<T> {
  const answer = await send(method, path, body, token);
  if (answer.status >= 200 && answer.status < 300) return (answer.body as { data?: T } | undefined)?.data as T;
  const error = failure(answer);
  if (answer.status === 401 && token === undefined && !signingOut) endSession(t.signIn.sessionEnded, true);
  return Promise.reject(error);
}

/** While signing out, calls still under way that get their 401 leave the ending to signOut. */
let signingOut = false;

/**
 * Ends the session in the store (GET /api/user/logout), then here. Signed out here whatever the
 * store answers: a token it no longer knows is ended already.
 */
export async function signOut(): Promise<void> {
  if (!currentSession()) return;
  signingOut = true;
  try {
    await api('GET', '/api/user/logout').catch(() => undefined);
  } finally {
    signingOut = false;
  }
  endSession(t.signIn.signedOut, false);
}

/** Words for a person, for an error of any call: ours by code where we have them, else the store's own. */
export function errorText(error: unknown): string {
  if (!(error instanceof ApiError)) return t.serverError;
  if (error.code === 'network') return t.networkError;
  if (error.code === 'password_expired') return t.passwordExpiredError;
  if (error.status >= 500 || error.message === '') return t.serverError;
  const field = error.field();
  const text = field ? error.message.slice(field.length + 2) : error.message;
  return text.charAt(0).toUpperCase() + text.slice(1) + (/[.!?]$/.test(text) ? '' : '.');
}

/** A wait in words: seconds below two minutes, minutes above. */
export function waitText(seconds: number): string {
  return seconds < 120 ? t.wait.seconds(Math.ceil(seconds)) : t.wait.minutes(Math.ceil(seconds / 60));
}

/** The bridge token of this tab's session and until when (page clock) it is used before a new one is asked for. */
let bridgeToken: { value: string; untilMs: number } | undefined;
let minting: Promise<string> | undefined;
onSessionChange(() => {
  if (!currentSession()) bridgeToken = undefined;
});

/**
 * The Authorization header the app's calls to the WebDAV bridge carry (tus uploads, OPTIONS, the
 * bridge's upload URL): every caller asks here, so how the app proves itself to the bridge is
 * decided in this one place. The bridge is another origin and never sees the store's cookie: the
 * store mints a token of the cookie's session for it (POST /api/session/bridge_token), valid 10
 * minutes and refused the moment the session ends; it is kept in this tab's memory only, and a
 * new one asked for two minutes before it runs out. Empty when there is no session (or none
 * could be minted: the bridge then refuses, as for no session).
 */
export async function bridgeAuthorization(): Promise<string> {
  if (!currentSession()) return '';
  if (bridgeToken && bridgeToken.untilMs > Date.now()) return `Bearer ${bridgeToken.value}`;
  minting ??= api<{ token: string; expires_in: number }>('POST', '/api/session/bridge_token')
    .then(({ token, expires_in }) => {
      bridgeToken = { value: token, untilMs: Date.now() + Math.max(0, expires_in - 120) * 1000 };
      return token;
    })
    .finally(() => (minting = undefined));
  try {
    return `Bearer ${await minting}`;
  } catch {
    return '';
  }
}

/** The session's key for SPEC's view/download paths (and the app's zip and thumbnail paths beside them). */
export function fileAccessKey(): string | undefined {
  return currentSession()?.fileaccesskey;
}
