/**
 * Two-factor authentication of the current user (edition 3.0 only): GET/POST /api/user/2fa.
 * Thin: parse, call ops/twofa.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { getTwofa, setTwofaState } from '../ops/twofa.js';

export async function twofaRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/user/2fa', async (request) => success('two-factor status', await getTwofa(ctx, callerOf(request))));

  app.post('/api/user/2fa', async (request) => {
    const status = await setTwofaState(ctx, callerOf(request), request.body);
    return success(status.twofa ? 'two-factor authentication enabled' : 'two-factor authentication disabled', status);
  });
}
