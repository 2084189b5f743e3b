/**
 * The one log line of a refused login, whatever the door, for operators and fail2ban: info
 * level, no stack, never the secret. As pino writes it (one JSON object per line, the message
 * last):
 *   {"level":30,"time":…,"pid":…,…,"door":"dav","user":"a@x.org","ip":"203.0.113.9","reason":"rate limited","msg":"login failed"}
 * `door` is `api` (POST /auth), `dav` (Basic auth through the bridge) or `link` (a link's
 * password; `user` is then the link's share id). docs/security.md has the fail2ban filter.
 */
import type { Logger } from './logger.js';

export type LoginDoor = 'api' | 'dav' | 'link';

export const LOGIN_FAILED = 'login failed';

export function logFailedLogin(log: Logger, door: LoginDoor, user: string, ip: string, reason: string): void {
  log.info({ door, user, ip, reason }, LOGIN_FAILED);
}
