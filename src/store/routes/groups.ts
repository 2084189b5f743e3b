/**
 * Groups for members (docs/api.md "Groups for members", edition 3.0 only): the caller's groups, a
 * group's details and profile, members (routes/members.ts, door `groups`), tags and the WebDrive
 * endpoint; `pending_incoming` is routes/incoming.ts's. Thin: parse the path, call the
 * operation in ops/, write the envelope.
 */
import type { FastifyInstance } from 'fastify';
import { callerOf } from '../request-context.js';
import type { StoreContext } from '../context.js';
import { success } from '../envelope.js';
import { getGroupDetails, listMyGroups, updateGroupProfile } from '../ops/groups.js';
import { createTag, listTags } from '../ops/tags.js';
import { deleteGroupWebdrive, getGroupWebdrive, setGroupWebdrive } from '../ops/webdrive.js';
import { memberRoutes } from './members.js';
import { pathParam } from './params.js';

export async function groupRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  if (ctx.config.store.edition !== '3.0') return;
  const uuid = pathParam('group_uuid');

  app.get('/api/groups', async (request) => success('groups', await listMyGroups(ctx, callerOf(request), request.query)));

  app.get('/api/groups/:group_uuid', async (request) => success('group details', await getGroupDetails(ctx, callerOf(request), uuid(request))));

  app.put('/api/groups/:group_uuid', async (request) => {
    const update = await updateGroupProfile(ctx, callerOf(request), uuid(request), request.body);
    const sent = update.broadcastRecipients === undefined ? '' : `; message sent to ${update.broadcastRecipients} member(s)`;
    return success(`group updated${sent}`, update.details);
  });

  await memberRoutes(app, ctx, 'groups');

  app.get('/api/groups/:group_uuid/tags', async (request) => success('tags', await listTags(ctx, callerOf(request), uuid(request), request.query)));

  app.post('/api/groups/:group_uuid/tags', async (request) => success('tag created', await createTag(ctx, callerOf(request), uuid(request), request.body)));

  app.get('/api/groups/:group_uuid/webdrive', async (request) =>
    success('webdrive endpoint', await getGroupWebdrive(ctx, callerOf(request), uuid(request))),
  );

  app.post('/api/groups/:group_uuid/webdrive', async (request) =>
    success('webdrive endpoint saved', await setGroupWebdrive(ctx, callerOf(request), uuid(request), request.body)),
  );

  app.delete('/api/groups/:group_uuid/webdrive', async (request) => {
    const existed = await deleteGroupWebdrive(ctx, callerOf(request), uuid(request));
    return success(existed ? 'webdrive endpoint deleted' : 'no webdrive endpoint to delete');
  });
}
