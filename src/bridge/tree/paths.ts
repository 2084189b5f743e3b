/**
 * DAV paths as the bridge passes them between its parts: decoded, NFC, `/` the root, no trailing
 * slash; and the key a folder's listing, locks and dead properties hang on. Pure: no store calls.
 */
import type { NodeId } from '../../store-client/contract.js';
import { normalizeName } from '../href.js';
import type { FolderKey } from '../metadata-cache.js';
import { GROUPS, isTopLevelName, siblingTopId, TOP_LEVEL, WEBDRIVE } from '../namespace.js';

/** A decoded, NFC-normalised path: '/' is the root; no trailing slash otherwise. */
export type DavPath = string & { readonly brand: 'DavPath' };

export function toDavPath(segments: readonly string[]): DavPath {
  return `/${segments.map((s) => s.normalize('NFC')).join('/')}` as DavPath;
}

export function segmentsOf(path: DavPath): string[] {
  return path === '/' ? [] : path.slice(1).split('/');
}

export function parentOf(path: DavPath): DavPath {
  const segments = segmentsOf(path);
  return toDavPath(segments.slice(0, -1));
}

export function nameOf(path: DavPath): string {
  const segments = segmentsOf(path);
  return segments[segments.length - 1] ?? '';
}

/** The path of `name` listed in the collection at `parent`. */
export function childPath(parent: DavPath, name: string): DavPath {
  return ((parent === '/' ? '/' : `${parent}/`) + normalizeName(name)) as DavPath;
}

/**
 * Whether a path names something fixed, whatever exists there: the root, a top-level folder, or
 * a level of `/webdrive/<endpoint>` or `/groups/<name>/<top>`. Nothing is created, deleted,
 * moved or copied onto such a path.
 */
export function isFixedPath(path: DavPath): boolean {
  const segments = segmentsOf(path);
  const first = segments[0];
  if (first === undefined) return true;
  if (isTopLevelName(first)) return segments.length === 1;
  if (first === WEBDRIVE) return segments.length <= 2;
  if (first === GROUPS) return segments.length <= 3;
  return segments.length === 1;
}

/** Global key of a folder: bare top-level ids name a different folder per user. */
export function folderKeyOf(user: { readonly userId: string }, id: NodeId): FolderKey {
  return (TOP_LEVEL as readonly string[]).includes(id) ? `${id}:${user.userId}` : id;
}

/** The key of the trash beside top-level folder `topId` (the caller's own when none): what a removal outdates. */
export function trashKeyOf(user: { readonly userId: string }, topId: NodeId | undefined): FolderKey {
  return folderKeyOf(user, siblingTopId(topId ?? ('home' as NodeId), 'trash'));
}
