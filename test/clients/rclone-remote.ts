/**
 * An rclone webdav remote for a client suite, configured only through RCLONE_CONFIG_<NAME>_*
 * variables (as rclone's own servetest does), with a config file that does not exist and a temp
 * HOME, so the machine's own rclone setup is never read. The password is passed obscured, as
 * rclone wants it. `run` adds bounded retries and a hard time limit to every call.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describeRun, runProgram, type ProgramRun } from './run-program.js';

export interface RcloneRemoteOptions {
  /** Absolute path of the rclone program (requireBinary('rclone').path). */
  rclonePath: string;
  /** Remote name, upper-case letters only; `<name>:` then names it on the command line. */
  name: string;
  url: string;
  username: string;
  password: string;
  /** A temp dir of the suite: rclone's HOME goes below it. */
  tmpDir: string;
  vendor?: string;
  timeoutMs?: number;
}

export interface RcloneRemote {
  /** `br:` for name BR. */
  readonly prefix: string;
  readonly env: NodeJS.ProcessEnv;
  /** rclone with these arguments, one retry at most, in the suite's temp dir. */
  run(args: readonly string[]): Promise<ProgramRun>;
}

export async function rcloneRemote(options: RcloneRemoteOptions): Promise<RcloneRemote> {
  const { rclonePath, name, tmpDir } = options;
  if (!/^[A-Z]+$/.test(name)) throw new Error(`remote name must be upper-case letters: ${name}`);
  const home = path.join(tmpDir, `rclone-home-${name.toLowerCase()}`);
  mkdirSync(home, { recursive: true });
  const timeoutMs = options.timeoutMs ?? 180_000;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: home,
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_CACHE_HOME: path.join(home, '.cache'),
    RCLONE_CONFIG: path.join(tmpDir, 'no-such-rclone.conf'),
    [`RCLONE_CONFIG_${name}_TYPE`]: 'webdav',
    [`RCLONE_CONFIG_${name}_URL`]: options.url,
    [`RCLONE_CONFIG_${name}_VENDOR`]: options.vendor ?? 'other',
    [`RCLONE_CONFIG_${name}_USER`]: options.username,
  };
  const obscured = await runProgram(rclonePath, ['obscure', options.password], { env, timeoutMs: 30_000 });
  if (obscured.code !== 0) throw new Error(`rclone obscure failed\n${describeRun(obscured)}`);
  env[`RCLONE_CONFIG_${name}_PASS`] = obscured.stdout.trim();
  return {
    prefix: `${name.toLowerCase()}:`,
    env,
    run: (args) => runProgram(rclonePath, [...args, '--retries', '1', '--low-level-retries', '1'], { cwd: tmpDir, env, timeoutMs }),
  };
}
