/**
 * The Nextcloud and ownCloud sync engines on the command line (Debian's nextcloud-desktop-cmd
 * and owncloud-client-cmd) for the two-way sync suites (issue 30): one run of `nextcloudcmd` or
 * `owncloudcmd` against an account, with a fresh HOME (and config folders) per run so nothing of
 * the machine's own client setup is read, a hard time limit (run-program.ts), and what the bridge
 * received during the run (dav-recorder.ts) kept next to the program's exit and log.
 *
 * How each is given the server (their --help and sources):
 * - nextcloudcmd 3.7 takes the server's base URL and refuses one containing /dav or /webdav;
 *   `--path` names the remote folder below `remote.php/dav/files/<user id>/`.
 * - owncloudcmd 2.11 takes one URL, the WebDAV URL of the remote folder:
 *   `<base>/remote.php/webdav/<folder>`; what precedes `remote.php/webdav/` is the server.
 * Debian's owncloud-client-cmd ships no system exclude list and aborts without one ("Cannot load
 * system exclude list"): it gets a list of the editor leftovers ownCloud's own list starts with.
 * Both keep their sync journal in the local folder (`.sync_<hash>.db` and its -wal/-shm) and skip
 * hidden files by default: syncedTree() leaves every dot-file out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { requireBinary, type RequiredBinary } from '../helpers/require-binary.js';
import type { DavRecorder, RecordedExchange } from './dav-recorder.js';
import { sha256Tree } from './local-tree.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';

export const SYNC_CLIENTS = ['nextcloudcmd', 'owncloudcmd'] as const;
export type SyncClientName = (typeof SYNC_CLIENTS)[number];

/** The Debian package each program comes from (.ci/run installs them). */
export const SYNC_CLIENT_PACKAGE: Record<SyncClientName, string> = { nextcloudcmd: 'nextcloud-desktop-cmd', owncloudcmd: 'owncloud-client-cmd' };

export const SYNC_TIMEOUT_MS = 120_000;

/** The first patterns of ownCloud's default exclude list (editors' lock and backup files). */
const OWNCLOUD_EXCLUDES = '*~\n~$*\n.~lock.*\n~*.tmp\n*.part\n';

export function requireSyncClient(name: SyncClientName): RequiredBinary {
  return requireBinary(name, { candidates: [`/usr/bin/${name}`] });
}

export interface SyncAccount {
  /** The address a person types into the client: the bridge's base URL, no trailing slash. */
  serverUrl: string;
  login: string;
  /** The account's password or an app password. */
  password: string;
}

export interface SyncRun extends ProgramRun {
  /** What the bridge received during this run, in order. */
  exchanges: RecordedExchange[];
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

export interface SyncRunner {
  (remoteFolder: string, localDir: string, options?: { timeoutMs?: number; debug?: boolean }): Promise<SyncRun>;
}

/**
 * A runner for `client` against `account` through `recorder` (whose URL is the account's
 * serverUrl); each run gets a new HOME below `tmpDir`.
 */
export function syncRunner(client: SyncClientName, binary: RequiredBinary, account: SyncAccount, recorder: DavRecorder, tmpDir: string): SyncRunner {
  let runs = 0;
  return async (remoteFolder, localDir, options = {}) => {
    runs += 1;
    const home = path.join(tmpDir, `home-${client}-${runs}`);
    mkdirSync(path.join(home, '.config'), { recursive: true });
    mkdirSync(localDir, { recursive: true });
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
    let excludeFile: string | undefined;
    if (client === 'owncloudcmd') {
      excludeFile = path.join(home, 'sync-exclude.lst');
      writeFileSync(excludeFile, OWNCLOUD_EXCLUDES);
    }
    const since = recorder.exchanges.length;
    const run = await runProgram(binary.path, syncArgs(client, account, remoteFolder, localDir, { ...options, ...(excludeFile ? { excludeFile } : {}) }), { cwd: tmpDir, env, timeoutMs: options.timeoutMs ?? SYNC_TIMEOUT_MS });
    return { ...run, exchanges: recorder.exchanges.slice(since) };
  };
}

/** A failure message: the run, its log's end, and every request the bridge received with its answer. */
export function explainSync(run: SyncRun, recorder: DavRecorder): string {
  return `${describeRun(run, 12_000)}\n--- what the bridge received (${run.exchanges.length}) ---\n${recorder.describe(run.exchanges)}`;
}

/** The exchanges of a run that moved file content or changed the tree (everything but PROPFIND, OPTIONS, HEAD and OCS/status reads). */
export function transfers(exchanges: readonly RecordedExchange[]): RecordedExchange[] {
  return exchanges.filter((e) => !['PROPFIND', 'OPTIONS', 'HEAD'].includes(e.method) && !isDiscovery(e));
}

/** status.php, the OCS API and the other reads a client makes at start, none of them of the tree. */
export function isDiscovery(e: RecordedExchange): boolean {
  return e.method === 'GET' && /^\/(?:[^/]+\/)?(?:status\.php|ocs\/v[12]\.php\/|index\.php\/(?:login|apps)|remote\.php\/dav\/avatars\/|avatar\/)/.test(e.path);
}

/** `relative path -> sha256` of what the clients sync below `dir`: every file but dot-files (the journal, logs). */
export async function syncedTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [relative, hash] of await sha256Tree(dir)) {
    if (!relative.split('/').some((segment) => segment.startsWith('.'))) out.set(relative, hash);
  }
  return out;
}
