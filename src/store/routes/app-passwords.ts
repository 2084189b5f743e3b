/**
 * App passwords of the current user (an extension, docs/extensions.md; edition 3.0 only):
 * GET/POST /api/user/app_passwords and DELETE /api/user/app_passwords/{uuid}. Thin: parse, call
 * ops/app-passwords.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { callerOf, clientOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { createAppPassword, deleteUserAppPassword, listUserAppPasswords } from '../ops/app-passwords.js';

const params = z.object({ uuid: z.string() });

export async function appPasswordRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/user/app_passwords', async (request) => success('app passwords', await listUserAppPasswords(ctx, callerOf(request))));

  app.post('/api/user/app_passwords', async (request) =>
    success('app password created; it is shown only now', await createAppPassword(ctx, callerOf(request), request.body, clientOf(ctx, request))),
  );

  app.delete('/api/user/app_passwords/:uuid', async (request) => {
    const parsed = params.safeParse(request.params);
    await deleteUserAppPassword(ctx, callerOf(request), parsed.success ? parsed.data.uuid : '', request.body, clientOf(ctx, request));
    return success('app password deleted; the sessions it opened are ended');
  });
}
