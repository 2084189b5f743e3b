/**
 * oc:permissions, the letters Nextcloud's and ownCloud's clients read of what the caller may do
 * (PROPFIND answers them, verbs/propfind.ts; a bulk upload's answer per file, uploads/bulk.ts).
 */
import { DERIVED_VIEWS } from './namespace.js';
import type { Privilege, Resource } from './store-tree.js';

/**
 * ownCloud's permission letters for what the caller may do, with Nextcloud's meanings (its
 * DavUtil::getDavPermissions; the desktop's RemotePermissions reads them): S reached through a
 * share (what was shared with the caller: Nextcloud's isShared), R may share it on (Grants.mayShare),
 * M mounted (a drive's root, and everything in a group's drive: not the caller's own storage), D
 * delete, N rename and V move (both need `write` here), W write a file's content, C and K create
 * files and folders in a folder. A drive's root is never deleted, renamed or moved (no D, N, V);
 * the root and the made-up collections above the drives hold no letter at all, so a sync client
 * creates nothing there (docs/client-quirks.md "The client's view").
 */
export function ocPermissions(resource: Resource, granted: ReadonlySet<Privilege>, mayShare: boolean): string {
  if (resource.kind === 'root' || resource.kind === 'virtual') return '';
  let letters = '';
  if (resource.shareRoot !== undefined) letters += 'S';
  if (mayShare) letters += 'R';
  if (isMountRoot(resource) || (resource.top?.id.includes(':') === true && !isDerivedViewTop(resource))) letters += 'M';
  const top = resource.kind === 'top';
  if (granted.has('delete') && !top) letters += 'D';
  if (granted.has('write') && !top) letters += 'NV';
  if (granted.has('write')) letters += resource.entry.kind === 'file' ? 'W' : 'CK';
  return letters;
}

/** A resource in a derived view (favorites, link lists, shared_with_you): its entries live in other drives. */
function isDerivedViewTop(resource: Resource): boolean {
  return resource.top !== undefined && DERIVED_VIEWS.has(resource.top.name);
}

/** A drive's root (a top-level folder that holds what it lists: not a derived view): nc:is-mount-root. */
export function isMountRoot(resource: Resource): boolean {
  return resource.kind === 'top' && !isDerivedViewTop(resource);
}
