/**
 * The propagation bench of issue 30, item 4 (folder ETags that change with anything below):
 * `npm run bench:tree` (`npx tsx bench/tree-etags.ts`). Embedded (`npm start`: one process, SQLite,
 * local blobs), this checkout's build beside BENCH_BASELINE_REF's (default e46c362, main before
 * tree versions; "none" skips it), each started fresh in a temp folder and run side by side:
 *
 *   1. BENCH_SMALL_FILES (2,000) × 4 KiB PUT through the bridge into a folder 8 levels below
 *      /home and into one directly in /home: `curl --parallel --parallel-max 4` with a config
 *      file (folders made first with MKCOL, outside the timing), BENCH_ROUNDS rounds, each round
 *      every build at both depths in an order that rotates per round; seconds, median with min–max. Target: depth 8
 *      costs at most 5 % more than depth 1 (this build's ratio; the baseline's for reference).
 *   2. PROPFIND Depth 1 (allprop) of a folder of BENCH_DIR_ENTRIES (10,000) entries: curl's
 *      time_total, the first request after the start (cold) and the median of 5 more (warm);
 *      this build against the baseline (target: within 5 %).
 *
 * Every answer is checked (201 per PUT, the entry count of the PROPFIND). Prints one table.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import {
  BENCH_USER,
  buildDriveway,
  countResponses,
  createBenchUser,
  fmt,
  freePort,
  median,
  positiveIntEnv,
  prepareBaseline,
  printTable,
  runBounded,
  runClient,
  spread,
  startDriveway,
  stopChild,
  storeMkdir,
  storeUpload,
  withBenchRun,
  type BenchRun,
} from './lib.js';

const LABEL = 'tree bench';
const FILES = positiveIntEnv('BENCH_SMALL_FILES', 2000);
const ENTRIES = positiveIntEnv('BENCH_DIR_ENTRIES', 10_000);
const ROUNDS = positiveIntEnv('BENCH_ROUNDS', 3);
const BASELINE = process.env.BENCH_BASELINE_REF ?? 'e46c362';
const PARALLEL = 4;
const ADMIN_PASSWORD = 'Bench-Admin-Passw0rd1';
const DEEP = ['l1', 'l2', 'l3', 'l4', 'l5', 'l6', 'l7', 'l8'];

interface Figures {
  depth1: number[];
  depth8: number[];
  cold: number;
  warm: number[];
}

const agent = new Agent({ connections: 8 });
const auth = `Basic ${Buffer.from(`${BENCH_USER.email}:${BENCH_USER.password}`).toString('base64')}`;

async function dav(base: string, method: string, urlPath: string): Promise<number> {
  const answer = await request(`${base}${urlPath}`, { dispatcher: agent, method, headers: { authorization: auth } });
  await answer.body.dump();
  return answer.statusCode;
}

async function mkcols(base: string, folders: string[]): Promise<void> {
  let at = '';
  for (const name of folders) {
    at += `/${name}`;
    const status = await dav(base, 'MKCOL', `/home${at}/`);
    if (status !== 201) throw new Error(`MKCOL /home${at}/ answered ${status}`);
  }
}

/** FILES PUTs of the source files into `folder` (a DAV path ending in /); wall seconds. */
async function uploads(run: BenchRun, base: string, sources: string[], folder: string, tag: string): Promise<number> {
  const config = path.join(run.tmp, `curl-${tag}.cfg`);
  writeFileSync(config, sources.map((file, i) => `url = "${base}${folder}f${i}.bin"\nupload-file = "${file}"\noutput = "/dev/null"\n`).join(''));
  const result = await runClient('curl', ['--parallel', '--parallel-max', String(PARALLEL), '-sS', '-w', '%{http_code}\\n', '-u', `${BENCH_USER.email}:${BENCH_USER.password}`, '-K', config], process.env, 600_000);
  const created = result.stdout.split('\n').filter((line) => line === '201').length;
  if (result.code !== 0 || created !== sources.length) throw new Error(`${tag}: ${created} of ${sources.length} PUTs answered 201 (curl exit ${result.code}): ${result.stderr.slice(-500)}`);
  return result.wallMs / 1000;
}

/** One PROPFIND Depth 1 allprop of `folder`: curl's time_total in ms; the entry count checked. */
async function propfind(base: string, folder: string, entries: number): Promise<number> {
  const result = await runClient('curl', ['-sS', '-X', 'PROPFIND', '-H', 'Depth: 1', '-u', `${BENCH_USER.email}:${BENCH_USER.password}`, '-w', '\n%{time_total}', `${base}${folder}`], process.env, 120_000);
  const cut = result.stdout.lastIndexOf('\n');
  const responses = countResponses(result.stdout.slice(0, cut));
  if (responses !== entries + 1) throw new Error(`PROPFIND ${folder} listed ${responses - 1} entries, not ${entries}`);
  return Number(result.stdout.slice(cut + 1)) * 1000;
}

interface Served {
  label: string;
  base: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}

/** A build started fresh (`npm start`), its bench user made and its 10,000-entry folder seeded. */
async function serve(run: BenchRun, label: string, root: string | undefined): Promise<Served> {
  const [storePort, davPort] = [await freePort(), await freePort()];
  const storeUrl = `http://127.0.0.1:${storePort}`;
  const start = () =>
    startDriveway({
      part: 'all',
      ...(root ? { root } : {}),
      dataDir: path.join(run.tmp, `${label}-data`),
      logFile: path.join(run.tmp, `${label}-${Date.now()}.log`),
      env: { DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD, DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(davPort), DRIVEWAY_CACHE_TTL_MS: '60000' },
    });
  let server = await start();
  run.onCleanup(() => stopChild(server.child));
  const session = await createBenchUser(agent, storeUrl, ADMIN_PASSWORD);
  console.log(`${LABEL}: ${label}: seeding ${ENTRIES} entries`);
  const big = await storeMkdir(agent, storeUrl, session.token, 'home', 'big');
  await runBounded(ENTRIES, 8, (i) => storeUpload(agent, storeUrl, session.token, big, `entry-${String(i).padStart(5, '0')}.txt`, Buffer.from(`entry ${i}`)));
  return {
    label,
    base: `http://127.0.0.1:${davPort}`,
    async restart() {
      await stopChild(server.child);
      server = await start();
    },
    stop: () => stopChild(server.child),
  };
}

await withBenchRun(LABEL, 90 * 60_000, async (run) => {
  buildDriveway(LABEL);
  const baseline = BASELINE === 'none' ? undefined : prepareBaseline(run, BASELINE, LABEL);
  const sourceDir = path.join(run.tmp, 'sources');
  mkdirSync(sourceDir);
  const sources = Array.from({ length: FILES }, (_, i) => {
    const file = path.join(sourceDir, `f${i}.bin`);
    const bytes = Buffer.alloc(4096, i % 251);
    bytes.writeUInt32BE(i, 0);
    writeFileSync(file, bytes);
    return file;
  });
  const systems = [await serve(run, 'this', undefined)];
  if (baseline) systems.push(await serve(run, `baseline ${baseline.commit}`, baseline.root));
  const figures = new Map<Served, Figures>(systems.map((s) => [s, { depth1: [], depth8: [], cold: 0, warm: [] }]));
  // Both builds run side by side; each round measures every build at both depths, the order rotating.
  for (let round = 0; round < ROUNDS; round++) {
    const shallow = [`flat${round}`];
    const deep = [`deep${round}`, ...DEEP];
    const steps: Array<[Served, 'depth1' | 'depth8', string[]]> = systems.flatMap((s) => [[s, 'depth1', shallow] as [Served, 'depth1', string[]], [s, 'depth8', deep] as [Served, 'depth8', string[]]]);
    for (const s of systems) {
      await mkcols(s.base, shallow);
      await mkcols(s.base, deep);
    }
    for (let i = 0; i < round; i++) steps.push(steps.shift() as (typeof steps)[number]);
    for (const [s, key, folders] of steps) {
      const seconds = await uploads(run, s.base, sources, `/home/${folders.join('/')}/`, `${s.label}-${key}-${round}`.replace(/\W/g, '_'));
      (figures.get(s) as Figures)[key].push(seconds);
      console.log(`${LABEL}: ${s.label}: round ${round + 1} ${key}: ${fmt(seconds, 2)} s`);
    }
  }
  // A restart empties the bridge's caches: the first PROPFIND is cold; then 5 warm, the builds alternating.
  for (const s of systems) {
    await s.restart();
    (figures.get(s) as Figures).cold = await propfind(s.base, '/home/big/', ENTRIES);
  }
  for (let i = 0; i < 5; i++) for (const s of systems) (figures.get(s) as Figures).warm.push(await propfind(s.base, '/home/big/', ENTRIES));
  for (const s of systems) await s.stop();
  const results: Array<[string, Figures]> = systems.map((s) => [s.label, figures.get(s) as Figures]);

  const rows = results.map(([label, f]) => {
    const ratio = median(f.depth8) / median(f.depth1);
    return [label, spread(f.depth1, 2), spread(f.depth8, 2), `${fmt((ratio - 1) * 100, 1)} %`, fmt(f.cold, 0), spread(f.warm, 1)];
  });
  console.log(`\n${LABEL}: ${FILES} × 4 KiB PUT (curl --parallel-max ${PARALLEL}, ${ROUNDS} rounds, s) and PROPFIND Depth 1 of ${ENTRIES} entries (ms), embedded`);
  printTable(['build', 'depth 1 s', 'depth 8 s', 'depth 8 extra', 'PROPFIND cold ms', 'PROPFIND warm ms'], rows);
  const [, ours] = results[0] as [string, Figures];
  const extra = median(ours.depth8) / median(ours.depth1) - 1;
  console.log(`target: depth 8 at most 5 % over depth 1: ${extra <= 0.05 ? 'PASS' : 'MISS'} (${fmt(extra * 100, 1)} %)`);
  if (results[1]) {
    const [, base] = results[1];
    const warm = median(ours.warm) / median(base.warm) - 1;
    const cold = ours.cold / base.cold - 1;
    console.log(`target: PROPFIND of ${ENTRIES} within 5 % of the baseline: warm ${fmt(warm * 100, 1)} %, cold ${fmt(cold * 100, 1)} %`);
  }
});
