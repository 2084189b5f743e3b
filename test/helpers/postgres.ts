/**
 * A throwaway PostgreSQL cluster on loopback for tests: `initdb` into a temp folder, settings for
 * speed (fsync off: the cluster dies with the test run), `pg_ctl start -w` on a free port of
 * 127.0.0.1, a login role with a password, and a cheap fresh database per suite.
 *
 * The server refuses to run as root, and CI runs as root: then every server program runs as the
 * `postgres` system user that Debian's postgresql package creates, and the temp folder is
 * chowned to it. Not root: the programs run as the current user.
 *
 *   const pg = requirePostgres();                     // top of the file: skip loudly, or fail under CI
 *   pg.describe('the store on PostgreSQL', () => {
 *     let url: string;
 *     beforeAll(async () => { url = await (await sharedPostgres()).createDatabase(); });
 *   });
 *
 * sharedPostgres() is the run's cluster, started once by the integration projects' globalSetup
 * (postgres-global-setup.ts) and handed to every worker; outside such a project, one per worker
 * process, stopped when it exits. startPostgres() is a cluster of one's own (fault tests that
 * stop and restart it). A watchdog started with each cluster stops it and removes its folder if the test
 * process dies without stopping it (kill -9 of a worker). Everything stopped is stopped by its
 * data directory (pg_ctl) or by the postmaster PID recorded at start, never by name.
 */
import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { inject } from 'vitest';
import { freeLoopbackPort } from './free-port.js';
import { requireBinary, type RequireBinaryOptions, type RequiredBinary } from './require-binary.js';
import { startWatchdog } from './watchdog.js';

/** Where Debian's postgresql-<major> packages keep the server programs (off PATH). 15 is what .ci/run installs. */
export const POSTGRES_BIN_DIRS = ['/usr/lib/postgresql/15/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/17/bin'];
export const POSTGRES_MIN_MAJOR = 15;

/** The login role the code under test connects as (owner of every database made here), and the bootstrap superuser. */
export const POSTGRES_APP_ROLE = 'driveway';
const SUPERUSER = 'postgres';

export interface RequiredPostgres extends RequiredBinary {
  /** Folder holding initdb, pg_ctl and postgres; empty when missing. */
  binDir: string;
}

/**
 * The gate for a test file that needs PostgreSQL: Debian's /usr/lib/postgresql/15/bin/initdb
 * (or 16, 17), else initdb on PATH. Missing: the suites skip with a warning, or the file fails
 * when CI=true (requireBinary's rule).
 */
export function requirePostgres(options: RequireBinaryOptions = {}): RequiredPostgres {
  const initdb = requireBinary('initdb', { candidates: POSTGRES_BIN_DIRS.map((dir) => path.join(dir, 'initdb')), ...options });
  return { ...initdb, name: 'PostgreSQL (initdb)', binDir: initdb.isAvailable ? path.dirname(initdb.path) : '' };
}

export interface StartPostgresOptions {
  /** Folder of initdb, pg_ctl, postgres; by default found as requirePostgres() finds it. */
  binDir?: string;
  /** Sized for a few driveway instances with a pool each, plus the test's own clients. Default 100. */
  maxConnections?: number;
  /** fsync and synchronous commit on, as a production server runs (benchmarks); default off: test data dies with the run. */
  durable?: boolean;
}

export interface TestPostgres {
  /** postgres://driveway:<password>@127.0.0.1:<port>/driveway: the default database, owned by the app role. */
  url: string;
  /** The same cluster as the bootstrap superuser, for what a test needs above the app (pg_terminate_backend). */
  adminUrl: string;
  host: '127.0.0.1';
  port: number;
  /** The server's major version (15 on Debian 12). */
  major: number;
  /** The server's log (a benchmark reads its statement durations); '' for the run's shared cluster. */
  logFile: string;
  /** Milliseconds that initdb + first start + role took: what a suite pays for a cluster of its own. */
  startMs: number;
  /** A fresh, empty database owned by the app role; its URL. Names default to a unique one. */
  createDatabase(name?: string): Promise<string>;
  dropDatabase(name: string): Promise<void>;
  /** Stops the server, keeping its data (connections fail until startServer). */
  stopServer(): Promise<void>;
  /** Starts the stopped server again: same data directory, same port. */
  startServer(): Promise<void>;
  /** stopServer then startServer. */
  restart(): Promise<void>;
  /** PID of the running postmaster (changes with each start); 0 on the run's shared cluster, which is not the suite's. */
  readonly pid: number;
  /** Stops the server and removes its folder. Idempotent. */
  stop(): Promise<void>;
}

interface RunAs {
  uid?: number;
  gid?: number;
}

/** Root: the `postgres` system user (the server refuses root). Otherwise: whoever we are. */
function serverUser(): RunAs {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${SUPERUSER}:`));
  const fields = line?.split(':');
  if (!fields || fields.length < 4) {
    throw new Error(`running as root, PostgreSQL must run as the '${SUPERUSER}' system user, and there is none (Debian's postgresql package creates it)`);
  }
  return { uid: Number(fields[2]), gid: Number(fields[3]) };
}

interface RunResult {
  code: number | null;
  output: string;
}

function run(file: string, args: string[], runAs: RunAs, env: NodeJS.ProcessEnv, timeoutMs = 120_000): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const options: SpawnOptions = { ...runAs, env, stdio: ['ignore', 'pipe', 'pipe'] };
    const child = spawn(file, args, options);
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

const HAS_PROC = existsSync('/proc/self/stat');

/** Running, not merely a zombie: a stopped postmaster stays one until init reaps it (pg_ctl start left it as init's child). */
function isAlive(pid: number): boolean {
  if (HAS_PROC) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
    } catch {
      return false;
    }
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

const DATABASE_NAME = /^[a-z_][a-z0-9_]{0,62}$/;
let databaseCounter = 0;

async function asAdmin<T>(adminUrl: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** createDatabase and dropDatabase over the superuser's URL; new databases belong to the app role of `appUrl`. */
function databaseOps(adminUrl: string, appUrl: string): Pick<TestPostgres, 'createDatabase' | 'dropDatabase'> {
  const urlFor = (database: string) => {
    const url = new URL(appUrl);
    url.pathname = `/${database}`;
    return url.toString();
  };
  return {
    async createDatabase(name) {
      const database = name ?? `t${process.pid}_${++databaseCounter}_${randomBytes(3).toString('hex')}`;
      if (!DATABASE_NAME.test(database)) throw new Error(`not a plain database name: ${database}`);
      // FILE_COPY: with fsync off its checkpoint is cheap, and it is about twice as fast as
      // PostgreSQL 15's default WAL_LOG for an empty template (20-50 ms here, connecting included).
      await asAdmin(adminUrl, (client) => client.query(`CREATE DATABASE ${database} OWNER ${POSTGRES_APP_ROLE} STRATEGY FILE_COPY`));
      return urlFor(database);
    },
    async dropDatabase(name) {
      if (!DATABASE_NAME.test(name)) throw new Error(`not a plain database name: ${name}`);
      await asAdmin(adminUrl, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Starts a cluster of one's own. Throws, with the server's log, when it cannot. */
export async function startPostgres(options: StartPostgresOptions = {}): Promise<TestPostgres> {
  const began = Date.now();
  const binDir = options.binDir ?? requirePostgres({ warn: () => undefined }).binDir;
  if (!binDir) throw new Error(`PostgreSQL is not installed (no initdb in ${POSTGRES_BIN_DIRS.join(', ')} or on PATH)`);
  const bin = (program: string) => path.join(binDir, program);

  const version = spawnSync(bin('postgres'), ['--version'], { encoding: 'utf8' });
  const major = Number(/(\d+)(?:\.\d+)?/.exec(version.stdout ?? '')?.[1] ?? 0);
  if (major < POSTGRES_MIN_MAJOR) throw new Error(`PostgreSQL ${POSTGRES_MIN_MAJOR}+ needed; ${bin('postgres')} says: ${version.stdout || version.error?.message}`);

  const runAs = serverUser();
  // Short: the unix socket path (folder + /.s.PGSQL.<port>) must stay under 107 bytes.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'dw-pg-'));
  if (runAs.uid !== undefined) chownSync(dir, runAs.uid, runAs.gid ?? runAs.uid);
  chmodSync(dir, 0o700);
  const dataDir = path.join(dir, 'data');
  const logFile = path.join(dir, 'postgres.log');
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8', TZ: 'UTC' };
  const superPassword = randomBytes(18).toString('hex');
  const appPassword = randomBytes(18).toString('hex');

  let watchdog: { stop(): void } | undefined;
  let pid = 0;
  let port = 0;
  let stopped = false;
  const removeFolder = () => rmSync(dir, { recursive: true, force: true });
  const log = () => {
    try {
      return readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n');
    } catch {
      return '(no server log)';
    }
  };

  try {
    const pwfile = path.join(dir, 'pwfile');
    writeFileSync(pwfile, `${superPassword}\n`, { mode: 0o600 });
    if (runAs.uid !== undefined) chownSync(pwfile, runAs.uid, runAs.gid ?? runAs.uid);
    const initdb = await run(
      bin('initdb'),
      ['-D', dataDir, '-U', SUPERUSER, `--pwfile=${pwfile}`, '--auth-local=trust', '--auth-host=scram-sha-256', '--encoding=UTF8', '--locale=C.UTF-8', '--no-sync', '--no-instructions'],
      runAs,
      env,
    );
    rmSync(pwfile, { force: true });
    if (initdb.code !== 0) throw new Error(`initdb failed (exit ${initdb.code}):\n${initdb.output}`);

    // Appended after initdb's own lines, so these win. Durability is off unless asked for: the
    // data dies with the test run; pg_ctl stop -m fast still checkpoints, so restart() keeps commits.
    appendFileSync(
      path.join(dataDir, 'postgresql.conf'),
      [
        '',
        '# driveway test harness',
        "listen_addresses = '127.0.0.1'",
        `unix_socket_directories = '${dir}'`,
        `max_connections = ${options.maxConnections ?? 100}`,
        'shared_buffers = 32MB',
        ...(options.durable ? [] : ['fsync = off', 'synchronous_commit = off', 'full_page_writes = off']),
        "timezone = 'UTC'",
        'logging_collector = off',
        'log_min_messages = warning',
        '',
      ].join('\n'),
    );

    const startServer = async (): Promise<void> => {
      const result = await run(bin('pg_ctl'), ['start', '-w', '-t', '60', '-D', dataDir, '-l', logFile, '-o', `-p ${port}`], runAs, env);
      if (result.code !== 0) throw new Error(`pg_ctl start on 127.0.0.1:${port} failed (exit ${result.code}):\n${result.output}\n${log()}`);
      pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    };

    // A port free a moment ago can be taken before the server binds it: a few fresh tries.
    for (let attempt = 1; ; attempt++) {
      port = await freeLoopbackPort();
      try {
        await startServer();
        break;
      } catch (err) {
        if (attempt >= 3 || !/could not bind|Address already in use/i.test(log())) throw err;
      }
    }

    // If this worker dies without stop(): stop the cluster by its data directory, remove the folder.
    watchdog = startWatchdog('"$1" stop -D "$2" -m immediate -w -t 20 >/dev/null 2>&1; rm -rf "$3"', [bin('pg_ctl'), dataDir, dir], { ...runAs, env });

    const adminUrl = `postgres://${SUPERUSER}:${superPassword}@127.0.0.1:${port}/postgres`;
    const handleUrl = `postgres://${POSTGRES_APP_ROLE}:${appPassword}@127.0.0.1:${port}/${POSTGRES_APP_ROLE}`;
    await asAdmin(adminUrl, async (client) => {
      await client.query(`CREATE ROLE ${POSTGRES_APP_ROLE} LOGIN CREATEDB PASSWORD '${appPassword}'`);
      await client.query(`CREATE DATABASE ${POSTGRES_APP_ROLE} OWNER ${POSTGRES_APP_ROLE}`);
    });

    const stopServer = async (): Promise<void> => {
      const result = await run(bin('pg_ctl'), ['stop', '-w', '-t', '30', '-m', 'fast', '-D', dataDir], runAs, env);
      if (result.code === 0 && (await waitForExit(pid, 5_000))) return;
      // pg_ctl could not stop it: the postmaster we recorded, and only it.
      if (pid && isAlive(pid)) {
        process.kill(pid, 'SIGQUIT');
        if (!(await waitForExit(pid, 10_000))) process.kill(pid, 'SIGKILL');
        await waitForExit(pid, 5_000);
      }
    };

    const handle: TestPostgres = {
      url: handleUrl,
      adminUrl,
      host: '127.0.0.1',
      port,
      major,
      logFile,
      startMs: Date.now() - began,
      get pid() {
        return pid;
      },
      ...databaseOps(adminUrl, handleUrl),
      stopServer,
      startServer,
      async restart() {
        await stopServer();
        await startServer();
      },
      async stop() {
        if (stopped) return;
        stopped = true;
        try {
          await stopServer();
        } finally {
          watchdog?.stop();
          removeFolder();
        }
      },
    };
    return handle;
  } catch (err) {
    // A half-started cluster: stop what we started, by its data directory, then remove it.
    if (pid && isAlive(pid)) {
      spawnSync(bin('pg_ctl'), ['stop', '-m', 'immediate', '-D', dataDir], { ...runAs, env, stdio: 'ignore' });
      if (isAlive(pid)) process.kill(pid, 'SIGKILL');
    }
    watchdog?.stop();
    removeFolder();
    throw err;
  }
}

/** What the run-wide cluster (test/helpers/postgres-global-setup.ts) hands the workers. */
export interface ProvidedPostgres {
  url: string;
  adminUrl: string;
  port: number;
  major: number;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** null: PostgreSQL is not installed (requirePostgres() skips or fails the suites). */
    drivewayPostgres: ProvidedPostgres | null;
  }
}

function providedPostgres(): ProvidedPostgres | undefined {
  try {
    return inject('drivewayPostgres') ?? undefined;
  } catch {
    return undefined; // not inside a vitest worker
  }
}

/** A handle on the run-wide cluster: databases yes, but it is not this suite's to stop or restart. */
function attach(provided: ProvidedPostgres): TestPostgres {
  const notYours = async () => {
    throw new Error("the run's shared PostgreSQL cluster is not a suite's to stop or restart; fault tests startPostgres() their own");
  };
  return {
    url: provided.url,
    adminUrl: provided.adminUrl,
    host: '127.0.0.1',
    port: provided.port,
    major: provided.major,
    logFile: '',
    startMs: 0,
    pid: 0,
    ...databaseOps(provided.adminUrl, provided.url),
    stopServer: notYours,
    startServer: notYours,
    restart: notYours,
    stop: notYours,
  };
}

let shared: Promise<TestPostgres> | undefined;

/**
 * The cluster every suite shares, each in databases of its own (createDatabase): the one the
 * integration projects' globalSetup started for the whole run when there is one, otherwise one
 * per worker process (a test file, as vitest isolates files), started on first call and stopped
 * when the process exits. A suite must not stop or restart it (fault tests start their own).
 */
export function sharedPostgres(): Promise<TestPostgres> {
  if (!shared) {
    const provided = providedPostgres();
    if (provided) {
      shared = Promise.resolve(attach(provided));
    } else {
      shared = startPostgres();
      shared.then(
        (cluster) => process.once('exit', () => stopAtExit(cluster)),
        () => undefined,
      );
    }
  }
  return shared;
}

/** A fresh database on this worker's shared cluster: the usual way a suite gets PostgreSQL. */
export async function freshPostgresDatabase(): Promise<string> {
  return (await sharedPostgres()).createDatabase();
}

/** 'exit' handlers must be synchronous: SIGQUIT (immediate shutdown) to our postmaster; the watchdog removes the folder. */
function stopAtExit(cluster: TestPostgres): void {
  try {
    if (cluster.pid) process.kill(cluster.pid, 'SIGQUIT');
  } catch {
    // Already stopped.
  }
}
