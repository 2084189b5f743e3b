/**
 * docs/api.md "Nodes" over HTTP: POST /api/nodes/{node_uuid}, DELETE, details, path, dirlist and
 * myaccess, revisions (3.0 only: list, restore, a new revision from another file: ops/revise.ts),
 * restore from trash and the "delete for good" mark (3.0 only: ops/trash.ts). Thin: the path's identifier, then ops/nodes.ts, then the envelope (204
 * for the operations and DELETE; 202 with `pending_uuid` for a share_copy_with that waits for an
 * approver). Upload is routes/upload.ts.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { StoreContext } from '../context.js';
import { callerOf } from '../request-context.js';
import { invalid, success } from '../envelope.js';
import { deleteNode, listFolder, myAccess, nodeDetails, nodeDetailsByFileId, nodeOperation, nodePath } from '../ops/nodes.js';
import { listRevisionsOf, reviseFrom } from '../ops/revise.js';
import { restoreFromTrash, setSkipTrashOf } from '../ops/trash.js';
import { searchDrives } from '../ops/search.js';
import { fileIdParamsSchema, nodeParamsSchema } from '../schemas/nodes.js';
import { MAC_SIDE_FILES_HEADER } from '../../common/side-files.js';
import { DELETED_HEADER } from '../../store-client/nodes.js';

function nodeIdOf(request: FastifyRequest): string {
  const parsed = nodeParamsSchema.safeParse(request.params);
  if (!parsed.success) throw invalid('the node identifier is missing');
  return parsed.data.id;
}

export async function nodeRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  app.post('/api/nodes/:id', async (request, reply) => {
    const { pendingUuid } = await nodeOperation(ctx, callerOf(request), nodeIdOf(request), request.body);
    if (pendingUuid !== undefined) return reply.code(202).send(success('the share awaits approval', { pending_uuid: pendingUuid }));
    return reply.code(204).send();
  });

  app.delete('/api/nodes/:id', async (request, reply) => {
    const outcome = await deleteNode(ctx, callerOf(request), nodeIdOf(request));
    // An extension (docs/extensions.md): whether the node went to the trash or is gone for good.
    return reply.code(204).header(DELETED_HEADER, outcome === 'purged' ? 'for-good' : 'trash').send();
  });

  app.get('/api/nodes/:id', async (request) => success('node details', await nodeDetails(ctx, callerOf(request), nodeIdOf(request))));

  // An extension (docs/extensions.md "Numeric file ids"): node details by the numeric id.
  app.get('/api/nodes/by-file-id/:file_id', async (request) => {
    const parsed = fileIdParamsSchema.safeParse(request.params);
    if (!parsed.success) throw invalid('the file id must be a positive integer');
    return success('node details', await nodeDetailsByFileId(ctx, callerOf(request), parsed.data.file_id));
  });

  app.get('/api/nodes/:id/path', async (request) => success('node path', await nodePath(ctx, callerOf(request), nodeIdOf(request))));

  app.get('/api/nodes/:id/dirlist', async (request) =>
    success('folder listing', await listFolder(ctx, callerOf(request), nodeIdOf(request), { macSideFiles: request.headers[MAC_SIDE_FILES_HEADER] === '1' })));

  if (ctx.config.store.edition === '3.0') {
    app.get('/api/nodes/:id/myaccess', async (request) => success('access permissions', await myAccess(ctx, callerOf(request), nodeIdOf(request))));
    app.post('/api/nodes/:id/revisions', async (request) => success('revision added', await reviseFrom(ctx, callerOf(request), nodeIdOf(request), request.body)));
    app.get('/api/nodes/:id/revisions', async (request) => success('revisions', await listRevisionsOf(ctx, callerOf(request), nodeIdOf(request))));
    app.post('/api/nodes/:id/restore', async (request) => success('node restored', await restoreFromTrash(ctx, callerOf(request), nodeIdOf(request))));
    // An extension (docs/extensions.md "Search"): POST, as the query is a JSON body.
    app.post('/api/search', async (request) => success('search results', await searchDrives(ctx, callerOf(request), request.body)));
    app.put('/api/nodes/:id/skip_trash', async (request) => success('trash setting saved', await setSkipTrashOf(ctx, callerOf(request), nodeIdOf(request), request.body)));
  }
}
