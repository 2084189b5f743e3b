/**
 * The bridge's own state a deleted resource takes with it (its locks; its dead properties and
 * client mtimes when it is gone for good): gathered before the store call, forgotten after it.
 * DELETE (delete.ts) and a COPY or MOVE that replaces its destination (destination.ts) both do
 * this; it sits below both so neither imports the other.
 */
import type { BridgeUser } from '../sessions.js';
import type { Resource } from '../store-tree.js';
import type { DavContext } from '../request/context.js';

/** Bounds the walk over cached listings when a subtree is deleted for good. */
const MAX_FORGOTTEN_KEYS = 10_000;

/** The bridge state a deleted resource takes with it. */
export interface DeletedState {
  /** Key of the resource: locks rooted there or below are dropped. */
  key: string;
  /** Keys whose dead properties and mtimes are dropped (empty unless deleted for good). */
  forGood: string[];
}

/**
 * What to forget when `resource` is deleted. Collect it before the store call: the deletion
 * makes the cached listings of the subtree stale. Descendants are found in cached listings
 * only (no store call); the properties of descendants in folders this bridge has not listed
 * recently stay in its file as orphans keyed by UUIDs that no longer exist.
 */
export function deletedStateOf(ctx: DavContext, user: BridgeUser, resource: Resource, options: { forGood?: boolean } = {}): DeletedState {
  const key = resource.chain[resource.chain.length - 1] as string;
  const inTrash = resource.top?.name === 'trash' && resource.kind === 'node';
  if (!inTrash && options.forGood !== true) return { key, forGood: [] };
  const { cache, tree } = ctx.services;
  const forGood = [key];
  const folders = resource.entry.kind === 'folder' ? [resource.entry.id] : [];
  while (folders.length > 0 && forGood.length < MAX_FORGOTTEN_KEYS) {
    const folder = folders.pop();
    if (folder === undefined) break;
    const listing = cache.listing(user.userId, tree.folderKey(user, folder));
    if (!listing) continue;
    for (const entry of listing.entries) {
      forGood.push(tree.folderKey(user, entry.id));
      if (entry.kind === 'folder') folders.push(entry.id);
    }
  }
  return { key, forGood };
}

/** After the store deleted the resource: drop its locks, and its properties when gone for good. */
export async function forgetDeleted(ctx: DavContext, state: DeletedState): Promise<void> {
  await ctx.services.locks.dropLocksUnder(state.key);
  await ctx.services.props.dropMany(state.forGood);
}
