/**
 * `GET /status.php`: how the Nextcloud and ownCloud clients find a server before anything else
 * (the desktop's CheckServerJob: the JSON must hold `installed`; its `version` decides whether the
 * client calls the server outdated: the desktop warns below 20, the Android app below 26).
 * Answered to anyone, credentials or not (the desktop sends its Basic credentials with it and
 * ignores a refusal; Nextcloud answers it whatever they are), so it costs no store call and no
 * login attempt. Only `/status.php`: the clients' fallbacks (`/nextcloud/status.php`,
 * `/owncloud/status.php`) are asked only after a 404 there, and answering them would move the
 * client's base URL under a prefix where nothing else is served (docs/client-quirks.md §7).
 */
import type { OcsValue } from './ocs-envelope.js';

/** The Nextcloud release driveway answers as: high enough that no current client warns. */
export const NEXTCLOUD_VERSION = { major: 30, minor: 0, micro: 0 } as const;
export const VERSION_STRING = `${NEXTCLOUD_VERSION.major}.${NEXTCLOUD_VERSION.minor}.${NEXTCLOUD_VERSION.micro}`;

export const PRODUCT_NAME = 'driveway';

export const STATUS_PATH = '/status.php';

/** The body of status.php (the same object ownCloud's capabilities carry as `core.status`). */
export function serverStatus(): { [key: string]: OcsValue } {
  return {
    installed: true,
    maintenance: false,
    needsDbUpgrade: false,
    version: `${VERSION_STRING}.0`,
    versionstring: VERSION_STRING,
    edition: '',
    productname: PRODUCT_NAME,
    extendedSupport: false,
  };
}

/** `version` as the OCS capabilities write it. */
export function ocsVersion(): { [key: string]: OcsValue } {
  return { ...NEXTCLOUD_VERSION, string: VERSION_STRING, edition: '', extendedSupport: false };
}
