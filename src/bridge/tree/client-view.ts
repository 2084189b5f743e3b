/**
 * The client's view of the drive: what `/remote.php/dav/files/<user>/` and `/remote.php/webdav/`
 * show (BridgeUser.clientView), the part of the drive a sync client (the Nextcloud and ownCloud
 * desktop and mobile apps, rclone's nextcloud and owncloud vendors) should sync, named as the
 * bridge's own paths name it, so a path under the view is the same path under `/`:
 * - `home/` and `incoming/` (the copies accepted), the caller's two drives;
 * - `groups/<name>/home/` and `groups/<name>/incoming/`, each group's drives.
 * Nothing else: no trash (a sync client would download it and upload what it deletes there), no
 * `/versions/`, no derived views (favorites, link lists, `shared_with_you`: each entry is a node
 * already in a drive, so it would come down twice), no `/webdrive/` mount points (every drive
 * again). Those stay on `/` and in Nextcloud's trashbin and versions spaces. A name outside the
 * view is not there at all: 404 to every verb, as for a name that never existed.
 * The levels above the drives are fixed: nothing new is created there (docs/client-quirks.md
 * "The client's view"). Pure: no store calls.
 */
import type { NodeEntry } from '../../store-client/contract.js';
import { GROUP_PREFIX, GROUPS } from '../namespace.js';
import type { BridgeUser } from '../sessions.js';
import type { Resource } from './resource.js';

/** The drives of an owner, the caller's or a group's, as their top-level folders are named. */
export const VIEW_DRIVES: ReadonlySet<string> = new Set(['home', 'incoming']);
const VIEW_ROOT: ReadonlySet<string> = new Set([...VIEW_DRIVES, GROUPS]);

/** What `parent` may show of its members in `user`'s view; undefined when it shows them all. */
function shownIn(parent: Resource): ReadonlySet<string> | undefined {
  if (parent.kind === 'root') return VIEW_ROOT;
  if (parent.kind === 'virtual' && parent.entry.id.startsWith(GROUP_PREFIX)) return VIEW_DRIVES;
  return undefined;
}

/** Whether `parent`'s member `name` is in `user`'s view (always, outside the client's view). */
export function inClientView(user: BridgeUser, parent: Resource, name: string): boolean {
  return user.clientView !== true || (shownIn(parent)?.has(name) ?? true);
}

/** `parent`'s members `entries` as `user`'s view shows them. */
export function clientViewOf(user: BridgeUser, parent: Resource, entries: readonly NodeEntry[]): readonly NodeEntry[] {
  const shown = user.clientView === true ? shownIn(parent) : undefined;
  return shown ? entries.filter((e) => shown.has(e.name)) : entries;
}
