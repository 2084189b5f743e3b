/**
 * `driveway prune [--dry-run] [--verbose]`: applies the retention settings now (store/ops/retention.ts
 * says what they remove and why that is safe beside a serving instance), on a stopped or a
 * running instance (admin-store.ts says how). Prints what it removed, or with --dry-run what it
 * would remove, changing nothing; --verbose adds a line per user or group.
 */
import type { Command } from 'commander';
import { createLogger } from '../common/logger.js';
import { openAdminBlobs, withAdminStore } from './admin-store.js';
import { configOption, EXIT, loadCliConfig, type CommandContext } from './context.js';

export function registerPrune(program: Command, context: CommandContext): void {
  program
    .command('prune')
    .description('apply the retention settings now: remove old revisions and expired trash items, freeing their quota')
    .option('--dry-run', 'print what would be removed, change nothing')
    .option('--verbose', 'one line per user or group with something to remove')
    .addOption(configOption())
    .addHelpText('after', '\nSettings: store.retention.* and each organization\'s own (README "Retention"). Exit: 0 done, 1 failed, 2 usage.')
    .action(
      context.action(async (options: { config?: string; dryRun?: boolean; verbose?: boolean }) => {
        const config = loadCliConfig(options.config);
        const { applyRetention } = await import('../store/ops/retention.js');
        return withAdminStore(config, async ({ storage, where, durable }) => {
          const blobs = await openAdminBlobs(config, { storage, durable });
          try {
            const dryRun = options.dryRun === true;
            process.stdout.write(`pruning ${where}${dryRun ? ' (dry run: nothing is changed)' : ''}\n`);
            const log = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
            const report = await applyRetention({ sql: storage.sql, blobs, log, settings: config.store.retention }, { now: Date.now(), dryRun });
            if (options.verbose) {
              for (const owner of report.owners) {
                process.stdout.write(
                  `${owner.ownerType.toLowerCase()} ${owner.ownerUuid} (${owner.name}): ${owner.revisions} revision(s), ${owner.trashItems} trash item(s), ${owner.bytesFreed} bytes\n`,
                );
              }
            }
            const verb = dryRun ? 'would remove' : 'removed';
            process.stdout.write(
              `${verb} ${report.revisions} revision(s) and ${report.trashItems} trash item(s) of ${report.owners.length} of ${report.ownersChecked} user(s) and group(s); ${report.bytesFreed} bytes ${dryRun ? 'would be ' : ''}freed\n`,
            );
            return EXIT.ok;
          } finally {
            await blobs.close();
          }
        });
      }),
    );
}
