/**
 * The real entry point (src/main.ts under tsx) as a child process, for tests of what only a
 * process shows: signals, exit codes, the log, and dependencies that come and go. Ports are
 * chosen by the OS; the URLs are read from the lines main prints. Stopped by its PID only.
 *
 *   const instance = await spawnDriveway({ dataDir, env: { DRIVEWAY_DATABASE_URL: url } });
 *   instance.child.kill('SIGTERM'); expect(await instance.exited).toBe(0);
 *   const run = await runDriveway(['backup', dir], { env, umask: '000' });   // a command, to its end
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STARTUP_MS = 30_000;
export const ADMIN_PASSWORD = 'Admin-Passw0rd';
export const ADMIN_BASIC = `Basic ${Buffer.from(`admin:${ADMIN_PASSWORD}`).toString('base64')}`;

export interface DrivewayProcess {
  child: ChildProcess;
  storeUrl: string;
  davUrl: string;
  /** Everything printed so far, stdout and stderr. */
  output(): string;
  /** The exit code (null when ended by a signal). */
  exited: Promise<number | null>;
  /** SIGKILL if still running (for afterAll). */
  kill(): void;
}

/** How the process is started: under a umask of its own, or as another user (runuser; the caller must be root). */
export interface LaunchOptions {
  /** `000`: set by a shell before driveway starts, as an operator's shell would. */
  umask?: string;
  /** A local user to run as (`nobody`), through runuser. */
  user?: string;
}

/** The command line that starts src/main.ts with `args`, under the launch options. */
function commandLineOf(args: readonly string[], launch: LaunchOptions): [string, string[]] {
  let line = [process.execPath, '--import', 'tsx', 'src/main.ts', ...args];
  if (launch.umask !== undefined) line = ['/bin/sh', '-c', 'umask "$0" && exec "$@"', launch.umask, ...line];
  if (launch.user !== undefined) line = ['runuser', '-u', launch.user, '--', ...line];
  return [line[0] as string, line.slice(1)];
}

export interface SpawnOptions extends LaunchOptions {
  dataDir: string;
  /** DRIVEWAY_* settings, over the defaults above (admin password, log level info); undefined removes one. */
  env?: Record<string, string | undefined>;
  args?: readonly string[];
  /** How long it may take to print both URLs (default 30 s). */
  startupMs?: number;
}

export async function spawnDriveway(options: SpawnOptions): Promise<DrivewayProcess> {
  const [file, args] = commandLineOf(options.args ?? [], options);
  const child = spawn(file, args, {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DRIVEWAY_DATA_DIR: options.dataDir,
      DRIVEWAY_STORE_PORT: '0',
      DRIVEWAY_DAV_PORT: '0',
      DRIVEWAY_HOST: '127.0.0.1',
      DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
      DRIVEWAY_LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const startupMs = options.startupMs ?? STARTUP_MS;
  const deadline = Date.now() + startupMs;
  for (;;) {
    const store = /driveway store:\s+(http:\/\/\S+)/.exec(output);
    const dav = /driveway WebDAV:\s+(http:\/\/\S+?)\/?\s/.exec(output);
    if (store && dav) return { child, storeUrl: store[1] as string, davUrl: dav[1] as string, output: () => output, exited, kill };
    if (child.exitCode !== null) throw new Error(`driveway exited early (${child.exitCode}): ${output}`);
    if (Date.now() > deadline) {
      kill();
      throw new Error(`driveway did not start within ${startupMs} ms: ${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

export interface CommandRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

export interface RunOptions extends LaunchOptions {
  /** DRIVEWAY_* settings over the test process's environment (log level warn unless given). */
  env?: Record<string, string>;
  /** Killed (SIGKILL) past this; default 90 s. */
  timeoutMs?: number;
}

/** Runs a `driveway` command (backup, restore, check...) to its end: exit code, stdout, stderr. */
export async function runDriveway(args: readonly string[], options: RunOptions = {}): Promise<CommandRun> {
  const [file, argv] = commandLineOf(args, options);
  const child = spawn(file, argv, {
    cwd: REPO_ROOT,
    env: { ...process.env, DRIVEWAY_LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
  const code = await new Promise<number | null>((resolve) => child.once('close', (exitCode) => resolve(exitCode)));
  clearTimeout(timer);
  return { code, stdout, stderr };
}
