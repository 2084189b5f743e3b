/**
 * The names of the part of the drive that the bridge makes up rather than lists from the store:
 * the root, `/webdrive/` (mount points named by WebDrive endpoints) and `/groups/` (one
 * collection per group of the caller, each holding the group's top-level folders), and the ids
 * the bridge gives them. What each collection holds, and how a path walks through it, is its
 * kind's (tree/root.ts, tree/webdrive.ts, tree/groups.ts): they learn endpoints and groups only
 * through the interface with the caller's own session, so an endpoint or group the caller may
 * not see simply does not exist here (404, nothing revealed). Pure: no store calls.
 *
 * A server without these endpoints (edition 1.0, or one that lacks groups) gets no `groups`
 * collection and an empty `/webdrive/`: nothing here is required of a foreign server.
 *
 * Made-up collections have ids that are also their lock keys: `webdrive:<user>`,
 * `groups:<user>`, `group:<group uuid>` (never a store id: those are UUIDs or `<top>:<uuid>`).
 *
 * The other made-up names, each with its own module:
 * - `/versions/` (versions-view.ts, tree/versions.ts): every kept revision, mirroring the drive,
 *   read-only; listed in the root for Finder and Explorer only.
 * - `/restore/<name>` (RESTORE below, verbs/move.ts): never listed, only a MOVE's Destination,
 *   which puts a trash entry back where it was deleted from.
 * - `/remote.php/dav/versions/` and `/remote.php/dav/trashbin/` (nextcloud-restore.ts):
 *   Nextcloud's names for the same two things.
 */
import type { GroupEntry, NodeEntry, NodeId } from '../store-client/contract.js';
import { groupFolderNames } from '../shared/group-folder-names.js';

export const TOP_LEVEL = ['home', 'incoming', 'trash', 'public_shares', 'private_shares', 'favorites', 'shared_with_you'] as const;
export type TopLevelName = (typeof TOP_LEVEL)[number];

/**
 * Top-level folders whose entries are derived from other folders, not stored in them: the
 * caller's starred nodes, the owner's nodes with links or private shares, the nodes shared with
 * the caller. An entry there is a node that lives elsewhere (often another owner's), so the
 * bridge never deletes, moves, locks or patches through such an entry or folder (docs/bridge-design.md).
 */
export const DERIVED_VIEWS: ReadonlySet<TopLevelName> = new Set(['favorites', 'public_shares', 'private_shares', 'shared_with_you']);

export const WEBDRIVE = 'webdrive';
/**
 * `/restore/<any name>`: the Destination of a MOVE that puts a trash entry back where it was
 * deleted from (Nextcloud's `trashbin/<user>/restore/<name>`); nothing is ever there to list.
 */
export const RESTORE = 'restore';
export const GROUPS = 'groups';

export function isTopLevelName(name: string): name is TopLevelName {
  return (TOP_LEVEL as readonly string[]).includes(name);
}

/** The top-level folder an id names: `home` for `home` and `home:<owner>`; undefined for a UUID. */
export function topLevelOfId(id: string): TopLevelName | undefined {
  const name = id.split(':', 1)[0] as string;
  return isTopLevelName(name) ? name : undefined;
}

/** The id of another top-level folder of the same owner: `trash` for `home`, `trash:<g>` for `home:<g>`. */
export function siblingTopId(topId: NodeId, top: TopLevelName): NodeId {
  const colon = topId.indexOf(':');
  return (colon === -1 ? top : `${top}${topId.slice(colon)}`) as NodeId;
}

/** Id prefixes of the made-up collections (each kind owns its own: tree/collection.ts). */
export const WEBDRIVE_PREFIX = 'webdrive:';
export const GROUPS_PREFIX = 'groups:';
export const GROUP_PREFIX = 'group:';

/** The root's lock key: the root is the bridge's own, one per user. */
export function rootKey(userId: string): string {
  return `root:${userId}`;
}

export function webdriveId(userId: string): NodeId {
  return `${WEBDRIVE_PREFIX}${userId}` as NodeId;
}

export function groupsId(userId: string): NodeId {
  return `${GROUPS_PREFIX}${userId}` as NodeId;
}

/** The id of `/groups/<name>/`, the collection of a group's top-level folders. */
export function groupCollectionId(groupId: string): NodeId {
  return `${GROUP_PREFIX}${groupId}` as NodeId;
}

/** The group a top-level id belongs to (`home:<group>`); undefined for the caller's own (`home`). */
export function groupOfTop(topId: string | undefined): string | undefined {
  const colon = topId?.indexOf(':') ?? -1;
  return colon === -1 ? undefined : topId?.slice(colon + 1);
}

/** A collection's entry: virtual collections and top-level folders carry no size or star. */
export function folder(id: string, name: string, updatedMs = 0): NodeEntry {
  return { id: id as NodeId, name, kind: 'folder', sizeBytes: 0, updatedMs, isStarred: false };
}

/**
 * Each group's collection name under `/groups/` (src/shared/group-folder-names.ts, which the web
 * app calls too): a safe path segment of at most 240 bytes; names equal ignoring case get the
 * group UUID's first 8 characters appended, so every group keeps a stable, distinct name.
 */
export function groupSegments(groups: readonly GroupEntry[]): Map<string, GroupEntry> {
  return groupFolderNames(groups, (g) => ({ id: g.id, name: g.name }));
}
