/**
 * How `nextcloudcmd` 3.7 and `owncloudcmd` 2.11 (Debian's nextcloud-desktop-cmd and
 * owncloud-client-cmd) are run for one sync: their arguments and a fresh HOME. Free of vitest and
 * of src/, so the sync bench (bench/sync.ts) runs the clients exactly as the suites do.
 * - nextcloudcmd takes the server's base URL and refuses one containing /dav or /webdav;
 *   `--path` names the remote folder below `remote.php/dav/files/<user id>/`.
 * - owncloudcmd takes one URL, the WebDAV URL of the remote folder:
 *   `<base>/remote.php/webdav/<folder>`; what precedes `remote.php/webdav/` is the server.
 * - Debian's owncloud-client-cmd ships no system exclude list and aborts without one ("Cannot
 *   load system exclude list"): it gets a list of the editor leftovers ownCloud's own list starts with.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const SYNC_CLIENTS = ['nextcloudcmd', 'owncloudcmd'] as const;
export type SyncClientName = (typeof SYNC_CLIENTS)[number];

/** The first patterns of ownCloud's default exclude list (editors' lock and backup files). */
const OWNCLOUD_EXCLUDES = '*~\n~$*\n.~lock.*\n~*.tmp\n*.part\n';

export interface SyncAccount {
  /** The address a person types into the client: the bridge's base URL, no trailing slash. */
  serverUrl: string;
  login: string;
  /** The account's password or an app password. */
  password: string;
}

/** The arguments of one sync of `localDir` with `remoteFolder` ('/home', '/groups/x/home', '/' for the view's root). */
export function syncArgs(client: SyncClientName, account: SyncAccount, remoteFolder: string, localDir: string, options: { debug?: boolean; excludeFile?: string } = {}): string[] {
  const common = [
    '--non-interactive',
    '-u',
    account.login,
    '-p',
    account.password,
    ...(options.debug === false ? [] : ['--logdebug']),
    ...(options.excludeFile ? ['--exclude', options.excludeFile] : []),
  ];
  const folder = `/${remoteFolder.replace(/^\/+|\/+$/g, '')}`;
  if (client === 'nextcloudcmd') return [...common, '--path', folder, localDir, account.serverUrl];
  const encoded = folder
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
  return [...common, localDir, `${account.serverUrl}/remote.php/webdav${encoded === '/' ? '/' : encoded}`];
}

/**
 * The arguments and environment of one run, with a fresh HOME at `home` (created here): nothing of
 * the machine's own client setup is read.
 */
export function syncInvocation(
  client: SyncClientName,
  account: SyncAccount,
  remoteFolder: string,
  localDir: string,
  home: string,
  options: { debug?: boolean } = {},
): { args: string[]; env: NodeJS.ProcessEnv } {
  mkdirSync(path.join(home, '.config'), { recursive: true });
  mkdirSync(localDir, { recursive: true });
  let excludeFile: string | undefined;
  if (client === 'owncloudcmd') {
    excludeFile = path.join(home, 'sync-exclude.lst');
    writeFileSync(excludeFile, OWNCLOUD_EXCLUDES);
  }
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    XDG_RUNTIME_DIR: home,
    LANG: 'C.UTF-8',
    TZ: 'UTC',
    // Qt without a display: the command-line clients need none.
    QT_QPA_PLATFORM: 'offscreen',
  };
  return { args: syncArgs(client, account, remoteFolder, localDir, { ...options, ...(excludeFile ? { excludeFile } : {}) }), env };
}
