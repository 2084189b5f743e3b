/**
 * The spaces of `/remote.php/dav/<space>/<user>/` the bridge serves (remote-dav.ts maps the
 * URL): each space is one entry, its method -> handler table. `files` is the drive itself (every
 * verb, hrefs under the space's prefix); `uploads` is Nextcloud chunking (uploads/nextcloud.ts); `tus` holds
 * tus uploads, created by a POST to a drive folder (uploads/tus.ts);
 * `versions` and `trashbin` are Nextcloud's restore endpoints (nextcloud-restore.ts).
 * A method a space lacks is 405; an unknown space 404.
 */
import { NEXTCLOUD_RESTORE_SPACES } from './nextcloud-restore.js';
import { nextcloudUploadHandlers } from './uploads/nextcloud.js';
import { tusHandlers } from './uploads/tus.js';
import type { VerbHandler } from './request/context.js';
import { driveHandlers } from './handlers.js';

export const REMOTE_SPACES: Readonly<Record<string, Readonly<Record<string, VerbHandler>>>> = {
  files: driveHandlers,
  uploads: nextcloudUploadHandlers,
  tus: tusHandlers,
  ...NEXTCLOUD_RESTORE_SPACES,
};

export const REMOTE_SPACE_NAMES: ReadonlySet<string> = new Set(Object.keys(REMOTE_SPACES));
