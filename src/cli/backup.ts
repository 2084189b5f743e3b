/**
 * `driveway backup <dir>` and `driveway restore <dir>`: store/backup.ts does the work and says
 * what a backup holds; here the options, the messages and the exit codes.
 */
import path from 'node:path';
import type { Command } from 'commander';
import { createLogger } from '../common/logger.js';
import { packageVersion } from '../common/package-version.js';
import { NotPrivateError } from '../common/private-files.js';
import { DataDirInUseError } from '../store/storage/instance-lock.js';
import { openAdminBlobs, withAdminStore } from './admin-store.js';
import { CliError, configOption, EXIT, loadCliConfig, type CommandContext } from './context.js';

const BACKUP_HELP = `
Writes <dir>/driveway.sqlite (a consistent snapshot, taken while the server serves),
<dir>/blobs/ (every blob file the snapshot refers to) and <dir>/manifest.json (last).
<dir> must be new or empty. The database is SQLite whatever the store's (PostgreSQL: one
REPEATABLE READ transaction for all tables), so one restore path serves both.
It holds every password hash, 2FA secret and signing key: <dir> is made 0700 and everything
in it 0600; keep it where only the service user can read it, and encrypt copies that leave.
Exit: 0 done, 1 a blob missing or damaged (each named; no manifest), 2 refused (not empty, or
open to other users and not this user's to close) or usage.
`;

const RESTORE_HELP = `
Into what the configuration names: an empty data directory (SQLite and its blob folder), or a
fresh PostgreSQL database (database.url) and its blob backend (S3 when configured).
Checks the manifest, the database's SHA-256 and every blob's hash before writing anything.
Exit: 0 restored, 1 the backup is damaged (each problem named), 2 refused (target not empty,
or open to other users and not this user's to close) or usage, 3 the data directory is in use
by a running instance.
`;

/** store/backup.ts's refusals and content errors as the command line's exit codes. */
async function asCliErrors<T>(work: () => Promise<T>): Promise<T> {
  const { BackupContentError, BackupRefusedError } = await import('../store/backup.js');
  try {
    return await work();
  } catch (err) {
    if (err instanceof BackupRefusedError) throw new CliError(err.message, EXIT.usage);
    if (err instanceof BackupContentError) throw new CliError(err.message, EXIT.failed);
    if (err instanceof DataDirInUseError) throw new CliError(`${err.message}; stop it before restoring`, EXIT.dataDirInUse);
    if (err instanceof NotPrivateError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}

export function registerBackup(program: Command, context: CommandContext): void {
  program
    .command('backup')
    .description('write a consistent backup of the database and its blobs into an empty folder, while the server serves')
    .argument('<dir>', 'the folder to write (new or empty)')
    .addOption(configOption())
    .addHelpText('after', BACKUP_HELP)
    .action(
      context.action(async (dir: string, options: { config?: string }) => {
        const config = loadCliConfig(options.config);
        const { takeBackup } = await import('../store/backup.js');
        const target = path.resolve(dir);
        return asCliErrors(() =>
          withAdminStore(config, async ({ storage, where, durable }) => {
            const blobs = await openAdminBlobs(config, { storage, durable });
            try {
              const warn = (line: string): void => void process.stderr.write(`driveway backup: ${line}\n`);
              const { manifest, rows } = await takeBackup({ config, dir: target, version: packageVersion(), storage, blobs, report: () => undefined, warn });
              process.stdout.write(
                `backup of ${where} in ${target}: schema ${manifest.schemaVersion}, ${Object.keys(manifest.tables).length} tables, ${rows} rows, ` +
                  `${manifest.blobs.files} blob files (${manifest.blobs.bytes} bytes), database sha256 ${manifest.database.sha256}\n`,
              );
              return EXIT.ok;
            } finally {
              await blobs.close();
            }
          }),
        );
      }),
    );
}

export function registerRestore(program: Command, context: CommandContext): void {
  program
    .command('restore')
    .description('restore a backup into an empty data directory or a fresh PostgreSQL database')
    .argument('<dir>', 'a folder written by driveway backup')
    .addOption(configOption())
    .addHelpText('after', RESTORE_HELP)
    .action(
      context.action(async (dir: string, options: { config?: string }) => {
        const config = loadCliConfig(options.config);
        const { restoreBackup } = await import('../store/backup.js');
        const source = path.resolve(dir);
        const report = (line: string): void => void process.stdout.write(`${line}\n`);
        const manifest = await asCliErrors(() =>
          restoreBackup({ config, dir: source, log: createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel, undefined, config.log.format), report }),
        );
        const into = config.database.url === undefined ? config.dataDir : 'the database named by database.url';
        report(`restored the backup of ${manifest.created} (schema ${manifest.schemaVersion}, ${manifest.blobs.files} blob files) into ${into}: start driveway on it`);
        return EXIT.ok;
      }),
    );
}
