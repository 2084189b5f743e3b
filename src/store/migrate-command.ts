/**
 * What `driveway migrate` does with its options (src/cli/migrate.ts parses them; the work is
 * migrate-embedded.ts's). The source is always the embedded installation in the data directory
 * the usual configuration names (`--config`, DRIVEWAY_DATA_DIR); the target is given by the
 * `--to-*` flags, and what they leave out comes from the configuration of the new deployment
 * (`database.url` / DRIVEWAY_DATABASE_URL, DRIVEWAY_S3_* or `store.blobs.s3.*`), so the command can run with the
 * environment the new instances will use. The plan (from, to, blobs where) is printed before
 * anything is written, so a forgotten bucket never goes unnoticed.
 *
 * Exit codes: 0 moved and verified; 1 failed or a mismatch (the table or blob is named);
 * 2 a usage error or a refusal (schema version, a target holding a store); 3 the data directory
 * is in use by a running instance (as `driveway` itself).
 */
import { blobBackendOf, ConfigError, loadConfig, type Config } from '../common/config.js';
import { DataDirInUseError } from './storage/instance-lock.js';
import { createLogger } from '../common/logger.js';
import { MigrationMismatchError, MigrationRefusedError, migrateEmbedded, redactDatabaseUrl, type S3Target } from './migrate-embedded.js';

const DEFAULT_BATCH_ROWS = 500;
const BLOB_CONCURRENCY = 4;

function positiveInt(text: string | undefined, what: string): number | undefined {
  if (text === undefined || text === '') return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new ConfigError(`${what} must be a positive integer, not ${text}`);
  return n;
}

/** The S3 target: the flags over the configuration's `store.blobs.s3`; undefined when no bucket is named anywhere. */
function s3TargetOf(values: Record<string, string | boolean | undefined>, config: Config): S3Target | undefined {
  const configured = config.store.blobs.s3;
  const fromConfig = blobBackendOf(config) === 's3';
  const bucket = (values['to-s3-bucket'] as string | undefined) ?? (fromConfig ? configured.bucket : undefined);
  if (!bucket) {
    for (const flag of ['to-s3-endpoint', 'to-s3-region', 'to-s3-prefix', 'to-s3-force-path-style']) {
      if (values[flag] !== undefined) throw new ConfigError(`--${flag} needs --to-s3-bucket`);
    }
    return undefined;
  }
  return {
    bucket,
    endpoint: (values['to-s3-endpoint'] as string | undefined) ?? configured.endpoint,
    region: (values['to-s3-region'] as string | undefined) ?? configured.region,
    prefix: (values['to-s3-prefix'] as string | undefined) ?? configured.prefix,
    forcePathStyle: values['to-s3-force-path-style'] === true || configured.forcePathStyle,
    partSizeBytes: configured.partSizeBytes,
  };
}

/** The options of `driveway migrate`, as commander hands them over (src/cli/migrate.ts). */
export type MigrateValues = Record<string, string | boolean | undefined>;

/** Runs `driveway migrate` with its parsed options; resolves to the process's exit code. */
export async function runMigrate(values: MigrateValues, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const fail = (code: number, message: string): number => {
    process.stderr.write(`driveway migrate: ${message}\n`);
    return code;
  };
  let config: Config;
  let databaseUrl: string;
  let s3: S3Target | undefined;
  let batchRows: number;
  try {
    config = loadConfig({ configFile: values.config as string | undefined, env });
    databaseUrl = (values['to-database'] as string | undefined) ?? config.database.url ?? '';
    if (!/^postgres(ql)?:\/\//.test(databaseUrl)) {
      throw new ConfigError(databaseUrl ? `--to-database must be a postgres:// URL, not ${redactDatabaseUrl(databaseUrl)}` : 'name the target with --to-database postgres://... (or database.url / DRIVEWAY_DATABASE_URL)');
    }
    s3 = s3TargetOf(values, config);
    batchRows = positiveInt(values['batch-rows'] as string | undefined, '--batch-rows') ?? positiveInt(env.DRIVEWAY_MIGRATE_BATCH_ROWS, 'DRIVEWAY_MIGRATE_BATCH_ROWS') ?? DEFAULT_BATCH_ROWS;
  } catch (err) {
    if (err instanceof ConfigError) return fail(2, (err as Error).message);
    throw err;
  }

  const report = (line: string): void => {
    process.stdout.write(`${line}\n`);
  };
  report(`from: ${config.dataDir} (driveway.sqlite, blob files in blobs/)`);
  report(`to:   ${redactDatabaseUrl(databaseUrl)}`);
  report(
    s3
      ? `      blob files into s3://${s3.bucket}/${s3.prefix}${s3.endpoint ? ` at ${s3.endpoint}` : ''}`
      : `      blob files stay in ${config.dataDir}/blobs (the local backend: one instance over PostgreSQL)`,
  );
  try {
    const summary = await migrateEmbedded({
      dataDir: config.dataDir,
      databaseUrl,
      s3,
      batchRows,
      blobConcurrency: BLOB_CONCURRENCY,
      log: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, undefined, config.log.format),
      report,
    });
    report(
      `done: ${summary.rows} rows in ${summary.tables} tables, ${summary.blobFiles} blob files (${summary.blobBytes} bytes` +
        `${s3 ? `, ${summary.blobsSent} sent in this run` : ', verified in place'}); point the new instances at the target`,
    );
    return 0;
  } catch (err) {
    if (err instanceof DataDirInUseError) return fail(3, `${err.message}; stop it before migrating`);
    if (err instanceof MigrationRefusedError) return fail(2, err.message);
    if (err instanceof MigrationMismatchError) return fail(1, err.message);
    // The message says what failed (a table, a blob, the database unreachable); the stack only when asked for.
    const debug = config.logLevel === 'debug' || config.logLevel === 'trace';
    const text = err instanceof Error ? (debug ? (err.stack ?? err.message) : err.message) : String(err);
    return fail(1, `failed: ${text}\nrun the same command again to continue (DRIVEWAY_LOG_LEVEL=debug shows where it failed)`);
  }
}
