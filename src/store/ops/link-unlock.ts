/**
 * The unlock cookie of a password link (docs/security.md "Share links"): the app's link page
 * asks for the password in the page (POST /public/{token}/unlock), never through the browser's
 * Basic box, and the answer is a cookie that opens that link only, for UNLOCK_SEC:
 *   driveway_link=v1.<kid>.<expires ms>.<HMAC-SHA256>; Path=/public/<token>; HttpOnly; SameSite=Strict[; Secure]
 * The MAC (a session signing key of the store's key ring, sessions.ts, so every instance checks
 * it) covers the share's uuid, the expiry and the link's current password hash: a new password,
 * a removed password or a removed link ends it, and it never opens another link.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { StoreContext } from '../context.js';
import type { OpenedLink } from './public-links.js';

export const UNLOCK_COOKIE = 'driveway_link';
/** How long an unlock lasts: an hour, then the page asks again. */
export const UNLOCK_SEC = 3600;

function mac(secret: Uint8Array, link: OpenedLink, kid: string, expires: number): string {
  return createHmac('sha256', secret).update(`driveway link unlock\n${kid}\n${link.share.uuid}\n${expires}\n${link.share.password_hash ?? ''}`).digest('base64url');
}

/** The cookie's value for `link`, signed with the ring's signing key, valid UNLOCK_SEC from now. */
export async function unlockCookieValue(ctx: StoreContext, link: OpenedLink): Promise<string> {
  const key = await ctx.keys.signing();
  const expires = ctx.clock.now() + UNLOCK_SEC * 1000;
  return `v1.${key.kid}.${expires}.${mac(key.secret, link, key.kid, expires)}`;
}

/** The Set-Cookie header that unlocks `token`'s link (its path only); `secure` where the caller came over TLS. */
export function unlockCookieHeader(token: string, value: string, secure: boolean): string {
  return `${UNLOCK_COOKIE}=${value}; Path=/public/${token}; Max-Age=${UNLOCK_SEC}; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

/** The values of our cookie in a Cookie header (a browser sends only the one of this link's path, but any may be tried). */
function cookieValues(header: string | undefined): string[] {
  if (!header) return [];
  return header
    .split(';')
    .map((pair) => pair.trim())
    .filter((pair) => pair.startsWith(`${UNLOCK_COOKIE}=`))
    .map((pair) => pair.slice(UNLOCK_COOKIE.length + 1))
    .slice(0, 4);
}

/** Whether `cookieHeader` holds a valid, unexpired unlock of `link` under its current password. */
export async function isUnlocked(ctx: StoreContext, link: OpenedLink, cookieHeader: string | undefined): Promise<boolean> {
  if (link.share.password_hash === null) return true;
  for (const value of cookieValues(cookieHeader)) {
    const match = /^v1\.([A-Za-z0-9_-]{1,64})\.(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(value);
    if (!match) continue;
    const [, kid, expiresText, given] = match as unknown as [string, string, string, string];
    const expires = Number(expiresText);
    if (ctx.clock.now() >= expires) continue;
    const secret = await ctx.keys.verifying(kid);
    if (!secret) continue;
    const expected = Buffer.from(mac(secret, link, kid, expires));
    if (timingSafeEqual(expected, Buffer.from(given))) return true;
  }
  return false;
}
