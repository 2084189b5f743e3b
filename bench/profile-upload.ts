/**
 * Where a small-file PUT's time goes, embedded or over PostgreSQL + S3:
 * `npx tsx bench/profile-upload.ts [pg|sqlite] [uploads] [bytes]` (default pg, 400, 4 KiB; `sqlite 1
 * 1073741824` profiles one 1 GiB PUT). Starts driveway as
 * `npm start` does (node dist/main.js, built first) with --cpu-prof, on a throwaway PostgreSQL
 * (fsync on) and s3rver for `pg`, makes a user, then PUTs `uploads` files through the bridge
 * with `curl --parallel --parallel-max 4`. Prints the wall time, PostgreSQL's statements by total
 * server time (log_min_duration_statement = 0 during the uploads: what the database itself
 * spends) and the main thread's CPU profile summary (what driveway spends); BENCH_KEEP_PROFILE=<file>
 * keeps the raw profiles (<file> the main thread's, <file>.1 and on the workers'). Loopback only; every
 * child stopped by PID and the temp folder removed.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Agent } from 'undici';
import { startPostgres } from '../test/helpers/postgres.js';
import { S3RVER_CREDENTIALS, startS3Server } from '../test/helpers/s3-server.js';
import { BENCH_USER, buildDriveway, createBenchUser, freePort, startDriveway, stopChild, storeMkdir, summarizeCpuProfile, withBenchRun } from './lib.js';

const LABEL = 'bench/profile-upload';
const storage = process.argv[2] === 'sqlite' ? 'sqlite' : 'pg';
const uploads = Number(process.argv[3] ?? 400);
/** Bytes per upload (fourth argument; default 4 KiB): `sqlite 1 1073741824` profiles one 1 GiB PUT. */
const uploadBytes = Number(process.argv[4] ?? 4096);
const ADMIN_PASSWORD = 'Bench-Admin-Passw0rd1';

async function setLogging(adminUrl: string, value: string): Promise<void> {
  const admin = new pg.Client(adminUrl);
  await admin.connect();
  try {
    await admin.query(`ALTER SYSTEM SET log_min_duration_statement = ${value}`);
    await admin.query('SELECT pg_reload_conf()');
  } finally {
    await admin.end();
  }
}

/** Total server time per statement text, from the log lines `duration: N ms  execute|statement|bind|parse ...: TEXT`. */
function statementTimes(log: string): string {
  const totals = new Map<string, { ms: number; n: number }>();
  for (const match of log.matchAll(/duration: ([\d.]+) ms +((?:statement|execute|bind|parse)[^:]*): (.{0,70})/g)) {
    const key = `${(match[2] as string).split(' ')[0]}: ${match[3]}`;
    const total = totals.get(key) ?? { ms: 0, n: 0 };
    total.ms += Number(match[1]);
    total.n += 1;
    totals.set(key, total);
  }
  const rows = [...totals].sort((a, b) => b[1].ms - a[1].ms).slice(0, 25);
  const sum = [...totals.values()].reduce((s, t) => s + t.ms, 0);
  return [`PostgreSQL server time, all statements: ${sum.toFixed(0)} ms`, ...rows.map(([k, t]) => `${t.ms.toFixed(1).padStart(9)} ms ${String(t.n).padStart(6)}  ${k}`)].join('\n');
}

async function main(): Promise<void> {
  buildDriveway(LABEL);
  await withBenchRun(LABEL, 20 * 60_000, async (run) => {
    const agent = new Agent();
    run.onCleanup(() => agent.close());
    const env: Record<string, string> = { DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD };
    let adminUrl: string | undefined;
    let logFile: string | undefined;
    if (storage === 'pg') {
      const cluster = await startPostgres({ durable: true });
      run.onCleanup(() => cluster.stop());
      const s3 = await startS3Server('driveway-profile');
      run.onCleanup(() => s3.close());
      ({ adminUrl, logFile } = cluster);
      Object.assign(env, {
        DRIVEWAY_DATABASE_URL: cluster.url,
        DRIVEWAY_S3_BUCKET: s3.bucket,
        DRIVEWAY_S3_ENDPOINT: s3.endpoint,
        DRIVEWAY_S3_FORCE_PATH_STYLE: 'true',
        AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
        AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
      });
    }
    const storePort = await freePort();
    const profiles = path.join(run.tmp, 'profiles');
    const driveway = await startDriveway({
      part: 'all',
      dataDir: path.join(run.tmp, 'data'),
      logFile: path.join(run.tmp, 'driveway.log'),
      env: { ...env, DRIVEWAY_STORE_PORT: String(storePort) },
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profiles}`],
    });
    run.onCleanup(() => stopChild(driveway.child));
    const store = `http://127.0.0.1:${storePort}`;
    const session = await createBenchUser(agent, store, ADMIN_PASSWORD);
    await storeMkdir(agent, store, session.token, 'home', 'small');

    const source = path.join(run.tmp, 'source');
    mkdirSync(source);
    const lines: string[] = [];
    for (let i = 0; i < uploads; i++) {
      writeFileSync(path.join(source, `s${i}`), uploadBytes <= 64 * 1024 * 1024 ? Buffer.alloc(uploadBytes, i) : '');
      if (uploadBytes > 64 * 1024 * 1024) spawnSync('head', ['-c', String(uploadBytes), '/dev/urandom'], { stdio: ['ignore', openSync(path.join(source, `s${i}`), 'w'), 'inherit'] });
      lines.push(`url = "${driveway.baseUrl}/home/small/s${i}.bin"\nupload-file = "${path.join(source, `s${i}`)}"\noutput = "/dev/null"\n`);
    }
    writeFileSync(path.join(run.tmp, 'curl.cfg'), lines.join(''));
    const logStart = logFile ? readFileSync(logFile).length : 0;
    if (adminUrl) await setLogging(adminUrl, '0');
    const began = performance.now();
    const curl = spawnSync('curl', ['--parallel', '--parallel-max', '4', '-sS', '-w', '%{http_code}\\n', '-u', `${BENCH_USER.email}:${BENCH_USER.password}`, '-K', path.join(run.tmp, 'curl.cfg')], { encoding: 'utf8' });
    const seconds = (performance.now() - began) / 1000;
    if (adminUrl) await setLogging(adminUrl, '-1');
    const created = curl.stdout.split('\n').filter((l) => l === '201').length;
    console.log(`${LABEL}: ${storage}: ${created} of ${uploads} PUTs of ${uploadBytes} bytes answered 201 in ${seconds.toFixed(2)} s (${(uploads / seconds).toFixed(0)}/s, ${((uploads * uploadBytes) / seconds / 1e6).toFixed(0)} MB/s)`);
    if (logFile) console.log(statementTimes(readFileSync(logFile).subarray(logStart).toString('utf8')));
    await stopChild(driveway.child);
    // The main thread's profile is the first written (workers' come after, one per thread).
    const all = readdirSync(profiles).sort().map((f) => path.join(profiles, f));
    const profile = all[0];
    if (profile) console.log(summarizeCpuProfile(profile, 20));
    // BENCH_KEEP_PROFILE=<file>: the raw profile kept for a closer look (Chrome DevTools, or a script).
    const keep = process.env.BENCH_KEEP_PROFILE;
    if (keep) all.forEach((file, i) => copyFileSync(file, i === 0 ? keep : `${keep}.${i}`));
  });
}

main().catch((err: unknown) => {
  console.error(`${LABEL}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
