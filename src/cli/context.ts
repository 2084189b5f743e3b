/**
 * What every `driveway` command shares with the program that runs it (program.ts): the context
 * its register function is handed, its failures and exit codes, the `--config` option and the
 * configuration it reads. Below program.ts and the commands (commands.ts lists them), so neither
 * imports the other.
 */
import { Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '../common/config.js';

export interface ServeOptions {
  configFile?: string | undefined;
  only?: 'store' | 'bridge' | undefined;
}

/** What run.ts hands the command line: the server itself stays in run.ts. */
export interface CliDeps {
  serve(options: ServeOptions): Promise<void>;
}

/** A failure a command reports: one line (prefixed with the command's name), and its exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** Exit codes every command shares (docs/operations.md). */
export const EXIT = { ok: 0, failed: 1, usage: 2, dataDirInUse: 3 } as const;

/**
 * What a command's action hands back: an exit code, or `undefined` for a command that keeps
 * the process running (serve).
 */
export type CommandResult = number | undefined;

export interface CommandContext {
  deps: CliDeps;
  /** Wraps an action so its result becomes the process's exit code. */
  action<A extends unknown[]>(handler: (...args: A) => Promise<CommandResult>): (...args: A) => Promise<void>;
}

/** `--config FILE`, which every command that reads the configuration takes. */
export function configOption(): Option {
  return new Option('--config <file>', 'YAML configuration (config/example.yaml); DRIVEWAY_* variables override it');
}

/** The configuration as the server reads it; a bad one is a usage error naming the key. */
export function loadCliConfig(configFile: string | undefined): Config {
  try {
    return loadConfig({ configFile });
  } catch (err) {
    if (err instanceof ConfigError) throw new CliError(err.message, EXIT.usage);
    throw err;
  }
}
