/**
 * Two-factor authentication of the current user (edition 3.0 only): GET/POST /api/user/2fa
 * (SPEC), and the extension's set-up in two steps and recovery codes (docs/extensions.md):
 * POST /api/user/2fa/setup, /api/user/2fa/confirm, /api/user/2fa/recovery_codes.
 * Thin: parse, call ops/twofa.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf, clientOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { confirmTwofaSetup, getTwofa, renewRecoveryCodes, setTwofaState, startTwofaSetup } from '../ops/twofa.js';

export async function twofaRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/user/2fa', async (request) => success('two-factor status', await getTwofa(ctx, callerOf(request))));

  app.post('/api/user/2fa', async (request) => {
    const status = await setTwofaState(ctx, callerOf(request), request.body, clientOf(ctx, request));
    return success(status.twofa ? 'two-factor authentication enabled' : 'two-factor authentication disabled', status);
  });

  app.post('/api/user/2fa/setup', async (request) =>
    success('two-factor set-up started: send a code of this secret to /api/user/2fa/confirm; two-factor authentication stays off until then', await startTwofaSetup(ctx, callerOf(request), request.body, clientOf(ctx, request))),
  );

  app.post('/api/user/2fa/confirm', async (request) =>
    success('two-factor authentication enabled; the recovery codes are shown only now', await confirmTwofaSetup(ctx, callerOf(request), request.body)),
  );

  app.post('/api/user/2fa/recovery_codes', async (request) =>
    success('new recovery codes; the old ones no longer work; they are shown only now', await renewRecoveryCodes(ctx, callerOf(request), request.body, clientOf(ctx, request))),
  );
}
