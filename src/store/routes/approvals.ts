/**
 * Share approval (docs/api.md "Share approval", edition 3.0): approvers of user and group workspaces
 * (administrators), the approvers' pending list and decision, the requester's list and
 * withdrawal. Thin: parse the path, call ops/approvals.ts, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import {
  addApprover,
  approvalsOf,
  decideShare,
  listApprovers,
  listMyPendingShares,
  listPendingShares,
  removeApprover,
  withdrawShare,
  type WorkspaceDoor,
} from '../ops/approvals.js';
import { pathParam } from './params.js';

export async function approvalRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const workspace = pathParam('workspace_uuid');
  const approver = pathParam('approver_uuid');
  const type = pathParam('type');
  const pending = pathParam('pending_uuid');
  const node = pathParam('id');

  for (const door of ['users', 'groups'] as WorkspaceDoor[]) {
    const base = `/api/admin/${door}/:workspace_uuid/approvers`;
    app.get(base, async (request) => success('approvers', await listApprovers(ctx, callerOf(request), door, workspace(request))));
    app.post(base, async (request) => success('approver added', await addApprover(ctx, callerOf(request), door, workspace(request), request.body)));
    app.delete(`${base}/:approver_uuid/:type`, async (request) => {
      await removeApprover(ctx, callerOf(request), door, workspace(request), approver(request), type(request));
      return success('approver removed');
    });
  }

  app.get('/api/nodes/:id/approvals', async (request) => success('approvals', await approvalsOf(ctx, callerOf(request), node(request))));

  app.get('/api/pending_shares', async (request) => success('pending share requests', await listPendingShares(ctx, callerOf(request))));

  app.put('/api/pending_shares/:pending_uuid/approval', async (request) => {
    const record = await decideShare(ctx, callerOf(request), pending(request), request.body);
    return success(`share request ${record.state}`, record);
  });

  app.get('/api/my_pending_shares', async (request) => success('your share requests', await listMyPendingShares(ctx, callerOf(request))));

  app.delete('/api/my_pending_shares/:pending_uuid', async (request) =>
    success('share request withdrawn', await withdrawShare(ctx, callerOf(request), pending(request))),
  );
}
