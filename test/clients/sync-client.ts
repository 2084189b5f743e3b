/**
 * The Nextcloud and ownCloud sync engines on the command line (Debian's nextcloud-desktop-cmd
 * and owncloud-client-cmd) for the two-way sync suites (issue 30): one run of `nextcloudcmd` or
 * `owncloudcmd` against an account, with a fresh HOME (and config folders) per run so nothing of
 * the machine's own client setup is read, a hard time limit (run-program.ts), and what the bridge
 * received during the run (dav-recorder.ts) kept next to the program's exit and log. How each
 * is given the server is sync-args.ts's. Both keep their sync journal in the local folder (`.sync_<hash>.db` and its -wal/-shm) and skip
 * hidden files by default: syncedTree() leaves every dot-file out.
 */
import path from 'node:path';
import { requireBinary, type RequiredBinary } from '../helpers/require-binary.js';
import type { DavRecorder, RecordedExchange } from './dav-recorder.js';
import { sha256Tree } from './local-tree.js';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';
import { syncInvocation, type SyncAccount, type SyncClientName } from './sync-args.js';

export { SYNC_CLIENTS, type SyncAccount, type SyncClientName } from './sync-args.js';

/** A run here takes about a second; a client stuck "asking the user" is cut after this. */
export const SYNC_TIMEOUT_MS = 60_000;

/** The program at Debian's path (packages nextcloud-desktop-cmd, owncloud-client-cmd; .ci/run installs them). */
export function requireSyncClient(name: SyncClientName): RequiredBinary {
  return requireBinary(name, { candidates: [`/usr/bin/${name}`] });
}

export interface SyncRun extends ProgramRun {
  /** What the bridge received during this run, in order. */
  exchanges: RecordedExchange[];
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
    const { args, env } = syncInvocation(client, account, remoteFolder, localDir, path.join(tmpDir, `home-${client}-${runs}`), options);
    const since = recorder.exchanges.length;
    const run = await runProgram(binary.path, args, { cwd: tmpDir, env, timeoutMs: options.timeoutMs ?? SYNC_TIMEOUT_MS });
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

/** status.php, the OCS API, the push websocket and the other reads a client makes at start, none of them of the tree. */
export function isDiscovery(e: RecordedExchange): boolean {
  return e.method === 'GET' && /^\/(?:[^/]+\/)?(?:status\.php|ocs\/v[12]\.php\/|index\.php\/(?:login|apps)|remote\.php\/dav\/avatars\/|avatar\/|push\/ws$)/.test(e.path);
}

/** `relative path -> sha256` of what the clients sync below `dir`: every file but dot-files (the journal, logs). */
export async function syncedTree(dir: string): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [relative, hash] of await sha256Tree(dir)) {
    if (!relative.split('/').some((segment) => segment.startsWith('.'))) out.set(relative, hash);
  }
  return out;
}
