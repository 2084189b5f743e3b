/**
 * The web app's session (an extension, 3.0 only: docs/extensions.md "Sessions of the web app";
 * the cookie and its CSRF rule are web-session.ts's):
 *  - POST /api/session signs in as POST /auth does (same body, same refusals: 2FA, limiter,
 *    history), sets the session cookie and answers the user's record without the token;
 *  - GET /api/session answers that record again for the session (after a reload);
 *  - POST /api/session/bridge_token mints a short-lived token of the cookie's session for the
 *    app's uploads to the WebDAV bridge, which cannot see the store's cookie.
 * Signing out is SPEC's GET /api/user/logout, which also clears the cookie (routes/auth.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { StoreContext } from '../context.js';
import { forbidden, success, unauthenticated } from '../envelope.js';
import { login } from '../ops/login.js';
import { isPasswordExpired } from '../ops/password-age.js';
import { callerOf, clientOf } from '../request-context.js';
import { signSessionToken, type AuthenticatedUser } from '../sessions.js';
import { sessionKeyOf } from '../storage/sessions.js';
import { getUserByUuid } from '../storage/users.js';
import type { WebSessionBody } from '../schemas/users.js';
import { refuseCrossSite, setSessionCookie } from '../web-session.js';
import { avatarUrl } from '../ops/avatars.js';

/** How long a bridge token lives (never past its session, and refused the moment it ends). */
export const BRIDGE_TOKEN_TTL_SEC = 600;

async function sessionRecord(ctx: StoreContext, caller: AuthenticatedUser): Promise<WebSessionBody> {
  const [user, session] = await Promise.all([getUserByUuid(ctx.storage.sql, caller.userUuid), sessionKeyOf(ctx.storage.sql, caller.sessionId)]);
  if (!user || !session) throw unauthenticated('invalid, expired or revoked session');
  const body: WebSessionBody = {
    uuid: user.uuid,
    username: user.username,
    fullname: user.fullname,
    is_admin: user.is_admin === 1,
    fileaccesskey: session.fileaccesskey,
    avatar: await avatarUrl(ctx, user.uuid),
  };
  if (caller.appPasswordUuid === null && isPasswordExpired(ctx, user.password_changed)) body.password_expired = true;
  return body;
}

export async function webSessionRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const { sessionTtlSec, webSessionIdleSec } = ctx.config.store;

  app.post('/api/session', async (request, reply) => {
    // A cross-site form could otherwise sign the browser in as someone else (login CSRF).
    refuseCrossSite(ctx, request);
    const { token, uuid, fullname, is_admin, fileaccesskey, avatar, password_expired } = await login(ctx, request.body, clientOf(ctx, request), { idleSec: webSessionIdleSec });
    setSessionCookie(ctx, request, reply, token, sessionTtlSec);
    const user = await getUserByUuid(ctx.storage.sql, uuid);
    const body: WebSessionBody = { uuid, username: user?.username ?? '', fullname, is_admin, fileaccesskey, avatar };
    if (password_expired) body.password_expired = true;
    return success('signed in', body);
  });

  app.get('/api/session', async (request) => success('session', await sessionRecord(ctx, callerOf(request))));

  app.post('/api/session/bridge_token', async (request) => {
    const caller = callerOf(request);
    // A bearer token minting itself a successor would outlive what it was given.
    if (!request.viaCookie) throw forbidden('bridge tokens are minted from the web app\'s session cookie only');
    const session = await sessionKeyOf(ctx.storage.sql, caller.sessionId);
    if (!session) throw unauthenticated('invalid, expired or revoked session');
    const minted = await signSessionToken(ctx.keys, ctx.clock, caller, Number(session.expires), BRIDGE_TOKEN_TTL_SEC);
    return success('bridge token', { token: minted.token, expires_in: Math.max(0, Math.floor((minted.expiresMs - ctx.clock.now()) / 1000)) });
  });
}
