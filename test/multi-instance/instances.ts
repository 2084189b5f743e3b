/**
 * Real driveway instances for the multi-instance suite: `src/main.ts` as child processes (store
 * plus in-process bridge, as `npm start` runs them), each with its own data directory and ports,
 * all over one PostgreSQL database and one s3rver bucket. No JWT secret is configured: a token
 * signed by one verifies on the others through the key ring they share in the database
 * (jwt_keys), as an operator runs them. Stopped by the PIDs
 * spawned here: SIGTERM, then SIGKILL after a grace period.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { postgresS3Env } from '../helpers/s3-server.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const STARTUP_MS = 60_000;

export interface Instance {
  /** The store's REST API, e.g. http://127.0.0.1:41234 */
  storeUrl: string;
  /** The WebDAV bridge, without a trailing slash. */
  davUrl: string;
  pid: number;
  /** What the process printed so far (for a failing test's message). */
  output(): string;
  stop(): Promise<void>;
}

export interface SharedBackends {
  databaseUrl: string;
  s3: { endpoint: string; bucket: string };
  adminPassword: string;
  /** Further DRIVEWAY_* settings for every instance. */
  env?: Record<string, string>;
}

export async function startInstance(shared: SharedBackends, name: string): Promise<Instance> {
  const tmp = makeTmpDir(`driveway-instance-${name}-`);
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      DRIVEWAY_DATA_DIR: tmp.dir,
      DRIVEWAY_STORE_PORT: '0',
      DRIVEWAY_DAV_PORT: '0',
      DRIVEWAY_HOST: '127.0.0.1',
      DRIVEWAY_ADMIN_PASSWORD: shared.adminPassword,
      DRIVEWAY_LOG_LEVEL: 'warn',
      ...postgresS3Env(shared.databaseUrl, shared.s3),
      ...shared.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    tmp.remove();
  };
  try {
    const deadline = Date.now() + STARTUP_MS;
    for (;;) {
      const store = /driveway store:\s+(http:\/\/\S+)/.exec(output);
      const dav = /driveway WebDAV:\s+(http:\/\/\S+?)\/?\s/.exec(output);
      if (store && dav) {
        return { storeUrl: store[1] as string, davUrl: dav[1] as string, pid: child.pid as number, output: () => output, stop };
      }
      if (child.exitCode !== null) throw new Error(`instance ${name} exited early (${child.exitCode}): ${output}`);
      if (Date.now() > deadline) throw new Error(`instance ${name} did not start within ${STARTUP_MS} ms: ${output}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } catch (err) {
    await stop();
    throw err;
  }
}
