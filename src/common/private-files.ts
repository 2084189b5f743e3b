/**
 * Files at rest (issue 21, items 1 and 4): everything driveway writes to disk (the data folder,
 * its databases and their -wal/-shm/-journal, lock files, blob folders, staging, the bridge's
 * state, backups, restores) holds password hashes, 2FA secrets, session signing keys or users'
 * files, so it is for the service user only: folders 0700, files 0600, whatever the umask and
 * whatever the mode of the folder above. Owns how a private folder or file is made, and what is
 * checked and narrowed when driveway opens one; the callers decide where.
 *
 * Three layers, because no one of them covers everything:
 * - run.ts sets the umask to 077 first thing: a safety net for whatever a library creates;
 * - every folder and file driveway creates is made with an explicit mode (the umask can only take
 *   bits away), and SQLite's files are made empty with 0600 before SQLite opens them (SQLite
 *   creates a database 0644 and gives its -wal, -shm and -journal the database's mode; a copy
 *   keeps its source's mode whatever the umask);
 * - what an earlier release left (0644 databases, a 0755 data folder) is narrowed when it is
 *   opened: the data folder, each database file and its companions, the top blob and staging
 *   folders. Blob files and fan-out folders under `blobs/` are not walked at start (there may
 *   be millions): with `blobs/` and the data folder 0700 nobody else reaches them, and
 *   `chmod -R go= <dataDir>` once tidies them (docs/operations.md).
 */
import { chmodSync, closeSync, mkdirSync, openSync, promises as fs, statSync } from 'node:fs';
import { reasonOf, StartupError } from './startup-error.js';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;
/** Any permission for the group or for others. */
const OPEN_TO_OTHERS = 0o077;

/** Sets the process's umask to 077: anything created without an explicit mode is the owner's only. */
export function restrictUmask(): void {
  process.umask(0o077);
}

/** `0755`: a mode as `ls -l` and chmod spell it. */
export function octal(mode: number): string {
  return `0${(mode & 0o7777).toString(8).padStart(3, '0')}`;
}

/** A folder driveway would use is open to other users, and this user cannot close it (not its owner). */
export class NotPrivateError extends StartupError {
  override name = 'NotPrivateError';
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** `mkdir -p` where every folder it makes is 0700 (mode applies to each one created). */
export function makePrivateDirSync(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/** makePrivateDirSync without blocking: the blob backends' folders, made on the request path. */
export async function makePrivateDir(dir: string): Promise<void> {
  await fs.mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
}

/**
 * Narrows an existing file (to 0600) or folder (to 0700) that grants anything to group or others;
 * the mode it had, or undefined when it was private already, is not there, or is not of `kind`.
 * One of another user's that this one cannot change is a NotPrivateError naming it and the
 * chmod that fixes it.
 */
export function narrowToOwner(target: string, kind: 'file' | 'dir'): number | undefined {
  let mode: number;
  let uid: number;
  try {
    const st = statSync(target);
    if (kind === 'file' ? !st.isFile() : !st.isDirectory()) return undefined;
    ({ mode, uid } = st);
  } catch (err) {
    if (codeOf(err) === 'ENOENT') return undefined;
    throw err;
  }
  if ((mode & OPEN_TO_OTHERS) === 0) return undefined;
  const wanted = kind === 'dir' ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
  try {
    chmodSync(target, wanted);
  } catch (err) {
    const code = codeOf(err);
    if (code === 'ENOENT') return undefined;
    if (code === 'EPERM' || code === 'EROFS') {
      throw new NotPrivateError(
        `${target} is open to other users (mode ${octal(mode)}) and this user cannot change that (it belongs to uid ${uid}): run \`chmod ${octal(wanted).slice(1)} ${target}\` as its owner`,
        { cause: err },
      );
    }
    throw err;
  }
  return mode & 0o7777;
}

/**
 * A SQLite file about to be opened: made empty with 0600 when missing (SQLite takes an empty
 * file as a new database, and VACUUM INTO writes into one), and, when it exists, it and its
 * -wal, -shm and -journal narrowed to 0600 (an earlier release left them 0644). `:memory:` and
 * '' (SQLite's private temporary database) have no file.
 */
export function preparePrivateDatabaseFile(file: string): void {
  if (file === ':memory:' || file === '') return;
  try {
    closeSync(openSync(file, 'wx', PRIVATE_FILE_MODE));
    return;
  } catch (err) {
    // There already (narrowed below); anything else is for SQLite to report as it opens it.
    if (codeOf(err) !== 'EEXIST') return;
  }
  for (const suffix of ['', '-wal', '-shm', '-journal']) narrowToOwner(`${file}${suffix}`, 'file');
}

export interface PrivateDirOptions {
  /** How messages name it: `data folder`, `backup folder`. */
  label: string;
  /** The end of the message when it cannot be created: which setting names it, what to check. */
  createHint: string;
  /** The other way out when it is refused: `set dataDir / DRIVEWAY_DATA_DIR to a folder of this user's`. */
  refusalHint: string;
  /** Told when an existing folder was narrowed: a line that names it, and the mode it had. */
  onNarrowed?: (message: string, modeBefore: string) => void;
}

/**
 * Makes `dir` (0700, with any missing parents) or checks the existing one: open to group or
 * others, it is narrowed to 0700 (and `onNarrowed` told), or, when this user cannot change it
 * (not its owner), refused: NotPrivateError, one line naming it and `chmod 700 <dir>`.
 * StartupError naming it when it cannot be made.
 */
export function securePrivateDir(dir: string, options: PrivateDirOptions): void {
  try {
    makePrivateDirSync(dir);
  } catch (err) {
    throw new StartupError(`cannot create the ${options.label} ${dir}: ${reasonOf(err)}; ${options.createHint}`, { cause: err });
  }
  let before: number | undefined;
  try {
    before = narrowToOwner(dir, 'dir');
  } catch (err) {
    if (!(err instanceof NotPrivateError)) throw err;
    const { mode, uid } = statSync(dir);
    throw new NotPrivateError(
      `the ${options.label} ${dir} is open to other users (mode ${octal(mode)}) and this user (uid ${process.getuid?.() ?? '?'}) cannot change that (it belongs to uid ${uid}): ` +
        `run \`chmod 700 ${dir}\` as its owner, or ${options.refusalHint}`,
      { cause: err },
    );
  }
  if (before !== undefined) {
    options.onNarrowed?.(`the ${options.label} ${dir} was open to other users (mode ${octal(before)}); made it 0700`, octal(before));
  }
}

/** Where a logger's warning goes: run.ts's, restore's and migrate's loggers all fit. */
export interface WarnLog {
  warn(fields: Record<string, unknown>, message: string): void;
}

/**
 * The data folder, made or checked as securePrivateDir does, before anything in it is opened
 * (instance-lock.ts, the store's start): a narrowed one is logged at warn, naming it.
 */
export function ensureDataDir(dataDir: string, log?: WarnLog): void {
  securePrivateDir(dataDir, {
    label: 'data folder',
    createHint: 'check dataDir / DRIVEWAY_DATA_DIR and that its parent is writable by this user',
    refusalHint: "set dataDir / DRIVEWAY_DATA_DIR to a folder of this user's",
    onNarrowed: (message, modeBefore) => log?.warn({ dataDir, modeBefore, mode: octal(PRIVATE_DIR_MODE) }, message),
  });
}
