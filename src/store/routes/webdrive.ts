/**
 * WebDrive endpoint routes (edition 3.0 only): the current user's (docs/api.md "Current user").
 * Thin: parse, call the operation in ops/webdrive.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { deleteUserWebdrive, getUserWebdrive, setUserWebdrive } from '../ops/webdrive.js';

export async function webdriveRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;

  app.get('/api/user/webdrive', async (request) => success('webdrive endpoint', await getUserWebdrive(ctx, callerOf(request))));

  app.post('/api/user/webdrive', async (request) => success('webdrive endpoint saved', await setUserWebdrive(ctx, callerOf(request), request.body)));

  app.delete('/api/user/webdrive', async (request) => {
    const existed = await deleteUserWebdrive(ctx, callerOf(request));
    return success(existed ? 'webdrive endpoint deleted' : 'no webdrive endpoint to delete');
  });
}
