/**
 * The real entry point (src/main.ts under tsx) as a child process, for tests of what only a
 * process shows: signals, exit codes, the log, and dependencies that come and go. Ports are
 * chosen by the OS; the URLs are read from the lines main prints. Stopped by its PID only.
 *
 *   const instance = await spawnDriveway({ dataDir, env: { DRIVEWAY_DATABASE_URL: url } });
 *   instance.child.kill('SIGTERM'); expect(await instance.exited).toBe(0);
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

export interface SpawnOptions {
  dataDir: string;
  /** DRIVEWAY_* settings, over the defaults above (admin password, log level info); undefined removes one. */
  env?: Record<string, string | undefined>;
  args?: readonly string[];
  /** How long it may take to print both URLs (default 30 s). */
  startupMs?: number;
}

export async function spawnDriveway(options: SpawnOptions): Promise<DrivewayProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...(options.args ?? [])], {
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
