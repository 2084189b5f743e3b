/**
 * The client address behind `store.trustedProxies` (exact addresses): the TCP peer, unless it is
 * a trusted proxy; then `X-Forwarded-For` read from its right end, each trusted hop vouching for
 * the one before it, and the first address no trusted proxy stands for is the client. Anyone
 * else's `X-Forwarded-For` is ignored, or any caller could pick the address a limit counts. The
 * store's (store/client-ip.ts) and the bridge's login flows' (nextcloud/login-flow.ts) alike.
 */
import { isIP } from 'node:net';
import { normaliseIp } from './normalise-ip.js';

export function clientIp(peer: string, forwardedFor: string | string[] | undefined, trustedProxies: readonly string[]): string {
  const trusted = new Set(trustedProxies.map(normaliseIp));
  let client = normaliseIp(peer);
  if (!trusted.has(client) || forwardedFor === undefined) return client;
  const hops = (Array.isArray(forwardedFor) ? forwardedFor.join(',') : forwardedFor).split(',').map(normaliseIp);
  for (let i = hops.length - 1; i >= 0; i -= 1) {
    const hop = hops[i] as string;
    // A hop that is no address was not written by a proxy we trust: stop at the last one we do.
    if (isIP(hop) === 0) return client;
    client = hop;
    if (!trusted.has(hop)) return client;
  }
  return client;
}

/**
 * The block a per-address bound counts: an IPv4 address itself, an IPv6 address's /64 (one
 * subscriber's network: whoever holds one holds all 2^64 of its addresses), written
 * `2001:db8:0:1::/64`. Anything else as it is.
 */
export function addressBlock(address: string): string {
  if (isIP(address) !== 6) return address;
  const [head = '', tail = ''] = address.toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === '' ? [] : tail.split(':');
  // An IPv4 tail (::ffff:1.2.3.4 and kin) fills two groups.
  const groups = address.includes('::') ? [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length - (right.at(-1)?.includes('.') ? 1 : 0))).fill('0'), ...right] : left;
  return `${groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
