/**
 * Real driveway instances for the multi-instance suite: `src/main.ts` as child processes (store
 * plus in-process bridge, as `npm start` runs them), each with its own data directory and ports,
 * all over one PostgreSQL database and one s3rver bucket. No JWT secret is configured: a token
 * signed by one verifies on the others through the key ring they share in the database
 * (jwt_keys), as an operator runs them. Stopped by the PIDs
 * spawned here: SIGTERM, then SIGKILL after a grace period.
 */
import { spawnDriveway, type DrivewayProcess } from '../helpers/driveway-process.js';
import { postgresS3Env } from '../helpers/s3-server.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

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
  let started: DrivewayProcess;
  try {
    started = await spawnDriveway({
      dataDir: tmp.dir,
      startupMs: STARTUP_MS,
      env: { DRIVEWAY_ADMIN_PASSWORD: shared.adminPassword, DRIVEWAY_LOG_LEVEL: 'warn', ...postgresS3Env(shared.databaseUrl, shared.s3), ...shared.env },
    });
  } catch (err) {
    tmp.remove();
    throw new Error(`instance ${name}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const { child } = started;
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await started.exited;
      clearTimeout(timer);
    }
    tmp.remove();
  };
  return { storeUrl: started.storeUrl, davUrl: started.davUrl, pid: child.pid as number, output: started.output, stop };
}
