/**
 * `driveway migrate` (issue 15, item 5): moves an embedded installation (`<dataDir>/driveway.sqlite`,
 * its blob files in `<dataDir>/blobs` and the small blobs inline in `blobs.data`) into PostgreSQL,
 * and its blob files into S3, or leaves them in the data directory for one instance over
 * PostgreSQL with the local backend (docs/scale-out.md "Moving an embedded installation").
 *
 * The run, in order: take the data directory's locks (refusing a live instance, naming its PID);
 * check the source's schema version against this code's; refuse a target that holds a store
 * unless it holds an unfinished migration of this same store; bring the target's schema to this
 * code's version (storage/migrations.ts); copy the blob files (content-addressed: idempotent,
 * each one read back and hashed); copy the tables in foreign-key order in batches, each batch one
 * transaction with its cursor (storage/embedded-copy.ts); set identity sequences; compare every
 * table's row count and checksum on both sides; drop the progress table. Interrupted anywhere
 * (kill -9 included), the next run continues from the cursors and ends in the same state.
 *
 * Owns the order of the steps and the refusals; the SQL is storage/embedded-copy.ts's, the bytes
 * blobs/blob-copy.ts's. Writes nothing into the source.
 */
import { redactDatabaseUrl } from './storage/database-url.js';
import { storageBlobLedger } from './storage/revisions.js';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type pg from 'pg';
import type { Logger } from '../common/logger.js';
import { lockDataDir, type InstanceLock } from './storage/instance-lock.js';
import type { BlobBackend, BlobLedger } from './blobs/blob-backend.js';
import { BlobVerificationError, copyBlob, verifyBlob } from './blobs/blob-copy.js';
import { LocalBlobBackend } from './blobs/local.js';
import { S3BlobBackend } from './blobs/s3.js';
import { PostgresStorage } from './storage/dialects/postgres.js';
import {
  EmbeddedSource,
  NOT_COPIED,
  PROGRESS_TABLE,
  beginStep,
  claimTarget,
  countRows,
  createProgressTable,
  deleteSeededRows,
  dropProgressTable,
  finishStep,
  foreignKeyOrder,
  insertBatch,
  progress,
  releaseTarget,
  setIdentitySequences,
  tableExists,
  targetDigest,
  targetTables,
  advanceStep,
  type TargetTable,
} from './storage/embedded-copy.js';
import { migrate, migrationsOf } from './storage/migrations.js';
import type { Sql } from './storage/sql.js';

export interface S3Target {
  bucket: string;
  endpoint?: string | undefined;
  region: string;
  prefix: string;
  forcePathStyle: boolean;
  partSizeBytes: number;
  /** Tests only; otherwise the AWS SDK's usual sources (AWS_ACCESS_KEY_ID, profiles, roles). */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

export interface MigrateOptions {
  dataDir: string;
  databaseUrl: string;
  /** Where blob files go; undefined: they stay in `<dataDir>/blobs` (the local backend over PostgreSQL). */
  s3?: S3Target | undefined;
  /** Rows (or blobs) per batch and transaction. */
  batchRows: number;
  /** Blobs copied at once. */
  blobConcurrency: number;
  log: Logger;
  /** One line per step and batch, for the operator. */
  report: (line: string) => void;
}

/** A condition the operator must change before the migration can run (exit 2). */
export class MigrationRefusedError extends Error {
  override name = 'MigrationRefusedError';
}

/** The copy does not match its source (exit 1): a table or a blob named. */
export class MigrationMismatchError extends Error {
  override name = 'MigrationMismatchError';
}

export interface MigrationSummary {
  tables: number;
  rows: number;
  blobFiles: number;
  blobBytes: number;
  /** Blob files sent in this run (the rest were at the target already, from an interrupted run, and verified). */
  blobsSent: number;
  resumed: boolean;
}

const SOURCE_STEP = 'source';
const BLOB_STEP = 'blobs';
const SEQUENCE_STEP = 'sequences';
const tableStep = (table: string) => `table:${table}`;


/**
 * The migration's ledger of S3 upload intents: the store's own (storage/revisions.ts) over the
 * target database, so a multipart upload a killed migration abandoned is cleaned up by that
 * store's collector like any other; but a migration deletes nothing and sweeps nothing (the rows
 * that refer to the blobs arrive after them).
 */
function targetLedger(sql: Sql): BlobLedger {
  return {
    // PostgreSQL: a COMMIT is on disk when it returns, nothing to wait for (and nothing is deleted).
    ...storageBlobLedger(sql, async () => undefined),
    isReferenced: async () => true,
    expiredUploads: async () => [],
    beginDelete: async () => undefined,
    endDelete: async () => undefined,
  };
}

export { redactDatabaseUrl };

export async function migrateEmbedded(options: MigrateOptions): Promise<MigrationSummary> {
  const { dataDir, report } = options;
  const sourceFile = path.join(dataDir, 'driveway.sqlite');
  if (!existsSync(sourceFile)) throw new MigrationRefusedError(`no embedded store in ${dataDir} (${sourceFile} does not exist)`);

  // A live instance writes the source while we read it: refuse, naming its PID (DataDirInUseError).
  const locks: InstanceLock[] = [];
  try {
    locks.push(lockDataDir(dataDir, 'store', options.log));
    locks.push(lockDataDir(dataDir, 'bridge', options.log));
  } catch (err) {
    for (const lock of locks) lock.release();
    throw err;
  }

  const source = new EmbeddedSource(sourceFile);
  const target = new PostgresStorage(options.databaseUrl, { maxConnections: options.blobConcurrency + 2 });
  let session: pg.PoolClient | undefined;
  try {
    const codeVersion = migrationsOf('sqlite').at(-1)?.version ?? 0;
    const sourceVersion = source.schemaVersion();
    if (sourceVersion !== codeVersion) {
      throw new MigrationRefusedError(
        sourceVersion < codeVersion
          ? `the store in ${dataDir} has schema version ${sourceVersion}, this driveway's is ${codeVersion}: start this driveway once on that data directory (it upgrades the database), stop it, then migrate`
          : `the store in ${dataDir} has schema version ${sourceVersion}, newer than this driveway knows (${codeVersion}): migrate with the driveway version that wrote it`,
      );
    }
    const identity = source.identity();
    const where = `the target database ${redactDatabaseUrl(options.databaseUrl)}`;

    // One migrator per target database at a time: a session advisory lock, held to the end.
    session = await claimTarget(target.pool);
    if (!session) throw new MigrationRefusedError(`another driveway migrate is running against ${where}`);

    const resumed = await tableExists(target.sql, PROGRESS_TABLE);
    if (resumed) {
      const from = (await progress(target.sql)).get(SOURCE_STEP);
      if (!from || from.note !== identity) {
        throw new MigrationRefusedError(`${where} holds an unfinished migration of another store (${from?.note ?? 'unknown'}), not of the one in ${dataDir} (${identity})`);
      }
      report(`resuming the migration of ${dataDir} into ${redactDatabaseUrl(options.databaseUrl)}`);
    } else if ((await tableExists(target.sql, 'users')) && (await countRows(target.sql, 'users')) > 0) {
      throw new MigrationRefusedError(`${where} already holds a store (${await countRows(target.sql, 'users')} users): migrate into an empty database`);
    }

    await migrate(target, where);
    const targetVersion = await target.schemaVersion();
    if (targetVersion !== sourceVersion) {
      throw new MigrationRefusedError(`${where} reached schema version ${targetVersion}, the source has ${sourceVersion}: this driveway has no PostgreSQL migration to that version`);
    }

    const tables = await targetTables(target.sql);
    const sourceTables = source.tables();
    for (const table of sourceTables) {
      const there = tables.get(table.name);
      if (!there) throw new MigrationRefusedError(`the source table ${table.name} has no counterpart in ${where}`);
      const want = [...table.columns].sort().join(', ');
      const have = there.columns.map((c) => c.name).sort().join(', ');
      if (want !== have) throw new MigrationRefusedError(`the columns of ${table.name} differ: source (${want}), target (${have})`);
    }
    const order = foreignKeyOrder(
      sourceTables.map((t) => t.name),
      tables,
    );

    if (!resumed) {
      // Rows the target's own migrations made: the source has its own, which are copied as they are.
      await deleteSeededRows(target.sql);
      for (const name of order) {
        if ((await countRows(target.sql, name)) > 0) throw new MigrationRefusedError(`${where} is not empty (table ${name} has rows): migrate into an empty database`);
      }
      await target.sql.transaction(async (tx) => {
        await createProgressTable(tx);
        await beginStep(tx, SOURCE_STEP, identity);
      });
      report(`migrating ${dataDir} (schema ${sourceVersion}) into ${redactDatabaseUrl(options.databaseUrl)}`);
    }

    const blobs = await copyBlobFiles(options, source, target);
    let rows = 0;
    for (const name of order) rows += await copyTable(options, source, target, tables.get(name) as TargetTable, sourceTables.find((t) => t.name === name)?.columns ?? []);

    const steps = await progress(target.sql);
    if (!steps.get(SEQUENCE_STEP)?.done) {
      for (const name of order) await setIdentitySequences(target.sql, tables.get(name) as TargetTable, source.autoincrementMark(name));
      await beginStep(target.sql, SEQUENCE_STEP);
      await finishStep(target.sql, SEQUENCE_STEP);
    }

    // Every table, counted and summed on both sides, however the rows got there.
    const mismatches: string[] = [];
    for (const name of order) {
      const columns = sourceTables.find((t) => t.name === name)?.columns ?? [];
      const mine = source.digest(name, columns);
      const theirs = await targetDigest(target.sql, tables.get(name) as TargetTable, columns, options.batchRows);
      if (mine.rows !== theirs.rows) mismatches.push(`${name}: ${mine.rows} rows in the source, ${theirs.rows} in the target`);
      else if (mine.digest !== theirs.digest) mismatches.push(`${name}: same row count (${mine.rows}) but different content (checksum ${mine.digest} vs ${theirs.digest})`);
    }
    if (mismatches.length > 0) {
      throw new MigrationMismatchError(
        `the target does not match the source:\n  ${mismatches.join('\n  ')}\n` +
          `the source changed after an interrupted run, or the copy is damaged: drop the target database, create it empty, and migrate again`,
      );
    }
    report(`verified: ${order.length} tables, ${rows} rows, checksums equal`);
    await dropProgressTable(target.sql);
    return { tables: order.length, rows, blobFiles: blobs.files, blobBytes: blobs.bytes, blobsSent: blobs.sent, resumed };
  } finally {
    if (session) await releaseTarget(session);
    await target.close().catch(() => undefined);
    source.close();
    for (const lock of locks.reverse()) lock.release();
  }
}

/** Copies (S3) or verifies in place (local) every blob file the source's rows name, in hash order with a cursor. */
async function copyBlobFiles(options: MigrateOptions, source: EmbeddedSource, target: PostgresStorage): Promise<{ files: number; bytes: number; sent: number }> {
  const { blobs: files, bytes } = source.fileBlobCount();
  await beginStep(target.sql, BLOB_STEP);
  let step = (await progress(target.sql)).get(BLOB_STEP);
  if (step?.done) return { files, bytes, sent: 0 };

  const from = new LocalBlobBackend(options.dataDir);
  const sourceName = `${path.join(options.dataDir, 'blobs')}`;
  let to: BlobBackend | undefined;
  let targetName = sourceName;
  if (options.s3) {
    const s3 = options.s3;
    to = new S3BlobBackend({
      bucket: s3.bucket,
      endpoint: s3.endpoint,
      region: s3.region,
      prefix: s3.prefix,
      forcePathStyle: s3.forcePathStyle,
      partSizeBytes: s3.partSizeBytes,
      uploadIntentTtlMs: 24 * 3600_000,
      stagingDir: path.join(options.dataDir, 'tmp', 'migrate'),
      ledger: targetLedger(target.sql),
      now: Date.now,
      log: options.log,
      ...(s3.credentials ? { credentials: s3.credentials } : {}),
    });
    await to.init();
    // Parts a killed run of the migration staged (no server sweeps a folder it no longer serves).
    await to.sweepStaging();
    targetName = `s3://${s3.bucket}/${(to as S3BlobBackend).prefix}`;
  }
  let sent = 0;
  try {
    for (;;) {
      step = (await progress(target.sql)).get(BLOB_STEP);
      const cursor = step?.cursor ?? '';
      const batch = source.fileBlobs(cursor, options.batchRows);
      if (batch.length === 0) break;
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < batch.length) {
          const blob = batch[next++] as (typeof batch)[number];
          try {
            if (to) {
              if ((await copyBlob(from, to, blob.hash, blob.sizeBytes, { source: sourceName, target: targetName })) === 'copied') sent += 1;
            } else {
              await verifyBlob(from, blob.hash, blob.sizeBytes, sourceName);
            }
          } catch (err) {
            if (err instanceof BlobVerificationError) throw new MigrationMismatchError(err.message);
            throw err;
          }
        }
      };
      await Promise.all(Array.from({ length: Math.min(options.blobConcurrency, batch.length) }, worker));
      const last = (batch.at(-1) as (typeof batch)[number]).hash;
      await target.sql.transaction((tx) => advanceStep(tx, BLOB_STEP, cursor, last, batch.length));
      const doneNow = (step?.rows ?? 0) + batch.length;
      options.report(`blobs: ${doneNow}/${files} ${to ? 'copied and verified' : 'verified in place'}`);
    }
    await finishStep(target.sql, BLOB_STEP);
  } finally {
    await to?.close();
  }
  return { files, bytes, sent };
}

/** Copies one table in batches from its cursor; returns its row count. */
async function copyTable(options: MigrateOptions, source: EmbeddedSource, target: PostgresStorage, table: TargetTable, columns: string[]): Promise<number> {
  const step = tableStep(table.name);
  const total = source.count(table.name);
  await beginStep(target.sql, step);
  let state = (await progress(target.sql)).get(step);
  if (state?.done) return total;
  if (table.selfReference) source.orderParentsFirst(table.name, table.selfReference.child, table.selfReference.parent);
  for (;;) {
    const from = state?.cursor ?? '';
    const batch = source.batch(table.name, columns, from, options.batchRows);
    if (batch.rows.length === 0) break;
    try {
      await insertBatch(target.sql, table, columns, batch.rows, { name: step, from, to: batch.cursor });
    } catch (err) {
      throw new Error(`copying the rows of ${table.name} after ${from === '' ? 'the start' : `cursor ${from}`}: ${(err as Error).message}`, { cause: err });
    }
    state = { step, cursor: batch.cursor, rows: (state?.rows ?? 0) + batch.rows.length, done: 0, note: '' };
    options.report(`table ${table.name}: ${state.rows}/${total} rows`);
  }
  await finishStep(target.sql, step);
  return total;
}

/** Tables the migrator leaves alone, for the docs and the help text. */
export const TABLES_NOT_COPIED = [...NOT_COPIED];
