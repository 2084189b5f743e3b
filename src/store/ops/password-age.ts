/**
 * Password age (config `store.passwordMaxAgeDays`, 0 = off; docs/store-semantics.md "Current
 * user"). A login with the right but expired password opens a restricted session: it may read
 * and update the profile (to set a new password) and log out, nothing else (403
 * `password_expired`). Sessions opened with an app password are never restricted: the rule is
 * about the account password. Every transport applies `refuseExpiredPassword` to every
 * operation except those three.
 */
import type { Config } from '../../common/config.js';
import type { StoreContext } from '../context.js';
import { forbidden } from '../envelope.js';
import type { AuthenticatedUser } from '../sessions.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** When a password set at `passwordChangedMs` expires; undefined while expiry is off. */
export function passwordExpiresMs(config: Config, passwordChangedMs: number): number | undefined {
  const days = config.store.passwordMaxAgeDays;
  return days > 0 ? passwordChangedMs + days * DAY_MS : undefined;
}

export function isPasswordExpired(ctx: StoreContext, passwordChangedMs: number): boolean {
  const expires = passwordExpiresMs(ctx.config, passwordChangedMs);
  return expires !== undefined && ctx.clock.now() >= expires;
}

/** Whether the session is restricted to setting a new password. */
export function isSessionRestricted(ctx: StoreContext, caller: AuthenticatedUser): boolean {
  return caller.appPasswordUuid === null && isPasswordExpired(ctx, caller.passwordChangedMs);
}

export function refuseExpiredPassword(ctx: StoreContext, caller: AuthenticatedUser): void {
  if (isSessionRestricted(ctx, caller)) {
    throw forbidden('your password has expired: set a new one with PUT /api/user {"password": ...}', 'password_expired');
  }
}
