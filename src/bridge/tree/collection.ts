/**
 * What every collection of the drive answers, made up or the store's: its children, a child by
 * name, and the resources of its members. Each kind of collection is its own class (root.ts,
 * webdrive.ts, groups.ts, versions.ts, store-folder.ts) and owns the ids it makes: a prefix
 * before the first `:` (namespace.ts, versions-view.ts), by which the resolver finds a
 * resource's kind (resolver.ts kindOf) instead of testing id strings one kind after another.
 * Kinds read (with the caller's session, through the listings cache); they never write.
 */
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import type { Listing } from '../metadata-cache.js';
import { topLevelOfId } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { childPath, folderKeyOf } from './paths.js';
import type { Resource } from './resource.js';

export interface Collection {
  /**
   * What the collection `id` of this kind holds, as listed (cached as its source allows).
   * `anyTree`: a listing whose folder entries' tree versions are outdated will do (metadata-cache.ts).
   */
  children(user: BridgeUser, id: NodeId, anyTree?: boolean): Promise<Listing>;
  /**
   * Its child named `name` (NFC), undefined when none. `through`: the walk goes on below it, so a
   * child whose id follows from its name alone may be answered without listing: a path deep in
   * `/home` costs no call for the levels above it.
   */
  child(user: BridgeUser, id: NodeId, name: string, through: boolean, anyTree?: boolean): Promise<NodeEntry | undefined>;
  /**
   * The resources of `entries`, members of `parent` (a collection of this kind). A Depth 1
   * PROPFIND builds one per entry, 10,000 in a big folder: a plain loop, no work per entry
   * beyond the entry's own.
   */
  members(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): Resource[];
}

/** A child as its collection lists it (what child() is for most kinds). */
export async function listedChild(collection: Pick<Collection, 'children'>, user: BridgeUser, id: NodeId, name: string, anyTree?: boolean): Promise<NodeEntry | undefined> {
  return (await collection.children(user, id, anyTree)).byName.get(name);
}

/** A member the bridge makes up (a collection of its own kind, a revision). */
export function madeUpMember(user: BridgeUser, parent: Resource, entry: NodeEntry): Resource {
  return { path: childPath(parent.path, entry.name), kind: 'virtual', entry, chain: [...parent.chain, folderKeyOf(user, entry.id)] };
}

/** A top-level folder as a member of the root, a mount point's collection or a group's. */
export function topMember(user: BridgeUser, parent: Resource, entry: NodeEntry): Resource {
  return {
    path: childPath(parent.path, entry.name),
    kind: 'top',
    entry,
    chain: [...parent.chain, folderKeyOf(user, entry.id)],
    top: { id: entry.id, name: topLevelOfId(entry.id) ?? 'home' },
  };
}
