/**
 * SPEC "Nodes": POST /api/nodes/{node_uuid} (new_dir, new_name, starred, copy_to, move_to),
 * DELETE, details, path, dirlist and myaccess (3.0 only). Every identifier, targets included,
 * goes through resolveNode, so a node the caller may not see answers 404 exactly like an
 * unknown one. A move or copy to another owner (between a user's tree and a group's, or two
 * groups) also passes assertMayLeaveOwner. The tree rules live in db/tree.ts; this file
 * validates, resolves and answers. Upload (routes/upload.ts) and share_copy_with
 * (TODO(#sharing)) are not here.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { StoreContext } from '../context.js';
import { callerOf } from '../app.js';
import { assertMayLeaveOwner, permissionsOn, resolveNode } from '../access.js';
import { ancestry, publicId, type NodeRow } from '../db/nodes.js';
import {
  copyInto,
  createFolder,
  isInTrash,
  listChildrenWithStars,
  listFavorites,
  moveInto,
  purge,
  rename,
  setStarred,
  trash,
  type ListedNode,
  type TreeWrite,
} from '../db/tree.js';
import { conflict, invalid, success } from '../envelope.js';
import { assertValidName } from '../names.js';
import { removeBlobFiles } from '../ops/blob-files.js';
import type { AuthenticatedUser } from '../sessions.js';
import { nodeParamsSchema, parseNodeOperation, type DirEntry, type NodeDetails, type PathEntry } from '../schemas/nodes.js';

function nodeIdOf(request: FastifyRequest): string {
  const parsed = nodeParamsSchema.safeParse(request.params);
  if (!parsed.success) throw invalid('the node identifier is missing');
  return parsed.data.id;
}

function toDirEntry(node: ListedNode, callerUuid: string): DirEntry {
  const isFile = node.type === 'File';
  const entry: DirEntry = {
    uuid: publicId(node, callerUuid),
    name: node.name,
    type: node.type,
    is_starred: node.is_starred,
    public_shares: 0,
    private_shares: 0,
    comment_count: 0,
    size: isFile ? node.size : 0,
    updated: node.updated,
  };
  if (isFile && node.revision !== null) entry.revision = node.revision;
  return entry;
}

/** The user's full name, or the group's name. */
function ownerFullname(ctx: StoreContext, node: NodeRow): string {
  const sql = node.owner_type === 'Group' ? 'SELECT name AS fullname FROM groups WHERE uuid = ?' : 'SELECT fullname FROM users WHERE uuid = ?';
  const row = ctx.db.prepare(sql).get(node.owner_uuid) as { fullname: string } | undefined;
  return row?.fullname ?? '';
}

function listFolder(ctx: StoreContext, caller: AuthenticatedUser, folder: NodeRow): DirEntry[] {
  if (folder.type !== 'Dir') throw conflict('the node is not a folder', 'not_a_folder');
  const { db } = ctx;
  switch (folder.top_kind) {
    case 'favorites':
      return listFavorites(db, folder.owner_uuid, caller.userUuid)
        .filter((node) => permissionsOn(db, caller, node).includes('read'))
        .map((node) => toDirEntry({ ...node, is_starred: true }, caller.userUuid));
    case 'public_shares':
    case 'private_shares':
    case 'shared_with_you':
      // Sharing is a later issue (TODO(#sharing)); until then nothing is shared, so these are empty.
      return [];
    default:
      return listChildrenWithStars(db, folder.uuid, caller.userUuid).map((node) => toDirEntry(node, caller.userUuid));
  }
}

export async function nodeRoutes(app: FastifyInstance, ctx: StoreContext): Promise<void> {
  const { db, clock } = ctx;
  const writeOf = (caller: AuthenticatedUser): TreeWrite => ({ db, now: clock.now(), callerUuid: caller.userUuid });

  app.post('/api/nodes/:id', async (request, reply) => {
    const caller = callerOf(request);
    const id = nodeIdOf(request);
    // Validate the body before resolving anything: a bad body answers 400 whether or not the
    // node exists, so validation never reveals existence.
    const parsed = parseNodeOperation(request.body);
    if (!parsed.ok) throw invalid(parsed.problem);
    const operation = parsed.operation;
    switch (operation.op) {
      case 'newDir': {
        const name = assertValidName(operation.name);
        createFolder(writeOf(caller), resolveNode(db, caller, id, 'write'), name);
        break;
      }
      case 'rename': {
        const name = assertValidName(operation.name);
        rename(writeOf(caller), resolveNode(db, caller, id, 'write'), name);
        break;
      }
      case 'star':
        setStarred(writeOf(caller), resolveNode(db, caller, id, 'read'), operation.starred);
        break;
      case 'copyTo': {
        const source = resolveNode(db, caller, id, 'read');
        const target = resolveNode(db, caller, operation.target, 'write');
        assertMayLeaveOwner(db, caller, source, target, 'copy');
        copyInto(writeOf(caller), source, target);
        break;
      }
      case 'moveTo': {
        const source = resolveNode(db, caller, id, 'write');
        const target = resolveNode(db, caller, operation.target, 'write');
        assertMayLeaveOwner(db, caller, source, target, 'move');
        moveInto(writeOf(caller), source, target);
        break;
      }
    }
    return reply.code(204).send();
  });

  app.delete('/api/nodes/:id', async (request, reply) => {
    const caller = callerOf(request);
    const node = resolveNode(db, caller, nodeIdOf(request), 'delete');
    if (node.top_kind === null && isInTrash(db, node)) {
      const unreferenced = purge(writeOf(caller), node);
      await removeBlobFiles(ctx, unreferenced);
    } else {
      trash(writeOf(caller), node);
    }
    return reply.code(204).send();
  });

  app.get('/api/nodes/:id', async (request) => {
    const caller = callerOf(request);
    const node = resolveNode(db, caller, nodeIdOf(request), 'read');
    const details: NodeDetails = {
      name: node.name,
      type: node.type,
      uuid: publicId(node, caller.userUuid),
      owner_type: node.owner_type,
      owner_uuid: node.owner_uuid,
      owner_fullname: ownerFullname(ctx, node),
      created: node.created,
      updated: node.updated,
    };
    return success('node details', details);
  });

  app.get('/api/nodes/:id/path', async (request) => {
    const caller = callerOf(request);
    const node = resolveNode(db, caller, nodeIdOf(request), 'read');
    const entries: PathEntry[] = ancestry(db, node).map((row) => ({ name: row.name, uuid: publicId(row, caller.userUuid) }));
    return success('node path', entries);
  });

  app.get('/api/nodes/:id/dirlist', async (request) => {
    const caller = callerOf(request);
    const folder = resolveNode(db, caller, nodeIdOf(request), 'read');
    return success('folder listing', listFolder(ctx, caller, folder));
  });

  if (ctx.config.store.edition === '3.0') {
    app.get('/api/nodes/:id/myaccess', async (request) => {
      const caller = callerOf(request);
      // Any node the caller sees, even without `read`: the answer says what they may do.
      const node = resolveNode(db, caller, nodeIdOf(request), 'visible');
      return success('access permissions', permissionsOn(db, caller, node));
    });
  }
}
