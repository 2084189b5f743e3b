/**
 * The one way the app calls the store's REST API (docs/api.md; the app is a client like any
 * other): JSON in, the envelope's `data` out, every failure an ApiError with the store's `code`
 * and words for a person (errorText). A 401 on a signed-in call means the session ended: the
 * session is dropped and the person goes to sign-in, and comes back here afterwards.
 */
import { navigate } from '../router.js';
import { clearSession, currentSession } from '../session.js';
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

interface RawAnswer {
  status: number;
  body: unknown;
  headers: Headers;
}

async function send(method: string, path: string, body: unknown, token: string | undefined): Promise<RawAnswer> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  let response: Response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
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

/** POST /auth: the flat Session object, or an ApiError (never ends a session: there is none yet). */
export async function postAuth(body: { username: string; password: string; code?: string }): Promise<Record<string, unknown>> {
  const answer = await send('POST', '/auth', body, undefined);
  if (answer.status !== 200 || typeof answer.body !== 'object' || answer.body === null) throw failure(answer);
  return answer.body as Record<string, unknown>;
}

/**
 * A call with the session's token (or `token`, for the password change before the session is
 * kept); answers the envelope's `data`. A 401 ends the session unless `token` was given.
 */
export async function api<T>(method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, body?: unknown, token?: string): Promise<T> {
  const bearer = token ?? currentSession()?.token;
  const answer = await send(method, path, body, bearer);
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
  const session = currentSession();
  if (!session) return;
  signingOut = true;
  try {
    await api('GET', '/api/user/logout', undefined, session.token).catch(() => undefined);
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

/**
 * The Authorization header the app's calls to the WebDAV bridge carry (tus uploads, OPTIONS, the
 * bridge's upload URL): every caller asks here, so how the app proves itself to the bridge is
 * decided in this one place. Empty when there is no session.
 */
export async function bridgeAuthorization(): Promise<string> {
  const token = currentSession()?.token;
  return token ? `Bearer ${token}` : '';
}

/** The session's key for SPEC's view/download paths (and the app's zip and thumbnail paths beside them). */
export function fileAccessKey(): string | undefined {
  return currentSession()?.fileaccesskey;
}
