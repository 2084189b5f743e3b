/**
 * Share links (docs/extensions.md "Share links and private shares", edition 3.0):
 *   POST   /api/nodes/{uuid}/shares   create a public link, private share or upload link
 *   GET    /api/nodes/{uuid}/shares   the node's shares
 *   GET    /api/shares                the shares the caller made
 *   PUT    /api/shares/{share_uuid}   change a link's password, expiry, public or upload
 *   DELETE /api/shares/{share_uuid}   remove one
 * Thin: parse the path, call ops/shares.ts, write the envelope. The links themselves are
 * served by routes/public.ts.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf, requestOrigin } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { createShare, listMyShares, listNodeShares, removeShare, updateShare } from '../ops/shares.js';
import { pathParam } from './params.js';

export async function shareRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const node = pathParam('id');
  const share = pathParam('share_uuid');

  app.post('/api/nodes/:id/shares', async (request, reply) => {
    const created = await createShare(ctx, callerOf(request), node(request), request.body);
    // Without store.publicUrl the link is a path: made absolute from where the caller reached us.
    if (typeof created.url === 'string' && created.url.startsWith('/')) {
      const origin = requestOrigin(ctx, request);
      if (origin) created.url = origin + created.url;
    }
    // Waiting for an approver: 202, as share_copy_with answers then.
    if ('pending_uuid' in created) return reply.code(202).send(success('the share awaits approval', created));
    return success('share created', created);
  });

  app.get('/api/nodes/:id/shares', async (request) => success('shares of the node', await listNodeShares(ctx, callerOf(request), node(request))));

  app.get('/api/shares', async (request) => success('your shares', await listMyShares(ctx, callerOf(request))));

  app.put('/api/shares/:share_uuid', async (request) => success('share changed', await updateShare(ctx, callerOf(request), share(request), request.body)));

  app.delete('/api/shares/:share_uuid', async (request) => {
    await removeShare(ctx, callerOf(request), share(request));
    return success('share removed');
  });
}
