/**
 * `driveway check [--repair]`: the store's fsck (store/ops/consistency-check.ts says what it
 * verifies and what --repair changes). Prints one line per finding and a summary; exit 0 when
 * everything is consistent (or was repaired), 1 when something is wrong, 2 for a usage error.
 */
import type { Command } from 'commander';
import { openAdminBlobs, withAdminStore } from './admin-store.js';
import { configOption, EXIT, loadCliConfig, type CommandContext } from './context.js';

export function registerCheck(program: Command, context: CommandContext): void {
  program
    .command('check')
    .description("verify every blob's presence and hash, disk_used of users and groups, blob reference counts, and orphan blobs")
    .option('--repair', 'recompute disk_used and reference counts, remove orphan blobs past the grace period (never deletes a file whose blob is missing)')
    .addOption(configOption())
    .addHelpText('after', '\nExit: 0 consistent (or repaired), 1 something is wrong (each finding on its own line), 2 usage.')
    .action(
      context.action(async (options: { config?: string; repair?: boolean }) => {
        const config = loadCliConfig(options.config);
        const { checkConsistency } = await import('../store/ops/consistency-check.js');
        return withAdminStore(config, async ({ storage, where, durable }) => {
          const blobs = await openAdminBlobs(config, { storage, durable });
          try {
            const repair = options.repair === true;
            process.stdout.write(`checking ${where} and the ${blobs.kind} blob backend${repair ? ' (repairing what is safe)' : ''}\n`);
            const summary = await checkConsistency({
              sql: storage.sql,
              blobs,
              graceMs: config.store.blobs.gcGraceSec * 1000,
              repair,
              now: () => Date.now(),
              onFinding: (finding) => process.stdout.write(`${finding.repaired ? 'REPAIRED' : 'PROBLEM '} ${finding.kind}: ${finding.text}\n`),
            });
            const young = summary.youngUnreferenced > 0 ? `; ${summary.youngUnreferenced} unreferenced blob(s) younger than the grace period left alone` : '';
            process.stdout.write(
              `${summary.blobsVerified} blob(s) verified (${summary.bytesVerified} bytes), ${summary.ownersChecked} user(s) and group(s) checked${young}\n` +
                (summary.findings.length === 0
                  ? 'clean\n'
                  : `${summary.findings.length} finding(s), ${summary.findings.length - summary.remaining} repaired, ${summary.remaining} remaining\n`),
            );
            return summary.remaining === 0 ? EXIT.ok : EXIT.failed;
          } finally {
            await blobs.close();
          }
        });
      }),
    );
}
