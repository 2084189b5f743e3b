/**
 * Login (POST /auth, both editions) and logout (GET /api/user/logout, 3.0 only: edition 1.0
 * has no /api/user). Owns the failed-login limiter and the login/logout events. Must not
 * reveal which of username, password or account state was wrong, and must never log or
 * record a password, token or fileaccesskey.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../app.js';
import type { StoreContext } from '../context.js';
import { getUserByUsername, recordLoginEvent } from '../db/users.js';
import { invalid, StoreHttpError, success, unauthenticated } from '../envelope.js';
import { LoginLimiter } from '../login-limiter.js';
import { avatarUrl } from '../ops/avatars.js';
import { generatePassword, hashPassword, verifyPassword } from '../passwords.js';
import { firstIssue, loginBodySchema, logoutQuerySchema, type SessionBody } from '../schemas/users.js';
import { issueSession, revokeSession } from '../sessions.js';

const BAD_CREDENTIALS = 'wrong username or password';

export async function authRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  const { db, keys, clock, config } = ctx;
  const limiter = new LoginLimiter({
    clock,
    maxFailures: config.store.loginMaxFailures,
    windowSec: config.store.loginWindowSec,
  });

  // An unknown username must cost as much as a real one at the configured cost, or the answer time tells which usernames exist. Made once here
  // so that not even the first unknown username pays for its creation.
  const unknownUserHash = await hashPassword(generatePassword(), config.store.scryptCost);

  app.post('/auth', async (request) => {
    const parsed = loginBodySchema.safeParse(request.body);
    if (!parsed.success) throw invalid(firstIssue(parsed.error));
    const { username, password } = parsed.data;
    const ip = request.ip;

    const verdict = limiter.check(username, ip);
    if (!verdict.allowed) {
      recordLoginEvent(db, {
        userUuid: getUserByUsername(db, username)?.uuid,
        action: 'login',
        status: 'failure',
        errorDetails: 'rate limited',
        ip,
        timestampMs: clock.now(),
      });
      throw new StoreHttpError(429, 'rate_limited', 'too many failed logins; try again later', {
        'Retry-After': String(verdict.retryAfterSec),
      });
    }

    const user = getUserByUsername(db, username);
    const passwordOk = await verifyPassword(password, user?.password_hash ?? unknownUserHash);
    if (!user || !passwordOk || user.is_active !== 1) {
      limiter.recordFailure(username, ip);
      recordLoginEvent(db, {
        userUuid: user?.uuid,
        action: 'login',
        status: 'failure',
        errorDetails: !user ? 'unknown user' : !passwordOk ? 'wrong password' : 'inactive account',
        ip,
        timestampMs: clock.now(),
      });
      throw unauthenticated(BAD_CREDENTIALS);
    }

    limiter.recordSuccess(username);
    const session = await issueSession(db, keys, clock, user.uuid, config.store.sessionTtlSec, ip);
    recordLoginEvent(db, { userUuid: user.uuid, action: 'login', status: 'success', ip, timestampMs: clock.now() });
    const body: SessionBody = {
      uuid: user.uuid,
      token: session.token,
      status: 'success',
      msg: 'logged in',
      is_admin: user.is_admin === 1,
      fullname: user.fullname,
      fileaccesskey: session.fileaccesskey,
      avatar: avatarUrl(ctx, user.uuid),
    };
    return body;
  });

  if (config.store.edition !== '3.0') return;

  app.get('/api/user/logout', async (request) => {
    const caller = callerOf(request);
    const query = logoutQuerySchema.safeParse(request.query);
    if (!query.success) throw invalid(firstIssue(query.error));
    db.transaction(() => {
      revokeSession(db, clock, caller.sessionId);
      recordLoginEvent(db, { userUuid: caller.userUuid, action: 'logout', status: 'success', ip: request.ip, timestampMs: clock.now() });
    })();
    return success('logged out');
  });
}
