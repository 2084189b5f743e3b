/**
 * What a route knows of its request beyond fastify's: the caller the onRequest hook of app.ts
 * authenticated, where the caller is and how it reached the store. Below app.ts, which sets
 * these, and the routes, which read them, so neither imports the other.
 */
import type { FastifyRequest } from 'fastify';
import { requestOrigin as originOfRequest } from '../common/request-origin.js';
import { clientIp, userAgentOf, type ClientInfo } from './client-ip.js';
import type { StoreContext } from './context.js';
import { unauthenticated } from './envelope.js';
import type { AuthenticatedUser } from './sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller: AuthenticatedUser | null;
    /** The database's change count when the request arrived (durability.ts). */
    changesMark: number;
  }
}

/** The authenticated caller of an /api request (the onRequest hook guarantees one). */
export function callerOf(request: FastifyRequest): AuthenticatedUser {
  if (!request.caller) throw unauthenticated();
  return request.caller;
}

/** The caller's address (X-Forwarded-For only from `store.trustedProxies`) and User-Agent. */
export function clientOf(ctx: StoreContext, request: FastifyRequest): ClientInfo {
  const ip = clientIp(request.ip, request.headers['x-forwarded-for'], ctx.config.store.trustedProxies);
  const userAgent = userAgentOf(request.headers['user-agent']);
  return userAgent === undefined ? { ip } : { ip, userAgent };
}

/**
 * Where the caller reached the store, for absolute link URLs when `store.publicUrl` is unset
 * (common/request-origin.ts): X-Forwarded-* only from `store.trustedProxies`. Undefined when the
 * Host is missing or malformed: the link then stays a path.
 */
export function requestOrigin(ctx: StoreContext, request: FastifyRequest): string | undefined {
  return originOfRequest(ctx.config.store.trustedProxies, request.raw);
}
