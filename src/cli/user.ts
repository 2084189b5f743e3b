/**
 * `driveway user list | create | reset-password | disable | enable`: accounts, on a stopped or a
 * running instance (admin-store.ts says how). The work is store/ops/operator-users.ts's; this
 * file parses, reads a password from stdin when asked, and prints.
 */
import type { Command } from 'commander';
import { systemClock } from '../common/clock.js';
import type { Config } from '../common/config.js';
import { OperatorRefusal, type OperatorEnv } from '../store/ops/operator-users.js';
import { generatePassword } from '../store/passwords.js';
import type { Sql } from '../store/storage/sql.js';
import { withAdminStore } from './admin-store.js';
import { CliError, configOption, EXIT, loadCliConfig, type CommandContext } from './context.js';

interface ConfigFlag {
  config?: string;
}

/** The whole of standard input, less one trailing newline: `printf '%s' "$PW" |` and `echo "$PW" |` both work. */
async function readPasswordFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new CliError('--password-stdin reads the password from standard input; pipe it in', EXIT.usage);
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
  if (text === '') throw new CliError('--password-stdin: standard input was empty', EXIT.usage);
  return text;
}

/** Runs an account operation on the configured store; a refusal is exit 1 with its message. */
async function onAccounts<T>(options: ConfigFlag, work: (env: OperatorEnv, config: Config) => Promise<T>): Promise<T> {
  const config = loadCliConfig(options.config);
  return withAdminStore(config, async ({ storage }) => {
    const sql: Sql = storage.sql;
    try {
      return await work({ sql, clock: systemClock, scryptCost: config.store.scryptCost }, config);
    } catch (err) {
      if (err instanceof OperatorRefusal) throw new CliError(err.message, EXIT.failed);
      throw err;
    }
  });
}

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ').trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}

export function registerUser(program: Command, context: CommandContext): void {
  const user = program
    .command('user')
    .description('list, create, reset the password of, disable or enable a user (works while the server runs)');

  user
    .command('list')
    .description('every user of every organization: login, name, admin, active, disk used / quota, organization')
    .addOption(configOption())
    .action(
      context.action(async (options: ConfigFlag) => {
        const { allUsers } = await import('../store/storage/users.js');
        const rows = await onAccounts(options, (env) => allUsers(env.sql));
        process.stdout.write(
          table(
            ['LOGIN', 'NAME', 'ADMIN', 'ACTIVE', 'DISK USED / QUOTA', 'ORG'],
            rows.map((u) => [
              u.username,
              u.fullname,
              u.is_admin === 1 ? (u.is_builtin === 1 ? 'built-in' : 'yes') : 'no',
              u.is_active === 1 ? 'yes' : 'no',
              `${formatBytes(u.disk_used)} / ${u.disk_quota > 0 ? formatBytes(u.disk_quota) : 'unlimited'}`,
              u.org_id,
            ]),
          ),
        );
        return EXIT.ok;
      }),
    );

  user
    .command('create <name>')
    .description('create an active user whose login is their email; prints a random password unless --password-stdin')
    .requiredOption('--email <email>', "the user's email, which is also their login name")
    .option('--admin', 'an administrator of their organization')
    .option('--org <id>', 'the organization', 'default')
    .option('--password-stdin', 'read the password from standard input instead of generating one')
    .addOption(configOption())
    .action(
      context.action(async (name: string, options: ConfigFlag & { email: string; admin?: boolean; org: string; passwordStdin?: boolean }) => {
        const generated = options.passwordStdin ? undefined : generatePassword();
        const password = generated ?? (await readPasswordFromStdin());
        const { createAccount } = await import('../store/ops/operator-users.js');
        const uuid = await onAccounts(options, (env) =>
          createAccount(env, { fullname: name, email: options.email, password, isAdmin: options.admin === true, orgId: options.org }),
        );
        process.stderr.write(`created ${options.email} (${uuid})${options.admin ? ', an administrator' : ''} in organization ${options.org}\n`);
        if (generated) process.stdout.write(`${generated}\n`);
        return EXIT.ok;
      }),
    );

  user
    .command('reset-password <login>')
    .description("set a new password (printed, or read with --password-stdin); ends the user's sessions and deletes their app passwords")
    .option('--password-stdin', 'read the new password from standard input instead of generating one')
    .option('--disable-2fa', 'also turn two-factor authentication off (a lost authenticator); it stays on otherwise')
    .addOption(configOption())
    .addHelpText('after', '\n<login> is `admin` for the built-in admin, else the user\'s email (or UUID).')
    .action(
      context.action(async (login: string, options: ConfigFlag & { passwordStdin?: boolean; disable2fa?: boolean }) => {
        const generated = options.passwordStdin ? undefined : generatePassword();
        const password = generated ?? (await readPasswordFromStdin());
        const { resetPassword } = await import('../store/ops/operator-users.js');
        const reset = await onAccounts(options, (env) => resetPassword(env, login, password, { disableTwofa: options.disable2fa === true }));
        process.stderr.write(
          `password of ${login} reset; ${reset.sessionsEnded} session(s) ended, ${reset.appPasswordsDeleted} app password(s) deleted` +
            (reset.twofaKept ? '; two-factor authentication stays on (--disable-2fa turns it off)' : '') +
            '\n',
        );
        if (generated) process.stdout.write(`${generated}\n`);
        return EXIT.ok;
      }),
    );

  for (const [verb, active] of [['disable', false], ['enable', true]] as const) {
    user
      .command(`${verb} <login>`)
      .description(active ? 'let a disabled user log in again' : 'refuse the user\'s login and end their sessions at once (files are kept)')
      .addOption(configOption())
      .action(
        context.action(async (login: string, options: ConfigFlag) => {
          const { setAccountActive } = await import('../store/ops/operator-users.js');
          const outcome = await onAccounts(options, (env) => setAccountActive(env, login, active));
          const state = outcome.changed ? `${verb}d` : `already ${verb}d`;
          process.stderr.write(`${login} ${state}${active ? '' : `; ${outcome.sessionsEnded} session(s) ended`}\n`);
          return EXIT.ok;
        }),
      );
  }
}
