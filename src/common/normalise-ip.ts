/**
 * One spelling per client address, for everything counted or compared by address (the store's
 * client address and trusted proxies, both listeners' connection cap). Knows nothing of HTTP.
 */

/** `::ffff:192.0.2.1` (an IPv4 peer of a dual-stack socket) is `192.0.2.1`; IPv6 in lower case. */
export function normaliseIp(address: string): string {
  const trimmed = address.trim();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(trimmed);
  return (mapped ? (mapped[1] as string) : trimmed).toLowerCase();
}
