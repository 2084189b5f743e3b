/** `driveway migrate`: an embedded installation to PostgreSQL (+ S3); store/migrate-command.ts does it. */
import { Option, type Command } from 'commander';
import { NOT_COPIED } from '../store/storage/embedded-copy.js';
import { configOption, type CommandContext } from './context.js';

const MORE_HELP = `
Source: <dataDir>/driveway.sqlite and <dataDir>/blobs, dataDir from --config or
DRIVEWAY_DATA_DIR (default ./data). No driveway may be running on it.
Target: what a --to-* flag leaves out comes from the configuration of the new deployment
(database.url / DRIVEWAY_DATABASE_URL, DRIVEWAY_S3_* or store.blobs.s3.*). S3 credentials come
from the AWS SDK's usual sources (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, a profile, a role).

Interrupted, run the same command again: it continues where it stopped. Every blob is read
back and hashed, every table counted and checksummed on both sides.
Not copied: ${[...NOT_COPIED].join(', ')}.
Exit: 0 done, 1 failed or mismatch, 2 refused or usage, 3 data directory in use.
`;

export function registerMigrate(program: Command, context: CommandContext): void {
  program
    .command('migrate')
    .description('move an embedded installation (SQLite + blob folder) to PostgreSQL and S3')
    .addOption(configOption())
    .option('--to-database <url>', 'the PostgreSQL database to fill: empty, or holding an unfinished migration of this store (default: database.url)')
    .option('--to-s3-bucket <bucket>', 'copy the blob files into this bucket (default: DRIVEWAY_S3_BUCKET / store.blobs.s3.bucket); without one they stay in <dataDir>/blobs')
    .option('--to-s3-endpoint <url>', 'e.g. http://127.0.0.1:9000 (default: DRIVEWAY_S3_ENDPOINT, else AWS)')
    .option('--to-s3-region <region>', 'default: DRIVEWAY_S3_REGION, else us-east-1')
    .option('--to-s3-prefix <prefix>', 'prepended to every object key (default: DRIVEWAY_S3_PREFIX, else none)')
    .option('--to-s3-force-path-style', 'path-style URLs, as most self-hosted servers want')
    // Rows (and blobs) per batch and transaction; tests make it small.
    .addOption(new Option('--batch-rows <n>').hideHelp())
    .addHelpText('after', MORE_HELP)
    .action(
      context.action(async (options: Record<string, string | boolean | undefined>) => {
        const { runMigrate } = await import('../store/migrate-command.js');
        return runMigrate({
          config: options.config,
          'to-database': options.toDatabase,
          'to-s3-bucket': options.toS3Bucket,
          'to-s3-endpoint': options.toS3Endpoint,
          'to-s3-region': options.toS3Region,
          'to-s3-prefix': options.toS3Prefix,
          'to-s3-force-path-style': options.toS3ForcePathStyle,
          'batch-rows': options.batchRows,
        });
      }),
    );
}
