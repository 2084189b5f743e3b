/**
 * Login (POST /auth, both editions) and logout (GET /api/user/logout, 3.0): credentials (the
 * account password, or an app password in its place), the second factor, the failed-login
 * limiter, the login history and the session. docs/store-semantics.md "Users and sessions" and
 * "Current user" say what each answer means. Must not reveal which of username, password or
 * account state was wrong, nor that 2FA is on before the password is right; must never log or
 * record a password, code, token or fileaccesskey.
 */
import { logFailedLogin } from '../../common/login-log.js';
import { withSql } from '../context.js';
import type { StoreContext } from '../context.js';
import {
  appPasswordOf,
  touchAppPassword,
  recordLoginEvent,
  type LoginAction,
  type LoginStatus,
  getUserByUsername,
  getUserByUuid,
  setTwofaLastStep,
  countUnusedRecoveryCodes,
  hasUnusedRecoveryCode,
  useRecoveryCode,
} from '../storage/users.js';
import { StoreHttpError, unauthenticated } from '../envelope.js';
import type { ClientInfo } from '../client-ip.js';
import { verifyPassword } from '../passwords.js';
import { loginBodySchema, logoutQuerySchema, type SessionBody } from '../schemas/users.js';
import { insertSession, revokeSession, signSession, type AuthenticatedUser } from '../sessions.js';
import { avatarUrl } from './avatars.js';
import { matchAppPassword } from './app-passwords.js';
import { parseInput } from './input.js';
import { isPasswordExpired } from './password-age.js';
import { recoveryCodeHash } from './recovery-codes.js';
import { checkTwofaCode } from './totp.js';

const BAD_CREDENTIALS = 'wrong username or password';

/** `action_args` of a history line: how the user got in, and with what client. Never a secret. */
function describe(client: ClientInfo, how?: string): string {
  return [how, client.userAgent && `client: ${client.userAgent}`].filter(Boolean).join('; ');
}

async function record(
  ctx: StoreContext,
  client: ClientInfo,
  event: { userUuid: string | undefined; action?: LoginAction; status: LoginStatus; how?: string; error?: string },
): Promise<void> {
  await recordLoginEvent(
    ctx.storage.sql,
    {
      userUuid: event.userUuid,
      action: event.action ?? 'login',
      status: event.status,
      actionArgs: describe(client, event.how),
      errorDetails: event.error,
      ip: client.ip,
      timestampMs: ctx.clock.now(),
    },
    ctx.config.store.loginHistoryPerUser,
  );
}

/**
 * Checks the login body and opens a session. Throws 400 for a malformed body (not counted),
 * 429 `rate_limited` while the limiter blocks, 401 `unauthenticated` for wrong credentials,
 * 401 `twofa_required` (not counted) and `twofa_invalid` (counted) for the second factor.
 * The attempt is counted before the password is checked (login-limiter.ts), so parallel
 * guesses never get more checks than the limit; a refusal is logged as one info line
 * (login-log.ts) unless an in-process relay logs it itself. `idleSec`: the session is the web
 * app's (routes/web-session.ts) and also ends after that long unused.
 */
export async function login(ctx: StoreContext, body: unknown, client: ClientInfo, options: { idleSec?: number } = {}): Promise<SessionBody> {
  const { username, password, code } = parseInput(loginBodySchema, body);
  const { storage: { sql }, clock, config, loginLimiter: limiter } = ctx;
  const logRefusal = (reason: string): void => {
    if (!client.relayed) logFailedLogin(ctx.log, 'api', username, client.ip, reason);
  };

  const reservation = await limiter.reserve(username, client.ip);
  if (!reservation.allowed) {
    await record(ctx, client, { userUuid: (await getUserByUsername(sql, username))?.uuid, status: 'failure', error: 'rate limited' });
    logRefusal('rate limited');
    throw new StoreHttpError(429, 'rate_limited', 'too many failed logins; try again later', { 'Retry-After': String(reservation.retryAfterSec) });
  }
  const { attempt } = reservation;
  try {
    return await verifiedLogin();
  } finally {
    // Whatever went wrong without settling the attempt (a failure of our own) keeps it counted.
    await attempt.failed();
  }

  async function verifiedLogin(): Promise<SessionBody> {
    const refuse = async (userUuid: string | undefined, error: string): Promise<StoreHttpError> => {
      await attempt.failed();
      await record(ctx, client, { userUuid, status: 'failure', error });
      logRefusal(error);
      return unauthenticated(BAD_CREDENTIALS);
    };

    const user = await getUserByUsername(sql, username);
    // An app password is random: a hash lookup finds it, and scrypt is for the account password.
    const app = user ? (await matchAppPassword(sql, user.uuid, password)) : undefined;
    const passwordOk = app !== undefined || (await verifyPassword(password, user?.password_hash ?? ctx.unknownUserHash));
    if (!user) throw await refuse(undefined, 'unknown user');
    if (!passwordOk) throw await refuse(user.uuid, 'wrong password');
    if (user.is_active !== 1) throw await refuse(user.uuid, 'inactive account');
    const signed = await signSession(ctx.keys, clock, user.uuid, config.store.sessionTtlSec);

    // Nothing awaits from here on but a recovery code's lookup: the state read now (2FA, replay
    // guard, the app password) is the state the session is stored against, with no other request
    // in between; a recovery code is spent in the transaction below, where a race has one winner.
    const fresh = await getUserByUuid(sql, user.uuid);
    if (!fresh || fresh.is_active !== 1) throw await refuse(user.uuid, 'inactive account');
    const stillValid = app ? (await appPasswordOf(sql, user.uuid, app.uuid)) !== undefined : fresh.password_hash === user.password_hash;
    if (!stillValid) throw await refuse(user.uuid, app ? 'revoked app password' : 'wrong password');

    let how = app ? `app password "${app.name}"` : 'password';
    let step: number | undefined;
    let recovery: string | undefined;
    const refuseCode = async (error: string): Promise<StoreHttpError> => {
      await attempt.failed();
      await record(ctx, client, { userUuid: user.uuid, status: 'failure', how, error });
      logRefusal(error);
      return new StoreHttpError(401, 'twofa_invalid', 'the two-factor code in the field "code" is wrong or was already used; a new code (or an unused recovery code) is needed');
    };
    if (!app && fresh.twofa === 1 && fresh.twofa_secret !== null) {
      if (code === undefined || code.trim() === '') {
        // Not counted as a failure: the password was right, the client only has to ask for the code.
        await attempt.released();
        await record(ctx, client, { userUuid: user.uuid, status: 'failure', how, error: 'two-factor code required' });
        throw new StoreHttpError(401, 'twofa_required', 'a two-factor code is needed: send the 6-digit code of your authenticator app (or an unused recovery code) in the field "code" of the login body');
      }
      // A recovery code (16 letters) in place of the TOTP code (6 digits): used once, counted when wrong.
      recovery = recoveryCodeHash(code);
      if (recovery !== undefined) {
        how = 'password and recovery code';
        if (!(await hasUnusedRecoveryCode(sql, user.uuid, recovery))) throw await refuseCode('wrong or used recovery code');
      } else {
        how = 'password and two-factor code';
        const checked = checkTwofaCode(fresh.twofa_secret, code, clock.now(), fresh.twofa_last_step);
        if (!checked.ok) throw await refuseCode(checked.reason === 'replayed' ? 'two-factor code already used' : 'wrong two-factor code');
        step = checked.step;
      }
    }
    const expired = !app && isPasswordExpired(ctx, fresh.password_changed);

    const stored = await sql.transaction(async (tx) => {
      const txCtx = withSql(ctx, tx);
      if (step !== undefined) await setTwofaLastStep(tx, user.uuid, step);
      // The one place a recovery code is spent: of two logins racing with it, one changes the row.
      if (recovery !== undefined) {
        if (!(await useRecoveryCode(tx, user.uuid, recovery, clock.now()))) return false;
        how = `${how} (${await countUnusedRecoveryCodes(tx, user.uuid)} left)`;
      }
      await insertSession(tx, signed, { ip: client.ip, ...(app ? { appPasswordUuid: app.uuid } : {}), ...(options.idleSec === undefined ? {} : { idleSec: options.idleSec }) });
      if (app) await touchAppPassword(tx, app.uuid, clock.now());
      await record(txCtx, client, { userUuid: user.uuid, status: 'success', how: expired ? `${how} (expired)` : how });
      return true;
    });
    if (!stored) throw await refuseCode('wrong or used recovery code');
    await attempt.succeeded();

    const session: SessionBody = {
      uuid: user.uuid,
      token: signed.token,
      status: 'success',
      msg: expired ? 'logged in; the password has expired: set a new one' : 'logged in',
      is_admin: fresh.is_admin === 1,
      fullname: fresh.fullname,
      fileaccesskey: signed.fileaccesskey,
      avatar: await avatarUrl(ctx, user.uuid),
    };
    if (expired) session.password_expired = true;
    return session;
  }
}

/** Ends the caller's session (its token and fileaccesskey) and records the logout. */
export async function logout(ctx: StoreContext, caller: AuthenticatedUser, query: unknown, client: ClientInfo): Promise<void> {
  parseInput(logoutQuerySchema, query);
  await ctx.storage.sql.transaction(async (tx) => {
    const txCtx = withSql(ctx, tx);
    await revokeSession(tx, ctx.clock, caller.sessionId);
    await record(txCtx, client, { userUuid: caller.userUuid, action: 'logout', status: 'success' });
  });
}
