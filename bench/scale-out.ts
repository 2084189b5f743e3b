/**
 * The scale-out benchmark of issue 15: `npm run bench:scale-out` (`npx tsx bench/scale-out.ts`).
 *
 * Four deployments of this build side by side, in one run, measured with the client programs
 * users run (curl, wrk):
 *
 *   embedded     `npm start` as shipped: one process, SQLite + blobs in the data dir
 *   pg+s3        one process over PostgreSQL + S3 (the same build, DRIVEWAY_DATABASE_URL and
 *                DRIVEWAY_S3_* set)
 *   nginx → 1    nginx round robin in front of that one instance
 *   nginx → 2    nginx round robin in front of two instances over the same PostgreSQL + S3
 *
 * PostgreSQL is Debian's postgresql-15 in a throwaway cluster (test/helpers/postgres.ts) with
 * fsync and synchronous commit ON, as production runs it (the embedded store fsyncs too); S3 is
 * s3rver on loopback, in a child process of this bench (test/helpers/s3-server.ts; it does not fsync; a real
 * object store's latency over a network is not modelled: the figures show driveway's own cost of
 * the two engines, not a cloud's). Every server shares the 2 cores of this machine, so "nginx → 2"
 * shows the cost of sharing one database and bucket, not the gain of a second machine.
 *
 *   1. PROPFIND Depth 1 of a BENCH_DIR_ENTRIES-entry folder (10,000), warm (the listing in each
 *      instance's cache), allprop: curl's time_total, the median of 5 requests per round.
 *   2. `wrk -c 8 -t 2` PROPFIND Depth 1 of a 100-entry folder for BENCH_LOAD_SECONDS: requests/s.
 *   3. BENCH_SMALL_FILES (2,000) × 4 KiB of random bytes into 20 folders with `curl --parallel
 *      --parallel-max 4` (folders made first): seconds; every file's arrival is checked by PROPFIND.
 *
 * Targets (issue 15): pg+s3 within 2.5× of embedded on 3, within 1.5× on 1. Each workload runs
 * BENCH_ROUNDS (3) rounds, the deployments in an order that rotates per round; tables give
 * medians with min–max. Exit 1 when a target is missed or an answer is wrong.
 *
 * Only loopback traffic, bounded client runs, only our own children stopped (by PID: driveway,
 * nginx, the PostgreSQL cluster through its harness); the temp folder is removed whatever happens.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { startNginx } from '../test/helpers/nginx.js';
import { requirePostgres, startPostgres } from '../test/helpers/postgres.js';
import { S3RVER_CREDENTIALS, startS3Server } from '../test/helpers/s3-server.js';
import {
  BENCH_USER,
  buildDriveway,
  countResponses,
  createBenchUser,
  fmt,
  killClients,
  freePort,
  median,
  nowMs,
  positiveIntEnv,
  printTable,
  PROPFIND_ALLPROP,
  rotate,
  runClient as runClientProgram,
  runBounded,
  spread,
  startDriveway,
  stopChild,
  storeMkdir,
  storeUpload,
  tailOf,
  withBenchRun,
  type BenchRun,
  type ClientResult,
} from './lib.js';

const LABEL = 'bench/scale-out';
const RUN_TIMEOUT_MS = 60 * 60_000;
const CLIENT_TIMEOUT_MS = 10 * 60_000;
const SMALL_FILE_BYTES = 4096;
const SMALL_FOLDERS = 20;
const SMALL_PARALLEL = 4;
const WRK_CONNECTIONS = 8;
const WARM_SAMPLES = 5;
const SEED_PARALLEL = 8;
const MANY_FOLDER = 'bench-many';
const HUNDRED_FOLDER = 'bench-100';
/** Each instance keeps a listing this long: every warm PROPFIND of a round hits the cache. */
const CACHE_TTL_MS = 60_000;

type Key = 'embedded' | 'pg' | 'lb1' | 'lb2';
const LABELS: Record<Key, string> = { embedded: 'embedded', pg: 'pg+s3', lb1: 'nginx → 1 (pg+s3)', lb2: 'nginx → 2 (pg+s3)' };
/** Instances behind the URL: a warm-up must reach each (round robin). */
const INSTANCES: Record<Key, number> = { embedded: 1, pg: 1, lb1: 1, lb2: 2 };

interface Deployment {
  key: Key;
  /** WebDAV base URL, no trailing slash. */
  base: string;
}

type Metric = 'propfindWarm' | 'wrk' | 'small';
const METRICS: Record<Metric, { title: string; unit: string; higherIsBetter: boolean; digits: number }> = {
  propfindWarm: { title: 'PROPFIND Depth 1, 10,000 entries, warm (curl)', unit: 'ms', higherIsBetter: false, digits: 1 },
  wrk: { title: `wrk -c ${WRK_CONNECTIONS} PROPFIND Depth 1, 100 entries`, unit: 'req/s', higherIsBetter: true, digits: 0 },
  small: { title: `4 KiB files, curl --parallel-max ${SMALL_PARALLEL}`, unit: 's', higherIsBetter: false, digits: 2 },
};
/** Issue 15's targets: pg+s3 against embedded, as a ratio of times. */
const TARGETS: Partial<Record<Metric, number>> = { propfindWarm: 1.5, small: 2.5 };

interface Settings {
  rounds: number;
  dirEntries: number;
  smallFiles: number;
  loadSeconds: number;
}

const results = new Map<string, number[]>();
const wrong: string[] = [];
let finished = false;
const agent = new Agent({ connections: 16, headersTimeout: 120_000, bodyTimeout: 120_000 });
const auth = `Basic ${Buffer.from(`${BENCH_USER.email}:${BENCH_USER.password}`).toString('base64')}`;

function record(metric: Metric, key: Key, value: number): void {
  const id = `${metric}/${key}`;
  results.set(id, [...(results.get(id) ?? []), value]);
}

function runClient(command: string, args: string[]): Promise<ClientResult> {
  return runClientProgram(command, args, { PATH: process.env.PATH, HOME: process.env.HOME }, CLIENT_TIMEOUT_MS);
}

async function dav(d: Deployment, method: string, urlPath: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string }> {
  const answer = await request(`${d.base}${urlPath}`, { method, headers: { authorization: auth, ...headers }, body, dispatcher: agent });
  return { status: answer.statusCode, text: await answer.body.text() };
}

async function guard(what: string, work: () => Promise<void>): Promise<void> {
  try {
    await work();
  } catch (err) {
    const message = `${what}: ${err instanceof Error ? err.message : String(err)}`;
    wrong.push(message);
    console.error(`  WRONG ${message}`);
  }
}

async function curlPropfindMs(d: Deployment, folder: string, expected: number): Promise<number> {
  const result = await runClient('curl', [
    '-sS', '-o', '/dev/null', '-w', '%{http_code} %{size_download} %{time_total}', '-u', `${BENCH_USER.email}:${BENCH_USER.password}`,
    '-X', 'PROPFIND', '-H', 'Depth: 1', '-H', 'Content-Type: application/xml; charset=utf-8', '--data-binary', PROPFIND_ALLPROP, `${d.base}${folder}`,
  ]);
  const [status, size, seconds] = result.stdout.trim().split(' ').map(Number);
  if (result.code !== 0 || status !== 207) throw new Error(`curl PROPFIND ${folder} answered ${String(status)} (exit ${String(result.code)}): ${result.stderr.trim()}`);
  if (!(size! > expected * 100)) throw new Error(`PROPFIND ${folder} answered only ${String(size)} bytes for ${expected} entries`);
  return (seconds as number) * 1000;
}

async function benchPropfindWarm(deployments: Deployment[], settings: Settings): Promise<void> {
  const folder = `/home/${MANY_FOLDER}/`;
  console.log(`\n${LABEL}: 1. PROPFIND Depth 1 of ${settings.dirEntries} entries, warm (${settings.rounds} rounds × ${WARM_SAMPLES})`);
  for (const d of deployments) {
    await guard(`1 listing on ${LABELS[d.key]}`, async () => {
      const answer = await dav(d, 'PROPFIND', folder, { depth: '1', 'content-type': 'application/xml; charset=utf-8' }, PROPFIND_ALLPROP);
      if (answer.status !== 207 || countResponses(answer.text) !== settings.dirEntries + 1) throw new Error(`PROPFIND answered ${answer.status} with ${countResponses(answer.text)} responses, expected ${settings.dirEntries + 1}`);
    });
  }
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const d of rotate(deployments, round)) {
      await guard(`1 on ${LABELS[d.key]}, round ${round + 1}`, async () => {
        for (let i = 0; i < INSTANCES[d.key]; i += 1) await curlPropfindMs(d, folder, settings.dirEntries);
        const samples: number[] = [];
        for (let i = 0; i < WARM_SAMPLES; i += 1) samples.push(await curlPropfindMs(d, folder, settings.dirEntries));
        record('propfindWarm', d.key, median(samples));
      });
    }
  }
}

async function benchWrk(deployments: Deployment[], settings: Settings, tmp: string): Promise<void> {
  const folder = `/home/${HUNDRED_FOLDER}/`;
  console.log(`\n${LABEL}: 2. wrk -c ${WRK_CONNECTIONS} -t 2 -d ${settings.loadSeconds}s PROPFIND Depth 1 of 100 entries (${settings.rounds} rounds)`);
  const script = path.join(tmp, 'propfind.lua');
  const headers = { Depth: '1', 'Content-Type': 'application/xml; charset=utf-8', Authorization: auth };
  writeFileSync(
    script,
    ['wrk.method = "PROPFIND"', `wrk.body = ${JSON.stringify(PROPFIND_ALLPROP.replace(/\n/g, ' '))}`, ...Object.entries(headers).map(([k, v]) => `wrk.headers[${JSON.stringify(k)}] = ${JSON.stringify(v)}`), ''].join('\n'),
  );
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const d of rotate(deployments, round)) {
      await guard(`2 on ${LABELS[d.key]}, round ${round + 1}`, async () => {
        const result = await runClient('wrk', ['-c', String(WRK_CONNECTIONS), '-t', '2', '-d', `${settings.loadSeconds}s`, '--timeout', '10s', '-s', script, `${d.base}${folder}`]);
        if (result.code !== 0) throw new Error(`wrk exited ${String(result.code)}: ${result.stderr.trim()}`);
        const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(result.stdout)?.[1]);
        const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(result.stdout)?.[1] ?? 0);
        if (non2xx > 0) throw new Error(`${non2xx} answers were not 2xx`);
        if (!Number.isFinite(rps)) throw new Error(`no Requests/sec in wrk's output: ${result.stdout}`);
        record('wrk', d.key, rps);
      });
    }
  }
}

async function benchSmallFiles(deployments: Deployment[], settings: Settings, tmp: string): Promise<void> {
  console.log(`\n${LABEL}: 3. ${settings.smallFiles} × 4 KiB into ${SMALL_FOLDERS} folders, curl --parallel-max ${SMALL_PARALLEL} (${settings.rounds} rounds)`);
  const source = path.join(tmp, 'small');
  const files = Array.from({ length: settings.smallFiles }, (_, i) => ({ folder: `d${String(i % SMALL_FOLDERS).padStart(2, '0')}`, name: `s-${String(i).padStart(5, '0')}.bin` }));
  const folders = [...new Set(files.map((f) => f.folder))];
  for (const folder of folders) mkdirSync(path.join(source, folder), { recursive: true });
  // Distinct random bytes: content-addressed blobs must store every one.
  for (const { folder, name } of files) writeFileSync(path.join(source, folder, name), randomBytes(SMALL_FILE_BYTES));
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const d of rotate(deployments, round)) {
      const dest = `/home/small-${d.key}-${round}`;
      await guard(`3 on ${LABELS[d.key]}, round ${round + 1}`, async () => {
        for (const folder of ['', ...folders]) {
          const made = await dav(d, 'MKCOL', `${dest}/${folder}${folder ? '/' : ''}`);
          if (made.status !== 201) throw new Error(`MKCOL ${dest}/${folder} answered ${made.status}`);
        }
        const config = path.join(tmp, `curl-${d.key}-${round}.cfg`);
        writeFileSync(config, files.map(({ folder, name }) => `url = "${d.base}${dest}/${folder}/${name}"\nupload-file = "${path.join(source, folder, name)}"\noutput = "/dev/null"\n`).join(''));
        const result = await runClient('curl', ['--parallel', '--parallel-max', String(SMALL_PARALLEL), '-sS', '-w', '%{http_code}\\n', '-u', `${BENCH_USER.email}:${BENCH_USER.password}`, '-K', config]);
        if (result.code !== 0) throw new Error(`curl exited ${String(result.code)}: ${result.stderr.trim().slice(0, 300)}`);
        const created = result.stdout.split('\n').filter((line) => line === '201' || line === '204').length;
        if (created !== files.length) throw new Error(`${created} of ${files.length} PUTs answered 201/204`);
        record('small', d.key, result.wallMs / 1000);
        for (const folder of folders) {
          const listed = await dav(d, 'PROPFIND', `${dest}/${folder}/`, { depth: '1' });
          const found = (listed.text.match(new RegExp(`getcontentlength[^>]*>\\s*${SMALL_FILE_BYTES}\\s*<`, 'g')) ?? []).length;
          if (found !== settings.smallFiles / SMALL_FOLDERS) throw new Error(`${dest}/${folder}/ lists ${found} files of 4 KiB, expected ${settings.smallFiles / SMALL_FOLDERS}`);
        }
      });
    }
  }
}

async function seed(label: string, storeUrl: string, adminPassword: string, settings: Settings): Promise<void> {
  const started = nowMs();
  const session = await createBenchUser(agent, storeUrl, adminPassword);
  for (const [folder, count] of [[MANY_FOLDER, settings.dirEntries], [HUNDRED_FOLDER, 100]] as const) {
    const uuid = await storeMkdir(agent, storeUrl, session.token, 'home', folder);
    await runBounded(count, SEED_PARALLEL, (i) => storeUpload(agent, storeUrl, session.token, uuid, `f-${String(i).padStart(5, '0')}.txt`, Buffer.from(`tiny file ${i}\n`)));
  }
  console.log(`${LABEL}: seeded ${label} through its store API in ${((nowMs() - started) / 1000).toFixed(1)} s`);
}

async function startInstance(run: BenchRun, name: string, env: Record<string, string>): Promise<{ dav: string; store: string }> {
  const [storePort, davPort] = [await freePort(), await freePort()];
  const started = await startDriveway({
    part: 'all',
    dataDir: path.join(run.tmp, name),
    logFile: path.join(run.tmp, `${name}.log`),
    env: { ...env, DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(davPort), DRIVEWAY_CACHE_TTL_MS: String(CACHE_TTL_MS) },
  });
  run.onCleanup(() => stopChild(started.child));
  // Before it stops: a failed run shows what the instance logged (warnings and errors only).
  run.onCleanup(() => {
    if (wrong.length || !finished) console.error(`${LABEL}: ${name}'s log ends with:\n${tailOf(path.join(run.tmp, `${name}.log`), 3000)}`);
  });
  return { dav: started.baseUrl, store: `http://127.0.0.1:${storePort}` };
}

function report(settings: Settings, keys: Key[]): boolean {
  let pass = true;
  for (const metric of Object.keys(METRICS) as Metric[]) {
    const spec = METRICS[metric];
    console.log(`\n${spec.title} (${spec.unit}; median, min–max over ${settings.rounds} rounds)`);
    const base = median(results.get(`${metric}/embedded`) ?? []);
    const rows = keys.map((key) => {
      const values = results.get(`${metric}/${key}`) ?? [];
      const value = values.length ? median(values) : undefined;
      const ratio = value !== undefined && base ? (spec.higherIsBetter ? base / value : value / base) : undefined;
      const target = key === 'pg' ? TARGETS[metric] : undefined;
      const verdict = target === undefined ? '' : ratio === undefined ? 'MISS (no figure)' : ratio <= target ? 'PASS' : 'MISS';
      if (verdict.startsWith('MISS')) pass = false;
      return [LABELS[key], fmt(value, spec.digits), values.length ? spread(values, spec.digits) : 'n/a', ratio === undefined ? 'n/a' : `${ratio.toFixed(2)}×`, target === undefined ? '' : `≤ ${target}× ${verdict}`];
    });
    printTable(['deployment', spec.unit, 'min–max', 'cost vs embedded', 'target'], rows);
  }
  const lb1 = median(results.get('wrk/lb1') ?? []);
  const lb2 = median(results.get('wrk/lb2') ?? []);
  const s1 = median(results.get('small/lb1') ?? []);
  const s2 = median(results.get('small/lb2') ?? []);
  if (lb1 && lb2 && s1 && s2) {
    console.log(`\nTwo instances against one behind nginx (one machine, 2 cores): PROPFIND ${(lb2 / lb1).toFixed(2)}× the rate, 4 KiB uploads ${(s1 / s2).toFixed(2)}× the rate.`);
  }
  return pass;
}

async function main(): Promise<void> {
  const settings: Settings = {
    rounds: positiveIntEnv('BENCH_ROUNDS', 3),
    dirEntries: positiveIntEnv('BENCH_DIR_ENTRIES', 10_000),
    smallFiles: Math.ceil(positiveIntEnv('BENCH_SMALL_FILES', 2_000) / SMALL_FOLDERS) * SMALL_FOLDERS,
    loadSeconds: positiveIntEnv('BENCH_LOAD_SECONDS', 10),
  };
  if (!requirePostgres({ warn: (m) => console.error(`${LABEL}: ${m}`) }).binDir) throw new Error('PostgreSQL 15+ is needed (apt-get install postgresql-15)');
  buildDriveway(LABEL);
  let pass = false;
  await withBenchRun(LABEL, RUN_TIMEOUT_MS, async (run) => {
    run.onCleanup(() => agent.close());
    run.onCleanup(killClients);
    const pg = await startPostgres({ durable: true });
    run.onCleanup(() => pg.stop());
    const s3 = await startS3Server('driveway-bench');
    run.onCleanup(() => s3.close());
    console.log(`${LABEL}: PostgreSQL ${pg.major} on 127.0.0.1:${pg.port} (fsync on), s3rver on ${s3.endpoint}`);

    const adminPassword = `Bench-${randomBytes(9).toString('base64url')}1a`;
    const embedded = await startInstance(run, 'embedded', { DRIVEWAY_ADMIN_PASSWORD: adminPassword });
    const shared = {
      DRIVEWAY_ADMIN_PASSWORD: adminPassword,
      DRIVEWAY_DATABASE_URL: pg.url,
      DRIVEWAY_BLOB_BACKEND: 's3',
      DRIVEWAY_S3_BUCKET: s3.bucket,
      DRIVEWAY_S3_ENDPOINT: s3.endpoint,
      DRIVEWAY_S3_REGION: 'us-east-1',
      DRIVEWAY_S3_FORCE_PATH_STYLE: 'true',
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    };
    const first = await startInstance(run, 'pg-1', shared);
    const second = await startInstance(run, 'pg-2', shared);
    const one = await startNginx([first.dav]);
    run.onCleanup(() => one.stop());
    const two = await startNginx([first.dav, second.dav]);
    run.onCleanup(() => two.stop());

    await Promise.all([seed('embedded', embedded.store, adminPassword, settings), seed('pg+s3', first.store, adminPassword, settings)]);
    const deployments: Deployment[] = [
      { key: 'embedded', base: embedded.dav },
      { key: 'pg', base: first.dav },
      { key: 'lb1', base: one.url },
      { key: 'lb2', base: two.url },
    ];
    await benchPropfindWarm(deployments, settings);
    await benchWrk(deployments, settings, run.tmp);
    await benchSmallFiles(deployments, settings, run.tmp);
    pass = report(settings, deployments.map((d) => d.key));
    finished = true;
  });
  if (wrong.length) console.error(`\n${LABEL}: ${wrong.length} wrong answer(s):\n  ${wrong.join('\n  ')}`);
  process.exitCode = pass && wrong.length === 0 ? 0 : 1;
}

main().catch((err: unknown) => {
  console.error(`${LABEL}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
