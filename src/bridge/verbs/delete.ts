/**
 * DELETE (RFC 4918 §9.6): removes a resource, a collection with its whole subtree (the store
 * deletes the subtree in one call). Outside `/trash` the store moves it into the trash; inside
 * `/trash` it is deleted for good. What happens is the store's decision; the bridge only keeps
 * its own state in step: locks on and below the resource go (§9.6.1), and dead properties and
 * client mtimes go when the resource is gone for good (the store says so: docs/extensions.md;
 * a store that does not say is taken to delete for good inside `/trash` only). A node moved into
 * the trash keeps its UUID, so its properties stay with it for a restore.
 *
 * An entry listed directly in a derived view (`/favorites/x`, `/shared_with_you/x`,
 * `/public_shares/x`, `/private_shares/x`) is never deleted: see removeFromView.
 */
import { DavStatusError } from '../dav-errors.js';
import { isDerivedViewEntry, type Resource } from '../store-tree.js';
import type { DavContext, VerbHandler } from '../request/context.js';
import { deletedStateOf, forgetDeleted } from './deleted-state.js';
import { isRestoredBackup } from './rename-away.js';
import { sendEmpty } from '../request/respond.js';
import { checkHttpConditions, checkIfHeader, checkWrite, requirePrivilege, STORE_GUARDS, writeTargetOf, type WriteTarget } from '../request/preconditions.js';

/**
 * 204 on success; 404 when nothing is there; 403 for the root and the top-level folders; 400
 * for a collection with a Depth other than infinity (§9.6.1); 412/423 from the If header and
 * locks (every lock below a collection needs its token: §9.6.1, litmus locks).
 */
export const del: VerbHandler = async (ctx) => {
  const user = ctx.user();
  const target = await writeTargetOf(ctx, ctx.path);
  const resource = target.resource;
  // Word deletes the backup of a save by rename-away, which went back to its name: done already.
  if (await isRestoredBackup(ctx, target)) {
    sendEmpty(ctx, 204);
    return;
  }
  if (!resource) throw new DavStatusError(404, 'nothing to delete here');
  if (resource.kind !== 'node') throw new DavStatusError(403, 'the root and the top-level folders cannot be deleted');
  if (isDerivedViewEntry(resource)) {
    await removeFromView(ctx, target);
    return;
  }
  const isCollection = resource.entry.kind === 'folder';
  const rawDepth = ctx.req.headers.depth;
  const depth = Array.isArray(rawDepth) ? rawDepth.join(', ') : rawDepth;
  if (isCollection && depth !== undefined && depth.trim().toLowerCase() !== 'infinity') {
    throw new DavStatusError(400, 'DELETE of a collection must have Depth: infinity');
  }
  await requirePrivilege(ctx, resource, 'delete', STORE_GUARDS);
  await checkWrite(ctx, target, { includeDescendants: isCollection });
  // What goes if the store deletes it for good (in trash, or below a "delete for good" folder,
  // which only the store knows): gathered now, while the subtree's listings are cached.
  const purged = deletedStateOf(ctx, user, resource, { forGood: true });
  const removal = await ctx.services.tree.remove(user, resource, { withTwin: true });
  const inTrash = resource.top?.name === 'trash';
  await forgetDeleted(ctx, (removal.forGood ?? inTrash) ? purged : { key: purged.key, forGood: [] });
  sendEmpty(ctx, 204);
};

/**
 * DELETE of an entry listed directly in a derived view (issue 14, item 9: derived views never
 * destroy): the node lives elsewhere, often another owner's. In `favorites` the caller's star
 * goes and the node stays (204). Elsewhere (`shared_with_you`: only the owner ends a share;
 * `public_shares`, `private_shares`: a link or share, once removed, cannot be made again with the
 * same token) 403, nothing changes. Locks do not stop it: the node itself is not written.
 */
async function removeFromView(ctx: DavContext, target: WriteTarget): Promise<void> {
  const resource = target.resource as Resource;
  if (resource.top?.name !== 'favorites') {
    throw new DavStatusError(403, `an entry of ${resource.top?.name ?? 'this view'} is someone's node shown here: it is not deleted through the view`);
  }
  await checkIfHeader(ctx, target);
  checkHttpConditions(ctx, target);
  await ctx.services.tree.unstar(ctx.user(), resource, ctx.signal);
  sendEmpty(ctx, 204);
}
