/**
 * The `driveway` command line (commander): builds the program from the commands listed in
 * commands.ts, runs it, and turns every way it can end into an exit code. Owns the rules every
 * command shares: `--help` on each, `--version` from package.json, a usage error (unknown command
 * or option, a missing argument) is one line on stderr and exit 2, a failure is one line and
 * exit 1 (the stack only with DRIVEWAY_LOG_LEVEL=debug), never a stack trace otherwise.
 * Without a subcommand, `driveway [--config FILE] [--only PART]` is `driveway serve`, as before.
 */
import { Command, CommanderError, Option } from 'commander';
import { ConfigError, loadConfig, type Config } from '../common/config.js';
import { packageVersion } from '../common/package-version.js';
import { COMMANDS } from './commands.js';

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

export { packageVersion };

const TOP_LEVEL_FLAGS = new Set(['-h', '--help', '-V', '--version']);

/** `driveway`, `driveway --config x`, `driveway --only store`: the default command, serve. */
function withDefaultCommand(args: readonly string[]): string[] {
  const first = args[0];
  if (first === undefined || (first.startsWith('-') && !TOP_LEVEL_FLAGS.has(first))) return ['serve', ...args];
  return [...args];
}

function debugWanted(): boolean {
  const level = process.env.DRIVEWAY_LOG_LEVEL;
  return level === 'debug' || level === 'trace';
}

/** Runs the command line; resolves to the exit code, or undefined while `serve` runs. */
export async function runCli(args: readonly string[], deps: CliDeps): Promise<CommandResult> {
  let result: CommandResult = EXIT.ok;
  let commandName = 'driveway';
  const program = new Command('driveway')
    .description('a File Management Service store and a WebDAV bridge in front of it')
    .version(packageVersion(), '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help for a command')
    .exitOverride()
    .configureOutput({
      // commander's own errors are one line already ("error: unknown option '--x'").
      outputError: (text, write) => write(`driveway: ${text.replace(/^error: /, '')}`),
    })
    .addHelpText(
      'after',
      '\nPrecedence of settings: defaults < config file < DRIVEWAY_* environment < flags.\n' +
        'Without a command, driveway runs `serve`. Exit codes: 0 ok, 1 failed, 2 usage, 3 data directory in use.',
    );
  const context: CommandContext = {
    deps,
    action:
      (handler) =>
      async (...actionArgs) => {
        const command = actionArgs[actionArgs.length - 1];
        if (command instanceof Command) {
          const names: string[] = [];
          for (let c: Command | null = command; c; c = c.parent) names.unshift(c.name());
          commandName = names.join(' ');
        }
        result = await handler(...actionArgs);
      },
  };
  for (const register of COMMANDS) register(program, context);
  try {
    await program.parseAsync(withDefaultCommand(args), { from: 'user' });
    return result;
  } catch (err) {
    if (err instanceof CommanderError) {
      // --help and --version end here too, with code 0; every other commander error is a usage error.
      return err.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    if (err instanceof CliError) {
      process.stderr.write(`${commandName}: ${err.message}\n`);
      return err.exitCode;
    }
    const text = err instanceof Error ? (debugWanted() ? (err.stack ?? err.message) : err.message) : String(err);
    process.stderr.write(`${commandName}: failed: ${text}\n`);
    return EXIT.failed;
  }
}
