/** `driveway serve` (the default command): the store and the bridge, as run.ts runs them. */
import { Option, type Command } from 'commander';
import { configOption, type CommandContext } from './context.js';

export function registerServe(program: Command, context: CommandContext): void {
  program
    .command('serve')
    .description('run the store and the WebDAV bridge (the default command)')
    .addOption(configOption())
    .addOption(new Option('--only <part>', 'run only the store, or only the bridge (against DRIVEWAY_STORE_URL)').choices(['store', 'bridge']))
    .action(
      context.action(async (options: { config?: string; only?: 'store' | 'bridge' }) => {
        await context.deps.serve({ configFile: options.config, only: options.only });
        return undefined;
      }),
    );
}
