/**
 * Pending incoming shares (edition 3.0): GET/PUT /api/user/pending_incoming and
 * /api/groups/{group_uuid}/pending_incoming. Thin: parse the path, call ops/incoming.ts, write
 * the envelope. Edition 1.0 has no pending lists: share_copy_with delivers into `incoming` there.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { answerGroupIncoming, answerUserIncoming, listGroupIncoming, listUserIncoming } from '../ops/incoming.js';
import { pathParam } from './params.js';

export async function incomingRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const group = pathParam('group_uuid');

  app.get('/api/user/pending_incoming', async (request) => success('pending incoming shares', await listUserIncoming(ctx, callerOf(request))));

  app.put('/api/user/pending_incoming', async (request) => {
    const answer = await answerUserIncoming(ctx, callerOf(request), request.body);
    return success(`incoming share ${answer.state}`, answer);
  });

  app.get('/api/groups/:group_uuid/pending_incoming', async (request) =>
    success('pending incoming shares', await listGroupIncoming(ctx, callerOf(request), group(request))),
  );

  app.put('/api/groups/:group_uuid/pending_incoming', async (request) => {
    const answer = await answerGroupIncoming(ctx, callerOf(request), group(request), request.body);
    return success(`incoming share ${answer.state}`, answer);
  });
}
