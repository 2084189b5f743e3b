/**
 * The web app's session cookie and its CSRF rule (docs/security.md "Sessions of the web app"):
 * the app (src/web, served by this store on its origin) signs in through POST /api/session,
 * which sets the session's token in an HttpOnly, SameSite=Strict cookie (Secure when the store
 * is reached over TLS), so no page script can read it. The app's own calls then carry that
 * cookie instead of a bearer token, and every call the cookie authenticates must also
 *  - carry `X-Driveway-CSRF: 1`, a header no form, link or image can send and a cross-origin
 *    script cannot send without a CORS preflight the store never grants;
 *  - come from this origin: an `Origin` header, when sent, is the store's own (the origin the
 *    request reached, or `store.publicUrl`'s), and `Sec-Fetch-Site`, when sent, is `same-origin`.
 * A request with `Authorization` is never cookie-authenticated: bearer (SPEC) clients are
 * unchanged, and a browser page calling with a token it holds does not act for the cookie.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StoreContext } from './context.js';
import { forbidden } from './envelope.js';
import { requestOrigin } from './request-context.js';

export const SESSION_COOKIE = 'driveway_session';
export const CSRF_HEADER = 'x-driveway-csrf';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller was authenticated by the session cookie (app.ts), not by a bearer token. */
    viaCookie: boolean;
  }
}

/** The session cookie's value, when the request has one and no Authorization header (a bearer client is never cookie-authenticated). */
export function sessionCookieOf(request: FastifyRequest): string | undefined {
  if (request.headers.authorization !== undefined) return undefined;
  const header = request.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return value === '' ? undefined : value;
    }
  }
  return undefined;
}

/** Whether the caller reached the store over TLS (its own, or a trusted proxy's X-Forwarded-Proto, or a `publicUrl` of https). */
function overTls(ctx: StoreContext, request: FastifyRequest): boolean {
  return (ctx.config.store.publicUrl?.startsWith('https:') ?? false) || (requestOrigin(ctx, request)?.startsWith('https:') ?? false);
}

/** Sets the session cookie: the token, for `maxAgeSec` (the session's absolute lifetime). */
export function setSessionCookie(ctx: StoreContext, request: FastifyRequest, reply: FastifyReply, token: string, maxAgeSec: number): void {
  void reply.header('set-cookie', `${SESSION_COOKIE}=${token}; Path=/; Max-Age=${Math.max(0, Math.floor(maxAgeSec))}; HttpOnly; SameSite=Strict${overTls(ctx, request) ? '; Secure' : ''}`);
}

/** Removes the session cookie from the browser. */
export function clearSessionCookie(ctx: StoreContext, request: FastifyRequest, reply: FastifyReply): void {
  setSessionCookie(ctx, request, reply, '', 0);
}

/** The origins a cookie-authenticated call may come from: the one the request reached, and `store.publicUrl`'s. */
function ownOrigins(ctx: StoreContext, request: FastifyRequest): string[] {
  const origins: string[] = [];
  const reached = requestOrigin(ctx, request);
  if (reached) origins.push(reached);
  const configured = ctx.config.store.publicUrl;
  if (configured) {
    try {
      origins.push(new URL(configured).origin);
    } catch {
      // config.ts checked it: nothing to add.
    }
  }
  return origins;
}

/**
 * Refuses (403) a request of the web app's session that a page of another site could have
 * made: without the CSRF header, from another origin, or fetched cross-site. Called for every
 * cookie-authenticated call and for POST /api/session, before anything is done.
 */
export function refuseCrossSite(ctx: StoreContext, request: FastifyRequest): void {
  if (request.headers[CSRF_HEADER] !== '1') throw forbidden(`a call with the session cookie needs the header X-Driveway-CSRF: 1 (docs/api.md "Sessions of the web app")`);
  const origin = request.headers.origin;
  if (origin !== undefined && !ownOrigins(ctx, request).includes(origin)) throw forbidden('a call with the session cookie must come from the store\'s own origin');
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin') throw forbidden('a call with the session cookie must come from the store\'s own origin');
}
