/**
 * Who is calling: the client address the store records (login history, sessions) and limits
 * logins by. The TCP peer is the client unless it is one of `store.trustedProxies` (exact
 * addresses, e.g. a bridge run with `--only bridge`); then `X-Forwarded-For` is read from its
 * right end, each trusted hop vouching for the one before it, and the first address no trusted
 * proxy stands for is the client. Anyone else's `X-Forwarded-For` is ignored, or any caller
 * could pick the address the rate limit counts. Knows nothing of fastify.
 */
import { normaliseIp } from '../common/normalise-ip.js';

export { normaliseIp };
export { clientIp } from '../common/client-ip.js';

export interface ClientInfo {
  ip: string;
  /** The `User-Agent` header, when one was sent. */
  userAgent?: string;
  /** An in-process relay (the bridge) logs in for this client and logs a refusal itself. */
  relayed?: boolean;
}

/** Keeps what a login history line may show of a `User-Agent`: printable, at most 100 characters. */
export function userAgentOf(header: string | string[] | undefined): string | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.replace(/[^\x20-\x7e]/g, '').trim();
  return value ? value.slice(0, 100) : undefined;
}
