/**
 * Login (POST /auth, both editions) and logout (GET /api/user/logout, 3.0 only: edition 1.0
 * has no /api/user). Thin: the client's address and agent, then ops/login.ts.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf, clientOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { login, logout } from '../ops/login.js';
import { clearSessionCookie } from '../web-session.js';

export async function authRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  app.post('/auth', async (request) => login(ctx, request.body, clientOf(ctx, request)));

  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/user/logout', async (request, reply) => {
    await logout(ctx, callerOf(request), request.query, clientOf(ctx, request));
    // The web app's session (web-session.ts) leaves the browser too; a bearer logout leaves its cookie alone.
    if (request.viaCookie) clearSessionCookie(ctx, request, reply);
    return success('logged out');
  });
}
