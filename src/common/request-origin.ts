/**
 * Where a caller reached a listener, as `scheme://host[:port]`, for answers that must carry an
 * absolute URL when no public URL is configured (the store's share links, the bridge's tus
 * `Location`): the request's scheme and Host; X-Forwarded-Proto and X-Forwarded-Host only when the
 * peer is one of `store.trustedProxies` (anyone else could point those URLs elsewhere). A Host that
 * is not a name or address with a port (`user@elsewhere`, a path) is no origin at all.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { normaliseIp } from './normalise-ip.js';

/** What a Host or X-Forwarded-Host may hold: a name or address and a port, nothing else. */
const HOST_HEADER = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export interface OriginRequest {
  headers: IncomingHttpHeaders;
  socket: { remoteAddress?: string | undefined; encrypted?: boolean };
}

/** The caller's origin, or undefined when the Host is missing or malformed. */
export function requestOrigin(trustedProxies: readonly string[], request: OriginRequest): string | undefined {
  const trusted = trustedProxies.map(normaliseIp).includes(normaliseIp(request.socket.remoteAddress ?? ''));
  const first = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
  const forwardedProto = trusted ? first(request.headers['x-forwarded-proto'])?.toLowerCase() : undefined;
  const scheme = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : request.socket.encrypted ? 'https' : 'http';
  const host = (trusted ? first(request.headers['x-forwarded-host']) : undefined) ?? first(request.headers.host);
  return host && HOST_HEADER.test(host) ? `${scheme}://${host}` : undefined;
}
