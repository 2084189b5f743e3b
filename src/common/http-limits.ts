/**
 * Limits against slow and stalled clients, the same for the store's and the bridge's listeners
 * (HTTP and HTTPS): `http.headersTimeoutMs`, `http.requestTimeoutMs`, `http.idleTimeoutMs`
 * (docs/store-semantics.md "Slow clients"). Owns the server settings only; what a handler does
 * with a cut request (an upload is never committed half-written) is the handler's.
 *
 * - Headers must be complete within headersTimeoutMs of their first byte (Node's headersTimeout):
 *   headers trickled a byte at a time are answered 408 and cut.
 * - The whole request, headers and body, must arrive within requestTimeoutMs (Node's
 *   requestTimeout; 0 turns it off). Downloads do not count: it ends with the request's last byte.
 * - No byte in either direction for idleTimeoutMs (Node's socket timeout) cuts the connection
 *   when the client is the one stalling: a body that stops flowing, a response the client
 *   stops reading, an idle connection before its first request. A handler that is still working
 *   on a complete request (a large COPY, a slow store) is not cut: nothing is owed by the client.
 *   This is what nginx's client_body_timeout and send_timeout (60 s) and Apache's Timeout do.
 */
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export interface HttpLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  idleTimeoutMs: number;
}

/** Node checks headersTimeout and requestTimeout on an interval (30 s by default): a fraction of the smaller. */
function checkingIntervalOf(limits: HttpLimits): number {
  const bounds = [limits.headersTimeoutMs, limits.requestTimeoutMs].filter((ms) => ms > 0);
  if (bounds.length === 0) return 30_000;
  return Math.min(30_000, Math.max(50, Math.floor(Math.min(...bounds) / 4)));
}

/** Applies the limits to a server that has not started listening yet. */
export function applyHttpLimits(server: Server, limits: HttpLimits): void {
  server.headersTimeout = limits.headersTimeoutMs;
  server.requestTimeout = limits.requestTimeoutMs;
  // Read by Node when the server starts listening.
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = checkingIntervalOf(limits);
  server.timeout = limits.idleTimeoutMs;
  if (limits.idleTimeoutMs > 0) server.prependListener('request', watchIdleClient);
}

/**
 * A listener on the response's `timeout` replaces Node's default (destroy the socket on any
 * idleness), so the connection is cut only when the client is the one owing bytes. Without a
 * request in flight (before the first, between keep-alive requests) Node's default still applies.
 */
function watchIdleClient(req: IncomingMessage, res: ServerResponse): void {
  res.on('timeout', () => {
    const isBodyStalled = !req.complete;
    const isReadStalled = res.headersSent && (res.writableLength > 0 || req.socket.writableLength > 0);
    if (isBodyStalled || isReadStalled) req.socket.destroy();
  });
}
