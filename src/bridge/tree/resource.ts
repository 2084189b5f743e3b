/**
 * A resource: what a DAV path resolved to (tree/resolver.ts), with what the bridge decides by:
 * its kind, the top-level folder it lies in, the keys its locks and dead properties hang on.
 * Pure: no store calls.
 */
import type { NodeEntry, NodeId } from '../../store-client/contract.js';
import { DavStatusError } from '../dav-errors.js';
import type { FolderKey } from '../metadata-cache.js';
import { DERIVED_VIEWS, groupOfTop, type TopLevelName } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import { isMacSideFile } from '../../common/side-files.js';
import type { DavPath } from './paths.js';

/**
 * `root`: `/`. `virtual`: a collection the bridge makes up (`/webdrive/`, `/groups/`,
 * `/groups/<name>/`, `/versions/...`). `top`: a top-level folder of the caller or of a group, also
 * when mounted as `/webdrive/<endpoint>/`. `node`: anything the store lists below those.
 */
export type ResourceKind = 'root' | 'virtual' | 'top' | 'node';

export interface Resource {
  path: DavPath;
  kind: ResourceKind;
  entry: NodeEntry;
  /** Folder holding it (absent for the root, virtual collections and the top-level folders). */
  parent?: { id: NodeId; key: FolderKey };
  /** Global keys from the root down to this resource: what locks and dead properties hang on. */
  chain: string[];
  /** The top-level folder it lies in (itself for a top-level folder): `home`, or `home:<group>`. */
  top?: { id: NodeId; name: TopLevelName };
  /**
   * Below `shared_with_you`: the shared node it is (or lies in), whose myaccess says what the
   * user may do here (a private share grants read, or read and write), not the user's own tree.
   */
  shareRoot?: NodeId;
}

/** A derived view itself (`/favorites/`, `/shared_with_you/`, a group's): its content lives elsewhere. */
export function isDerivedView(resource: Resource): boolean {
  return resource.kind === 'top' && resource.top !== undefined && DERIVED_VIEWS.has(resource.top.name);
}

/**
 * An entry listed directly in a derived view (a starred node, a shared node, a node with links):
 * someone's node shown here, not held here. Members below such an entry are ordinary nodes.
 */
export function isDerivedViewEntry(resource: Resource): boolean {
  return resource.kind === 'node' && resource.top !== undefined && DERIVED_VIEWS.has(resource.top.name) && resource.parent?.id === resource.top.id;
}

/**
 * Whose budget the bridge's own data about `resource` (dead properties) counts against: the
 * owner of the tree it lies in when the path names it (the caller's own tree: the caller; a
 * group's `…:<group>`: the group), else (reached through a private share: the path does not name
 * the sharer) the caller writing.
 */
export function budgetOwnerOf(user: BridgeUser, resource: Resource): string {
  if (resource.shareRoot !== undefined) return user.userId;
  return groupOfTop(resource.top?.id) ?? user.userId;
}

/** A side file hidden from this request's client (BridgeUser.hidesMacSideFiles). */
export function hiddenFrom(user: BridgeUser, entry: NodeEntry): boolean {
  return user.hidesMacSideFiles === true && entry.kind === 'file' && isMacSideFile(entry.name);
}

/** What the tree answers for a write onto the root, a top-level folder or a made-up collection. */
export function fixedPathRefused(): DavStatusError {
  return new DavStatusError(403, 'top-level folders are fixed');
}
