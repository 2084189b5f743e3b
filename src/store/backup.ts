/**
 * `driveway backup <dir>` and `driveway restore <dir>` (issue 16, item 1): the work, without the
 * command line (src/cli/backup.ts parses and prints). docs/operations.md "Backup and restore"
 * is the operator's side of this.
 *
 * A backup is a folder shaped like an embedded data directory, so one restore path serves every
 * target and `driveway migrate`'s machinery reads it as it is:
 *   <dir>/driveway.sqlite   the database, a consistent snapshot, SQLite whatever the source:
 *                           SQLite's VACUUM INTO (one read transaction on a connection of its
 *                           own; the server keeps writing), or PostgreSQL's tables read in one
 *                           REPEATABLE READ transaction (storage/postgres-snapshot.ts)
 *   <dir>/blobs/ab/cd/<h>   every blob file the snapshot's rows refer to, content-addressed,
 *                           read through the configured blob backend (a local folder or S3)
 *   <dir>/manifest.json     written last: format, driveway and schema versions, when, row counts
 *                           per table, blob count and bytes, SHA-256 of driveway.sqlite
 * A folder without manifest.json is not a backup (an interrupted or incomplete one).
 * It holds every secret of the store (password hashes, 2FA secrets, signing keys, sessions), so
 * the folder is 0700 and everything in it 0600 (common/private-files.ts): an empty folder that
 * others may enter is narrowed first, one of another user's refused; a restored database is 0600.
 *
 * Order: the snapshot first, then the blobs it names. A blob written after the snapshot is not
 * needed. A blob named by the snapshot may still go before it is copied: a file purged from the
 * trash (or a revision pruned) after the snapshot frees its blob at once. Such a blob is reported
 * by its hash, no manifest is written and the command fails (exit 1): run it again into an empty
 * folder. The window is the copy's duration, and only purges inside it matter.
 *
 * Restore verifies the manifest (format, schema version, the database's SHA-256) and every blob
 * against its address BEFORE it writes anything, then:
 *  - SQLite (no database.url): refuses a data directory holding a database or used by a running
 *    instance (its lock); copies the blobs into the configured backend, then the database under
 *    a temporary name, renamed into place last (interrupted, nothing counts as restored);
 *  - PostgreSQL: `driveway migrate` from the backup folder (store/migrate-embedded.ts), which
 *    refuses a database holding a store, copies blobs to S3 (or the data directory's folder),
 *    copies and checksums every table, and resumes when run again.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, promises as fs, readdirSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { blobBackendOf, type Config } from '../common/config.js';
import type { Logger } from '../common/logger.js';
import { ensureDataDir, NotPrivateError, PRIVATE_FILE_MODE, securePrivateDir } from '../common/private-files.js';
import { BlobMissingError, type BlobBackend, type BlobLedger } from './blobs/blob-backend.js';
import { BlobVerificationError, copyBlob, verifyBlob } from './blobs/blob-copy.js';
import { createBlobBackend } from './blobs/create-blob-backend.js';
import { LocalBlobBackend } from './blobs/local.js';
import { snapshotDatabaseFile } from './storage/dialects/sqlite-open.js';
import { EmbeddedSource } from './storage/embedded-copy.js';
import { FORGET_DATA_FINGERPRINT } from './storage/dav-file-ids.js';
import Database from 'better-sqlite3';
import { lockDataDir } from './storage/instance-lock.js';
import { migrationsOf } from './storage/migrations.js';
import type { Storage } from './storage/sql.js';

export const MANIFEST = 'manifest.json';
export const DATABASE_FILE = 'driveway.sqlite';
export const BACKUP_FORMAT = 1;
const BLOB_CONCURRENCY = 4;
const PAGE = 1000;

export interface Manifest {
  format: number;
  driveway: string;
  schemaVersion: number;
  created: string;
  /** Where it was taken: the source's dialect and blob backend. */
  source: { dialect: 'sqlite' | 'postgres'; blobs: 'local' | 's3' };
  database: { file: string; bytes: number; sha256: string };
  tables: Record<string, number>;
  blobs: { files: number; bytes: number };
}

/** The backup or restore cannot start as asked (exit 2): a non-empty target, a PostgreSQL source. */
export class BackupRefusedError extends Error {
  override name = 'BackupRefusedError';
}

/** The backup or restore failed on content (exit 1): blobs missing or damaged, each named. */
export class BackupContentError extends Error {
  override name = 'BackupContentError';
}

async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

function isEmptyDir(dir: string): boolean {
  return !existsSync(dir) || readdirSync(dir).length === 0;
}

/** Runs `work` on every item with `concurrency` workers; collects what each failure says about its item. */
async function forEach<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}

/** Every blob file (not inline) the database `file` names, in hash order. */
function blobsOf(source: EmbeddedSource): Array<{ hash: string; sizeBytes: number }> {
  const all: Array<{ hash: string; sizeBytes: number }> = [];
  for (let after = ''; ; ) {
    const page = source.fileBlobs(after, PAGE);
    if (page.length === 0) return all;
    all.push(...page);
    after = (page.at(-1) as { hash: string }).hash;
  }
}

/** A ledger for a backend that only receives copies: nothing is ever collected or deleted through it. */
function copyLedger(): BlobLedger {
  return {
    isReferenced: async () => true,
    durable: async () => undefined,
    beginUpload: async () => 'copy',
    updateUpload: async () => undefined,
    endUpload: async () => undefined,
    expiredUploads: async () => [],
    beginDelete: async () => undefined,
    endDelete: async () => undefined,
  };
}

export interface BackupOptions {
  config: Config;
  dir: string;
  version: string;
  /** The store's database and blob backend as the server uses them (cli/admin-store.ts). */
  storage: Storage;
  blobs: BlobBackend;
  report: (line: string) => void;
  /** Told when the (empty) folder was open to other users and has been made 0700. */
  warn?: (line: string) => void;
}

export interface BackupSummary {
  manifest: Manifest;
  rows: number;
}

/** Takes the backup into `dir` (empty or absent). */
export async function takeBackup(options: BackupOptions): Promise<BackupSummary> {
  const { config, dir } = options;
  if (!isEmptyDir(dir)) throw new BackupRefusedError(`${dir} is not empty: back up into a new or empty folder`);
  const target = path.join(dir, DATABASE_FILE);
  const dialect = options.storage.sql.dialect;
  const makeFolder = (): void => {
    try {
      securePrivateDir(dir, {
        label: 'backup folder',
        createHint: 'check the path and that its parent is writable by this user',
        refusalHint: "back up into a folder of this user's",
        onNarrowed: (line) => options.warn?.(line),
      });
    } catch (err) {
      if (err instanceof NotPrivateError) throw new BackupRefusedError(err.message);
      throw err;
    }
  };
  if (dialect === 'postgres') {
    makeFolder();
    const { PostgresStorage } = await import('./storage/dialects/postgres.js');
    const { snapshotPostgres } = await import('./storage/postgres-snapshot.js');
    await snapshotPostgres((options.storage as InstanceType<typeof PostgresStorage>).pool, target);
  } else {
    const sourceFile = path.join(config.dataDir, DATABASE_FILE);
    if (!existsSync(sourceFile)) throw new BackupRefusedError(`no database at ${sourceFile}: name the right data directory (--config, DRIVEWAY_DATA_DIR)`);
    makeFolder();
    snapshotDatabaseFile(sourceFile, target);
  }

  const snapshot = new EmbeddedSource(target);
  let manifest: Manifest;
  let rows = 0;
  try {
    const schemaVersion = snapshot.schemaVersion();
    const tables: Record<string, number> = {};
    for (const table of snapshot.tables()) {
      tables[table.name] = snapshot.count(table.name);
      rows += tables[table.name] as number;
    }
    const blobs = blobsOf(snapshot);
    options.report(`snapshot taken (schema ${schemaVersion}, ${rows} rows); copying ${blobs.length} blob file(s)`);

    const into = new LocalBlobBackend(dir);
    await into.init();
    const missing: string[] = [];
    const damaged: string[] = [];
    await forEach(blobs, BLOB_CONCURRENCY, async (blob) => {
      try {
        await copyBlob(options.blobs, into, blob.hash, blob.sizeBytes, { source: `the ${options.blobs.kind} blob backend`, target: dir });
      } catch (err) {
        if (err instanceof BlobMissingError) missing.push(blob.hash);
        else if (err instanceof BlobVerificationError) damaged.push(err.message);
        else throw err;
      }
    });
    await into.close();
    await fs.rm(into.tmpDir, { recursive: true, force: true });
    if (missing.length > 0 || damaged.length > 0) {
      throw new BackupContentError(
        [
          ...missing.map((hash) => `blob ${hash} is named by the snapshot but gone from the blob backend (purged after the snapshot, or lost: driveway check tells)`),
          ...damaged,
          `the backup in ${dir} is incomplete (no ${MANIFEST}): take it again into an empty folder`,
        ].join('\n'),
      );
    }
    manifest = {
      format: BACKUP_FORMAT,
      driveway: options.version,
      schemaVersion,
      created: new Date().toISOString(),
      source: { dialect, blobs: blobBackendOf(config) },
      database: { file: DATABASE_FILE, bytes: (await fs.stat(target)).size, sha256: await sha256File(target) },
      tables,
      blobs: { files: blobs.length, bytes: blobs.reduce((sum, b) => sum + b.sizeBytes, 0) },
    };
  } finally {
    snapshot.close();
  }
  // Written last and renamed into place: its presence says the backup is whole.
  const temp = path.join(dir, `${MANIFEST}.tmp`);
  await fs.writeFile(temp, `${JSON.stringify(manifest, null, 2)}\n`, { mode: PRIVATE_FILE_MODE });
  await fs.rename(temp, path.join(dir, MANIFEST));
  return { manifest, rows };
}

/** Reads and checks the manifest and the database file it names; throws naming what is wrong. */
export async function readManifest(dir: string): Promise<Manifest> {
  const file = path.join(dir, MANIFEST);
  if (!existsSync(file)) throw new BackupContentError(`${dir} holds no ${MANIFEST}: not a driveway backup, or an incomplete one`);
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await fs.readFile(file, 'utf8')) as Manifest;
  } catch (err) {
    throw new BackupContentError(`${file} is not valid JSON: ${(err as Error).message}`);
  }
  if (manifest.format !== BACKUP_FORMAT) throw new BackupContentError(`${file} has format ${String(manifest.format)}; this driveway reads format ${BACKUP_FORMAT}`);
  const known = migrationsOf('sqlite').at(-1)?.version ?? 0;
  if (manifest.schemaVersion > known) {
    throw new BackupRefusedError(`the backup has schema version ${manifest.schemaVersion}, newer than this driveway knows (${known}): restore it with driveway ${manifest.driveway} or later`);
  }
  const db = path.join(dir, DATABASE_FILE);
  if (!existsSync(db)) throw new BackupContentError(`${db} is missing`);
  const sha = await sha256File(db);
  if (sha !== manifest.database.sha256) throw new BackupContentError(`${db} is damaged: its SHA-256 is ${sha}, the manifest says ${manifest.database.sha256}`);
  return manifest;
}

/** Reads every blob of the backup and checks it against its address; names every one that fails. */
async function verifyBackupBlobs(dir: string, manifest: Manifest, report: (line: string) => void): Promise<Array<{ hash: string; sizeBytes: number }>> {
  const source = new EmbeddedSource(path.join(dir, DATABASE_FILE));
  let blobs;
  try {
    blobs = blobsOf(source);
  } finally {
    source.close();
  }
  if (blobs.length !== manifest.blobs.files) throw new BackupContentError(`the database names ${blobs.length} blob files, the manifest ${manifest.blobs.files}`);
  const from = new LocalBlobBackend(dir);
  const where = path.join(dir, 'blobs');
  const problems: string[] = [];
  await forEach(blobs, BLOB_CONCURRENCY, async (blob) => {
    try {
      await verifyBlob(from, blob.hash, blob.sizeBytes, where);
    } catch (err) {
      if (err instanceof BlobMissingError) problems.push(`blob ${blob.hash} is missing from ${where}`);
      else if (err instanceof BlobVerificationError) problems.push(err.message);
      else throw err;
    }
  });
  if (problems.length > 0) throw new BackupContentError(`${problems.sort().join('\n')}\nnothing was restored`);
  report(`backup verified: database SHA-256 and ${blobs.length} blob file(s) (${manifest.blobs.bytes} bytes)`);
  return blobs;
}

export interface RestoreOptions {
  config: Config;
  dir: string;
  log: Logger;
  report: (line: string) => void;
}

/** Restores the backup in `dir` into what the configuration names. */
export async function restoreBackup(options: RestoreOptions): Promise<Manifest> {
  const { config, dir, report } = options;
  const manifest = await readManifest(dir);
  if (config.database.url !== undefined) return restoreIntoPostgres(options, manifest);

  const dataDir = config.dataDir;
  // A running instance holds this lock: refused (DataDirInUseError) before anything is read.
  const lock = lockDataDir(dataDir, 'store', options.log);
  try {
    const dbFile = path.join(dataDir, DATABASE_FILE);
    if (existsSync(dbFile)) throw new BackupRefusedError(`${dataDir} already holds a database (${dbFile}): restore into an empty data directory`);
    const blobs = await verifyBackupBlobs(dir, manifest, report);
    await copyBlobsIn(options, blobs);
    // The database last, under a temporary name until it is whole and on disk. A copy takes its
    // source's mode whatever the umask (a backup of an earlier release is 0644): made 0600.
    const temp = `${dbFile}.restoring`;
    await fs.copyFile(path.join(dir, DATABASE_FILE), temp);
    forgetDataFingerprint(temp);
    const handle = await fs.open(temp, 'r+');
    await handle.chmod(PRIVATE_FILE_MODE);
    await handle.sync();
    await handle.close();
    await fs.rename(temp, dbFile);
    const folder = await fs.open(dataDir, 'r');
    await folder.sync().catch(() => undefined);
    await folder.close();
  } finally {
    lock.release();
  }
  return manifest;
}

/**
 * oc:data-fingerprint (docs/extensions.md "Numeric file ids") made anew at the next start: the
 * Nextcloud clients then know the server's data may be older than what they saw, and keep their
 * local changes instead of taking the server's as deletions. A backup older than migration 027 has none.
 */
function forgetDataFingerprint(file: string): void {
  const db = new Database(file);
  try {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'dav_instance'").get()) db.exec(FORGET_DATA_FINGERPRINT);
  } finally {
    db.close();
  }
}

/** Copies the backup's blobs into the configured backend (each read back and verified there). */
async function copyBlobsIn(options: RestoreOptions, blobs: ReadonlyArray<{ hash: string; sizeBytes: number }>): Promise<void> {
  const from = new LocalBlobBackend(options.dir);
  const to = await createBlobBackend(options.config, copyLedger(), () => Date.now(), options.log);
  await to.init();
  try {
    await forEach(blobs, BLOB_CONCURRENCY, async (blob) => {
      await copyBlob(from, to, blob.hash, blob.sizeBytes, { source: path.join(options.dir, 'blobs'), target: `the ${to.kind} blob backend` });
    });
  } finally {
    await to.close();
  }
}

async function restoreIntoPostgres(options: RestoreOptions, manifest: Manifest): Promise<Manifest> {
  const { config, dir, report } = options;
  const blobs = await verifyBackupBlobs(dir, manifest, report);
  // With the local backend the blob files go to the data directory first (migrate would leave
  // them in the backup folder); with S3, migrate copies them into the bucket.
  const local = blobBackendOf(config) === 'local';
  if (local) {
    ensureDataDir(config.dataDir, options.log);
    await copyBlobsIn(options, blobs);
  }
  const { migrateEmbedded, MigrationRefusedError } = await import('./migrate-embedded.js');
  const s3 = config.store.blobs.s3;
  try {
    await migrateEmbedded({
      dataDir: dir,
      databaseUrl: config.database.url as string,
      s3:
        !local
          ? { bucket: s3.bucket as string, endpoint: s3.endpoint, region: s3.region, prefix: s3.prefix, forcePathStyle: s3.forcePathStyle, partSizeBytes: s3.partSizeBytes }
          : undefined,
      batchRows: 500,
      blobConcurrency: BLOB_CONCURRENCY,
      log: options.log,
      report: () => undefined,
    });
    const { PostgresStorage } = await import('./storage/dialects/postgres.js');
    const restored = new PostgresStorage(config.database.url as string);
    try {
      await restored.sql.run(FORGET_DATA_FINGERPRINT);
    } finally {
      await restored.close();
    }
  } catch (err) {
    if (err instanceof MigrationRefusedError) throw new BackupRefusedError(err.message);
    throw err;
  } finally {
    // migrate takes the source folder's locks and stages S3 uploads in its tmp/: no part of the backup.
    for (const name of readdirSync(dir)) if (/^(store|bridge)\.lock/.test(name) || name === 'tmp') await fs.rm(path.join(dir, name), { recursive: true, force: true });
  }
  return manifest;
}
