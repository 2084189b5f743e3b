/**
 * WebDAV bridge benchmark (issue 3, targets 1-7): `npm run bench:bridge` (`npx tsx bench/bridge.ts`).
 *
 * In one run it starts, as separate child processes each with its own temp data dir and a free
 * loopback port: the store (`node dist/main.js --only store`), the bridge in front of it
 * (`--only bridge`, DRIVEWAY_STORE_URL), and `rclone serve webdav` over a local folder holding
 * the same files (the reference peer; skipped with a note when rclone is not installed). It seeds
 * the store through SPEC calls only (two-step uploads), then measures the three systems
 * interleaved: every round runs each system once, in an order that rotates per round, and the
 * table reports medians, since a shared machine is noisy.
 *
 *   1. PROPFIND Depth 1 on a 10,000-entry folder: warm (within the bridge's cache TTL) and cold
 *      (after the TTL ran out), plus the store requests the warm runs caused (the store's request
 *      log, one line per request at level info).
 *   2. PROPFIND Depth 1 on a 100-entry folder, 4 connections for 10 s: requests/s.
 *   3. GET of the big file (BENCH_FILE_MB, 1 GiB by default): MiB/s.
 *   4. PUT of the big file: MiB/s.
 *   5. Peak RSS (VmHWM, reset through /proc/<pid>/clear_refs before 3) during 3 and 4.
 *   6. A 1 MiB Range read at offset 900 MiB: latency, and bytes the store wrote for it
 *      (/proc/<store pid>/io wchar: what the store sent, headers included).
 *   7. 2,000 files of 4 KiB uploaded by 4 parallel clients: seconds.
 *
 * Around every timed run it also reads each child's CPU time (/proc/<pid>/stat) and its own, and
 * prints the medians per phase: on a small machine the client, bridge and store share the cores,
 * so where the CPU goes explains the ratios better than wall time alone.
 *
 * Knobs (environment): BENCH_FILE_MB (1024), BENCH_ROUNDS (3), BENCH_LOAD_SECONDS (10),
 * BENCH_DIR_ENTRIES (10000), BENCH_SMALL_FILES (2000), BENCH_CACHE_TTL_MS (6000, the bridge's
 * cache TTL), BENCH_ONLY (e.g. "1,6": run only these targets), BENCH_VERIFY (1: hash what GET and
 * PUT moved, outside the timings), BENCH_BRIDGE_LOG_LEVEL (warn), BENCH_CPU_PROF_DIR (run bridge
 * and store with --cpu-prof; the profiles are kept there and summarised at the end),
 * BENCH_LOG_DIR (keep the children's logs there; the store's has one line per request with ms),
 * BENCH_NODE_ARGS (extra node flags for the store and the bridge, to try V8 settings).
 *
 * It measures from the outside (HTTP only, undici with keep-alive), never buffers a big file,
 * stays on loopback, stops only its own children (by PID) and removes its temp folder whatever
 * happens. Exit 1 when a target is missed or an answer is wrong.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, copyFileSync, createReadStream, existsSync, mkdirSync, openSync, readdirSync, readSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Agent, request, stream, type Dispatcher } from 'undici';
import {
  BENCH_USER,
  buildDriveway,
  countResponses,
  createBenchUser,
  cpuMeter,
  fmt,
  freePort,
  isInterrupted,
  median,
  MiB,
  nowMs,
  positiveIntEnv,
  printTable,
  procIo,
  PROPFIND_ALLPROP,
  readSlice,
  rotate,
  RssWatcher,
  runBounded,
  sleep,
  spread,
  startChild,
  startDriveway,
  stopChild,
  storeDirlist,
  storeDownloadUrl,
  storeMkdir,
  storeUpload,
  summarizeCpuProfile,
  tailOf,
  withBenchRun,
  workloadKnobs,
  writeRandomFile,
  type BenchRun,
  type RunningChild,
  type WorkloadKnobs,
  type StoreSession,
} from './lib.js';

const LABEL = 'bench/bridge';
const RUN_TIMEOUT_MS = 60 * 60_000;
const CLIENT_TIMEOUT_MS = 10 * 60_000;
const WARM_RUNS_PER_ROUND = 3;
const RANGE_RUNS_PER_ROUND = 3;
const SEED_PARALLEL = 8;
const SMALL_FILE_BYTES = 4096;
const LOAD_CONNECTIONS = 4;
const SMALL_CLIENTS = 4;
/** Settling time before reading the store's request log: its line is written after the answer. */
const LOG_SETTLE_MS = 30;
/** Target 6: what the store may send for one 1 MiB range read through the bridge. */
const RANGE_STORE_BYTES_LIMIT = 2_000_000;

type SystemName = 'bridge' | 'rclone' | 'store';

interface Settings extends WorkloadKnobs {
  ttlMs: number;
  only: Set<number>;
  verify: boolean;
  bridgeLogLevel: string;
  cpuProfDir: string | undefined;
  logDir: string | undefined;
  nodeArgs: string[];
}

function settingsFromEnv(): Settings {
  const onlyRaw = process.env.BENCH_ONLY ?? '';
  const only = new Set(onlyRaw.split(',').filter((s) => s.trim() !== '').map(Number));
  for (const target of only) if (!Number.isInteger(target) || target < 1 || target > 7) throw new Error(`BENCH_ONLY lists targets 1-7, got ${onlyRaw}`);
  // The peak RSS of target 5 is taken during 3 and 4.
  if (only.has(5)) {
    only.add(3);
    only.add(4);
  }
  return {
    ...workloadKnobs(),
    ttlMs: positiveIntEnv('BENCH_CACHE_TTL_MS', 6000),
    only: only.size === 0 ? new Set([1, 2, 3, 4, 5, 6, 7]) : only,
    verify: (process.env.BENCH_VERIFY ?? '1') !== '0',
    bridgeLogLevel: process.env.BENCH_BRIDGE_LOG_LEVEL ?? 'warn',
    cpuProfDir: process.env.BENCH_CPU_PROF_DIR ? path.resolve(process.env.BENCH_CPU_PROF_DIR) : undefined,
    logDir: process.env.BENCH_LOG_DIR ? path.resolve(process.env.BENCH_LOG_DIR) : undefined,
    nodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
  };
}

// ---------------------------------------------------------------- the store's request log

interface LoggedRequest {
  method: string;
  url: string;
  status: number;
}

/**
 * Reads the store's log file incrementally: the lines logged since the previous take(). The
 * store logs one `request` line per answered request at level info.
 */
class StoreRequestLog {
  private offset = 0;
  private partial = '';

  constructor(private readonly file: string) {}

  async take(): Promise<LoggedRequest[]> {
    await sleep(LOG_SETTLE_MS);
    const size = statSync(this.file).size;
    if (size <= this.offset) return [];
    const buffer = Buffer.alloc(size - this.offset);
    const fd = openSync(this.file, 'r');
    try {
      for (let done = 0; done < buffer.length; ) {
        const n = readSync(fd, buffer, done, buffer.length - done, this.offset + done);
        if (n === 0) break;
        done += n;
      }
    } finally {
      closeSync(fd);
    }
    this.offset = size;
    const lines = (this.partial + buffer.toString('utf8')).split('\n');
    this.partial = lines.pop() ?? '';
    const out: LoggedRequest[] = [];
    for (const line of lines) {
      if (!line.includes('"msg":"request')) continue;
      try {
        const record = JSON.parse(line) as { method?: string; url?: string; status?: number };
        out.push({ method: record.method ?? '?', url: record.url ?? '?', status: record.status ?? 0 });
      } catch {
        // Not a JSON log line (e.g. the URL banner); not a request.
      }
    }
    return out;
  }
}

function describeRequests(requests: readonly LoggedRequest[]): string {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const key = `${r.method} ${r.url.replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>').replace(/\?.*$/, '')}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([key, n]) => `${n}× ${key}`).join(', ') || 'none';
}

// ---------------------------------------------------------------- DAV clients

interface DavPeer {
  name: 'bridge' | 'rclone';
  base: string;
  auth: string;
  agent: Agent;
  pid: number;
}

interface Answer {
  status: number;
  bytes: number;
  ms: number;
  headers: Record<string, string | string[] | undefined>;
  body?: Buffer;
}

function newAgent(connections: number): Agent {
  return new Agent({ connections, keepAliveTimeout: 60_000, headersTimeout: CLIENT_TIMEOUT_MS, bodyTimeout: CLIENT_TIMEOUT_MS });
}

/** Percent-encodes each segment of a slash-separated path. */
function davPath(...segments: string[]): string {
  return `/${segments.map(encodeURIComponent).join('/')}`;
}

/**
 * One request, timed until the last body byte arrived. The body goes into a Writable that only
 * counts (undici's stream(): cheaper for the client than iterating a Readable, which matters on
 * a small machine where the client shares the cores with the servers), unless `keepBody` (kept
 * for checks made after the clock stopped) or `hash`.
 */
async function exchange(
  dispatcher: Dispatcher,
  url: string,
  options: { method: string; headers?: Record<string, string>; body?: string | Buffer | NodeJS.ReadableStream; keepBody?: boolean; hash?: boolean },
): Promise<Answer & { sha256?: string }> {
  const start = nowMs();
  let status = 0;
  let headers: Record<string, string | string[] | undefined> = {};
  let bytes = 0;
  const chunks: Buffer[] = [];
  const hash = options.hash ? createHash('sha256') : undefined;
  await stream(
    url,
    {
      dispatcher,
      method: options.method as Dispatcher.HttpMethod,
      headers: options.headers,
      body: options.body as Dispatcher.DispatchOptions['body'],
      opaque: undefined,
    },
    (data) => {
      status = data.statusCode;
      headers = data.headers;
      return new Writable({
        write(chunk: Buffer, _encoding, callback) {
          bytes += chunk.length;
          if (options.keepBody) chunks.push(chunk);
          hash?.update(chunk);
          callback();
        },
      });
    },
  );
  const ms = nowMs() - start;
  return {
    status,
    bytes,
    ms,
    headers,
    ...(options.keepBody ? { body: Buffer.concat(chunks) } : {}),
    ...(hash ? { sha256: hash.digest('hex') } : {}),
  };
}

function davHeaders(peer: DavPeer, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: peer.auth, ...extra };
}

function propfind(peer: DavPeer, pathname: string, options: { keepBody?: boolean; dispatcher?: Dispatcher } = {}): Promise<Answer> {
  return exchange(options.dispatcher ?? peer.agent, `${peer.base}${pathname}`, {
    method: 'PROPFIND',
    headers: davHeaders(peer, { depth: '1', 'content-type': 'application/xml; charset=utf-8' }),
    body: PROPFIND_ALLPROP,
    keepBody: options.keepBody,
  });
}

function expectStatus(what: string, answer: { status: number; body?: Buffer }, ...statuses: number[]): void {
  if (!statuses.includes(answer.status)) {
    throw new Error(`${what} answered ${answer.status} (expected ${statuses.join(' or ')})${answer.body ? `: ${answer.body.toString('utf8').slice(0, 300)}` : ''}`);
  }
}

// ---------------------------------------------------------------- results

interface Results {
  propfindWarmMs: Record<SystemName, number[]>;
  propfindColdMs: number[];
  coldStoreRequests: LoggedRequest[][];
  warmStoreRequests: number;
  warmBridgeRuns: number;
  warmRunsSkipped: number;
  loadRps: Record<SystemName, number[]>;
  loadErrors: Record<SystemName, number>;
  loadStoreRequests: LoggedRequest[][];
  getMiBps: Record<SystemName, number[]>;
  putMiBps: Record<SystemName, number[]>;
  peakRssMiB: Partial<Record<SystemName, number>>;
  peakRssReset: boolean;
  rangeMs: Record<SystemName, number[]>;
  rangeStoreBytes: number[];
  rangeStoreRequests: number[];
  rangeOffset: number;
  rangeLength: number;
  smallSeconds: Record<SystemName, number[]>;
  /** Per phase and system run: CPU ms each process used during the run (bridge, store, rclone, client). */
  cpu: Record<string, Record<SystemName, Array<Record<string, number>>>>;
  notes: string[];
  failures: string[];
}

function bySystem<T = number>(): Record<SystemName, T[]> {
  return { bridge: [], rclone: [], store: [] };
}

/** Runs `work` and files the CPU each process used meanwhile under `phase` and `system`. */
async function metered<T>(world: World, phase: string, system: SystemName, work: () => Promise<T>): Promise<T> {
  const stop = cpuMeter(world.pids);
  const result = await work();
  const perSystem = (world.results.cpu[phase] ??= bySystem<Record<string, number>>());
  perSystem[system].push(stop());
  return result;
}

/** One line per system: median CPU each process spent per run of `phase` (× scale, e.g. per GiB). */
function printCpu(world: World, phase: string, scale = 1, unit = 'ms per run'): void {
  const perSystem = world.results.cpu[phase];
  if (!perSystem) return;
  for (const system of world.systems) {
    const samples = perSystem[system];
    if (samples.length === 0) continue;
    const parts = ['bridge', 'store', 'rclone', 'client']
      .map((name) => [name, median(samples.map((sample) => sample[name] ?? 0)) * scale] as const)
      .filter(([, value]) => value > 0)
      .map(([name, value]) => `${name} ${value.toFixed(0)}`);
    console.log(`  CPU (${unit}) during the ${system} runs: ${parts.join(', ') || 'none measured'}`);
  }
}

function peerOf(world: World, system: 'bridge' | 'rclone'): DavPeer {
  if (system === 'bridge') return world.bridge;
  if (!world.rclone) throw new Error('rclone is not running');
  return world.rclone;
}

// ---------------------------------------------------------------- main

interface World {
  settings: Settings;
  tmp: string;
  source: string;
  sourceSha: string;
  store: RunningChild & { baseUrl: string };
  bridgeChild: RunningChild;
  /** Names of the CPU profiles (BENCH_CPU_PROF_DIR) the children write when they stop. */
  profileFiles: { bridge: string; store: string };
  storeLog: StoreRequestLog;
  session: StoreSession;
  storeAgent: Agent;
  bridge: DavPeer;
  rclone: DavPeer | undefined;
  rcloneRoot: string;
  dirUuids: { big: string; many: string; hundred: string };
  systems: SystemName[];
  /** Our children, for CPU accounting. */
  pids: Record<string, number>;
  results: Results;
}

function emptyResults(): Results {
  return {
    propfindWarmMs: bySystem(),
    propfindColdMs: [],
    coldStoreRequests: [],
    warmStoreRequests: 0,
    warmBridgeRuns: 0,
    warmRunsSkipped: 0,
    loadRps: bySystem(),
    loadErrors: { bridge: 0, rclone: 0, store: 0 },
    loadStoreRequests: [],
    getMiBps: bySystem(),
    putMiBps: bySystem(),
    peakRssMiB: {},
    peakRssReset: true,
    rangeMs: bySystem(),
    rangeStoreBytes: [],
    rangeStoreRequests: [],
    rangeOffset: 0,
    rangeLength: 0,
    smallSeconds: bySystem(),
    cpu: {},
    notes: [],
    failures: [],
  };
}

/**
 * Starts store, bridge and (when installed) rclone, each a child with its own data dir, and
 * gives the store and rclone's folder the same files: the folders the targets list and the big
 * file. Every child and client is registered for cleanup as soon as it exists.
 */
async function setUp(run: BenchRun, settings: Settings, hasRclone: boolean): Promise<World> {
  const { tmp } = run;
  const logDir = settings.logDir ?? tmp;
  mkdirSync(logDir, { recursive: true });
  const results = emptyResults();

  const needsBig = [3, 4, 5, 6].some((t) => settings.only.has(t));
  const source = path.join(tmp, 'source', 'big.bin');
  mkdirSync(path.dirname(source), { recursive: true });
  let sourceSha = '';
  if (needsBig) {
    console.log(`${LABEL}: writing ${settings.sizeMiB} MiB of random data`);
    sourceSha = writeRandomFile(source, settings.sizeBytes);
  }

  const stamp = Date.now();
  const profileFiles = { bridge: `bridge-${stamp}.cpuprofile`, store: `store-${stamp}.cpuprofile` };
  const profArgs = (name: 'bridge' | 'store'): string[] =>
    [
      ...settings.nodeArgs,
      ...(settings.cpuProfDir ? ['--cpu-prof', '--cpu-prof-dir', settings.cpuProfDir, '--cpu-prof-name', profileFiles[name]] : []),
    ];
  if (settings.cpuProfDir) mkdirSync(settings.cpuProfDir, { recursive: true });

  const adminPassword = `Bench-${randomBytes(9).toString('base64url')}1a`;
  const store = await startDriveway({
    part: 'store',
    dataDir: path.join(tmp, 'store-data'),
    logFile: path.join(logDir, 'store.log'),
    // Level info: the store logs one line per request, which is how store requests are counted.
    env: { DRIVEWAY_ADMIN_PASSWORD: adminPassword, DRIVEWAY_LOG_LEVEL: 'info' },
    nodeArgs: profArgs('store'),
  });
  run.onCleanup(() => stopChild(store.child));
  console.log(`${LABEL}: store pid ${store.pid} on ${store.baseUrl}`);
  const storeAgent = newAgent(16);
  run.onCleanup(() => storeAgent.close());

  const bridgeChild = await startDriveway({
    part: 'bridge',
    dataDir: path.join(tmp, 'bridge-data'),
    logFile: path.join(logDir, 'bridge.log'),
    env: { DRIVEWAY_STORE_URL: store.baseUrl, DRIVEWAY_CACHE_TTL_MS: String(settings.ttlMs), DRIVEWAY_LOG_LEVEL: settings.bridgeLogLevel },
    nodeArgs: profArgs('bridge'),
  });
  run.onCleanup(() => stopChild(bridgeChild.child));
  console.log(`${LABEL}: bridge pid ${bridgeChild.pid} on ${bridgeChild.baseUrl} (cache TTL ${settings.ttlMs} ms)`);
  const auth = `Basic ${Buffer.from(`${BENCH_USER.email}:${BENCH_USER.password}`).toString('base64')}`;
  const bridge: DavPeer = { name: 'bridge', base: bridgeChild.baseUrl, auth, agent: newAgent(8), pid: bridgeChild.pid };
  run.onCleanup(() => bridge.agent.close());

  // The store is seeded through SPEC calls only; rclone's folder gets the same files on disk.
  const session = await createBenchUser(storeAgent, store.baseUrl, adminPassword);
  const rcloneRoot = path.join(tmp, 'rclone-root');
  const rcloneHome = path.join(rcloneRoot, 'home');
  mkdirSync(rcloneHome, { recursive: true });

  const seedFolder = async (name: string, count: number): Promise<string> => {
    const uuid = await storeMkdir(storeAgent, store.baseUrl, session.token, 'home', name);
    const diskDir = path.join(rcloneHome, name);
    mkdirSync(diskDir);
    const started = nowMs();
    await runBounded(count, SEED_PARALLEL, async (i) => {
      const fileName = `f-${String(i).padStart(5, '0')}.txt`;
      const content = Buffer.from(`tiny file ${i}\n`);
      await storeUpload(storeAgent, store.baseUrl, session.token, uuid, fileName, content);
      writeFileSync(path.join(diskDir, fileName), content);
    });
    console.log(`${LABEL}: seeded ${name} with ${count} files in ${((nowMs() - started) / 1000).toFixed(1)} s`);
    return uuid;
  };
  const many = settings.only.has(1) ? await seedFolder('bench-many', settings.dirEntries) : '';
  const hundred = settings.only.has(2) ? await seedFolder('bench-100', 100) : '';
  let big = '';
  if (needsBig) {
    const started = nowMs();
    await storeUpload(storeAgent, store.baseUrl, session.token, 'home', 'big.bin', { file: source, sizeBytes: settings.sizeBytes });
    copyFileSync(source, path.join(rcloneHome, 'big.bin'));
    const entry = (await storeDirlist(storeAgent, store.baseUrl, session.token, 'home')).find((e) => e.name === 'big.bin');
    if (!entry || entry.size !== settings.sizeBytes) throw new Error('big.bin not listed with its size after the upload');
    big = entry.uuid;
    console.log(`${LABEL}: seeded big.bin (${settings.sizeMiB} MiB) in ${((nowMs() - started) / 1000).toFixed(1)} s`);
  }

  const rclone = hasRclone ? await startRclone(run, rcloneRoot, logDir, auth) : undefined;
  return {
    settings,
    tmp,
    source,
    sourceSha,
    store,
    bridgeChild,
    profileFiles,
    storeLog: new StoreRequestLog(store.logFile),
    session,
    storeAgent,
    bridge,
    rclone,
    rcloneRoot,
    dirUuids: { big, many, hundred },
    systems: rclone ? ['bridge', 'rclone', 'store'] : ['bridge', 'store'],
    pids: rclone ? { bridge: bridge.pid, store: store.pid, rclone: rclone.pid } : { bridge: bridge.pid, store: store.pid },
    results,
  };
}

/** `rclone serve webdav` over `root` on a free loopback port, with the bench user's credentials. */
async function startRclone(run: BenchRun, root: string, logDir: string, auth: string): Promise<DavPeer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // Its own empty config and cache dir: nothing of the user's rclone setup is read or written.
  const config = path.join(run.tmp, 'rclone.conf');
  writeFileSync(config, '');
  const probe = newAgent(1);
  run.onCleanup(() => probe.close());
  const child = await startChild({
    name: 'rclone serve webdav',
    command: 'rclone',
    args: [
      'serve', 'webdav', root,
      '--addr', `127.0.0.1:${port}`,
      '--user', BENCH_USER.email,
      '--pass', BENCH_USER.password,
      '--config', config,
      '--cache-dir', path.join(run.tmp, 'rclone-cache'),
      '--log-level', 'NOTICE',
    ],
    env: { PATH: process.env.PATH, HOME: run.tmp },
    logFile: path.join(logDir, 'rclone.log'),
    readyProbe: async () => {
      const answer = await request(`${base}/`, { dispatcher: probe, method: 'OPTIONS', headers: { authorization: auth } });
      await answer.body.dump();
      return answer.statusCode < 500;
    },
  });
  run.onCleanup(() => stopChild(child.child));
  const peer: DavPeer = { name: 'rclone', base, auth, agent: newAgent(8), pid: child.pid };
  run.onCleanup(() => peer.agent.close());
  console.log(`${LABEL}: rclone pid ${child.pid} on ${base}`);
  return peer;
}

async function main(): Promise<void> {
  const settings = settingsFromEnv();
  buildDriveway(LABEL);
  const rcloneVersion = spawnSync('rclone', ['version'], { encoding: 'utf8' });
  const hasRclone = rcloneVersion.status === 0;
  if (hasRclone) console.log(`${LABEL}: reference peer ${rcloneVersion.stdout.split('\n')[0]}`);
  else console.log(`${LABEL}: NOTE rclone is not installed; measuring the bridge and the store only`);

  await withBenchRun(LABEL, RUN_TIMEOUT_MS, async (run) => {
    const world = await setUp(run, settings, hasRclone);
    const { results, bridge, rclone, store } = world;
    if (!hasRclone) results.notes.push('rclone is NOT installed: the rclone column is empty and no target against rclone is judged (install rclone and run again).');

    // The bridge's first request logs in (scrypt on the store): keep that out of every timing.
    expectStatus('warm-up PROPFIND /home/ on the bridge', await propfind(bridge, '/home/', { keepBody: true }), 207);
    if (rclone) expectStatus('warm-up PROPFIND /home/ on rclone', await propfind(rclone, '/home/', { keepBody: true }), 207);

    const watchers: Partial<Record<SystemName, RssWatcher>> = { bridge: new RssWatcher(bridge.pid), store: new RssWatcher(store.pid) };
    if (rclone) watchers.rclone = new RssWatcher(rclone.pid);
    run.onCleanup(() => {
      for (const watcher of Object.values(watchers)) watcher?.stop();
    });

    if (settings.only.has(1)) await benchPropfindMany(world);
    if (settings.only.has(2)) await benchPropfindLoad(world);
    if (settings.only.has(3) || settings.only.has(4)) {
      const before: string[] = [];
      for (const [name, watcher] of Object.entries(watchers) as Array<[SystemName, RssWatcher]>) {
        if (!watcher.restart()) results.peakRssReset = false;
        before.push(`${name} ${(watcher.currentKiB / 1024).toFixed(0)} MiB`);
      }
      results.notes.push(`5: RSS right before 3 (the floor of the peak): ${before.join(', ')}.`);
      if (settings.only.has(3)) await benchGet(world);
      if (settings.only.has(4)) await benchPut(world);
      for (const [name, watcher] of Object.entries(watchers) as Array<[SystemName, RssWatcher]>) results.peakRssMiB[name] = watcher.peakMiB();
      if (!results.peakRssReset) results.notes.push('5: the kernel refused to reset VmHWM (clear_refs), so peaks include the phases before 3.');
    }
    if (settings.only.has(6)) await benchRange(world);
    if (settings.only.has(7)) await benchSmallFiles(world);

    report(world);
    for (const [name, file] of [['bridge', world.bridgeChild.logFile], ['store', store.logFile]] as const) {
      const problems = tailOf(file, 64 * 1024)
        .split('\n')
        .filter((line) => /"level":(40|50|60)/.test(line));
      if (problems.length > 0) console.log(`\n${name} logged ${problems.length} warnings/errors (last 64 KiB of its log); the last:\n${problems.slice(-5).join('\n')}`);
    }
    if (settings.cpuProfDir) {
      // The profiles are written when the processes exit.
      await stopChild(world.bridgeChild.child);
      await stopChild(store.child);
      for (const name of [world.profileFiles.bridge, world.profileFiles.store]) {
        const file = path.join(settings.cpuProfDir, name);
        console.log(`\n${existsSync(file) ? summarizeCpuProfile(file) : `no profile at ${file}`}`);
      }
    }
    if (results.failures.length > 0) process.exitCode = 1;
  });
}

// ---------------------------------------------------------------- target 1

async function benchPropfindMany(world: World): Promise<void> {
  const { settings, bridge, rclone, results, storeLog, store, session, storeAgent } = world;
  const folder = '/home/bench-many/';
  const expected = settings.dirEntries + 1;
  console.log(`\n${LABEL}: 1. PROPFIND Depth 1 on a ${settings.dirEntries}-entry folder (${settings.rounds} rounds)`);

  // The full answer is checked once; each timed answer must then have the same length.
  const fullBytes: Partial<Record<SystemName, number>> = {};
  for (const peer of [bridge, rclone]) {
    if (!peer) continue;
    const answer = await propfind(peer, folder, { keepBody: true });
    expectStatus(`PROPFIND ${folder} on ${peer.name}`, answer, 207);
    const count = countResponses(answer.body?.toString('utf8') ?? '');
    if (count !== expected) throw new Error(`PROPFIND ${folder} on ${peer.name} listed ${count} responses, expected ${expected}`);
    fullBytes[peer.name] = answer.bytes;
  }
  const listed = await storeDirlist(storeAgent, store.baseUrl, session.token, world.dirUuids.many);
  if (listed.length !== settings.dirEntries) throw new Error(`store dirlist lists ${listed.length} entries, expected ${settings.dirEntries}`);
  let filledAt = nowMs();

  for (let round = 0; round < settings.rounds; round += 1) {
    // Cold: every listing the bridge holds has outlived its TTL.
    const wait = filledAt + settings.ttlMs + 300 - nowMs();
    if (wait > 0) await sleep(wait);
    await storeLog.take();
    const cold = await propfind(bridge, folder);
    expectStatus('cold PROPFIND on the bridge', cold, 207);
    if (cold.bytes !== fullBytes.bridge) throw new Error(`cold PROPFIND on the bridge answered ${cold.bytes} bytes, the checked answer had ${String(fullBytes.bridge)}`);
    filledAt = nowMs();
    results.propfindColdMs.push(cold.ms);
    results.coldStoreRequests.push(await storeLog.take());

    for (let i = 0; i < WARM_RUNS_PER_ROUND; i += 1) {
      for (const system of rotate(world.systems, round + i)) {
        if (system === 'store') {
          const start = nowMs();
          await metered(world, 'propfind', system, () => storeDirlist(storeAgent, store.baseUrl, session.token, world.dirUuids.many));
          results.propfindWarmMs.store.push(nowMs() - start);
          continue;
        }
        const peer = peerOf(world, system);
        if (system === 'bridge') {
          // Keep well inside the TTL, or the run would be a cold one.
          if (nowMs() - filledAt > settings.ttlMs - 1500) {
            results.warmRunsSkipped += 1;
            continue;
          }
          await storeLog.take();
        }
        const answer = await metered(world, 'propfind', system, () => propfind(peer, folder));
        expectStatus(`warm PROPFIND on ${system}`, answer, 207);
        if (answer.bytes !== fullBytes[system]) throw new Error(`warm PROPFIND on ${system} answered ${answer.bytes} bytes, the checked answer had ${String(fullBytes[system])}`);
        results.propfindWarmMs[system].push(answer.ms);
        if (system === 'bridge') {
          results.warmBridgeRuns += 1;
          results.warmStoreRequests += (await storeLog.take()).length;
        }
      }
    }
  }
  const w = results.propfindWarmMs;
  console.log(`  warm bridge ${spread(w.bridge)} ms; rclone ${spread(w.rclone)} ms; store dirlist ${spread(w.store)} ms`);
  console.log(`  answer sizes: bridge ${String(fullBytes.bridge)} bytes, rclone ${String(fullBytes.rclone)} bytes`);
  console.log(`  cold bridge ${spread(results.propfindColdMs)} ms; store requests per cold run: ${describeRequests(results.coldStoreRequests[0] ?? [])}`);
  console.log(`  store requests during ${results.warmBridgeRuns} warm bridge runs: ${results.warmStoreRequests}`);
  printCpu(world, 'propfind', 1, 'ms per warm request');
  if (results.warmRunsSkipped > 0) results.notes.push(`1: ${results.warmRunsSkipped} warm bridge runs skipped (too close to the end of the cache TTL; raise BENCH_CACHE_TTL_MS).`);
}

// ---------------------------------------------------------------- target 2

async function benchPropfindLoad(world: World): Promise<void> {
  const { settings, bridge, rclone, results, storeLog, store, session } = world;
  const folder = '/home/bench-100/';
  console.log(`\n${LABEL}: 2. PROPFIND Depth 1 on a 100-entry folder, ${LOAD_CONNECTIONS} connections × ${settings.loadSeconds} s (${settings.rounds} rounds)`);
  for (const peer of [bridge, rclone]) {
    if (!peer) continue;
    const answer = await propfind(peer, folder, { keepBody: true });
    expectStatus(`PROPFIND ${folder} on ${peer.name}`, answer, 207);
    const count = countResponses(answer.body?.toString('utf8') ?? '');
    if (count !== 101) throw new Error(`PROPFIND ${folder} on ${peer.name} listed ${count} responses, expected 101`);
  }

  const load = async (system: SystemName): Promise<number> => {
    const agent = newAgent(LOAD_CONNECTIONS);
    const peer = system === 'store' ? undefined : peerOf(world, system);
    const dirlistUrl = `${store.baseUrl}/api/nodes/${world.dirUuids.hundred}/dirlist`;
    let ok = 0;
    try {
      const start = nowMs();
      const deadline = start + settings.loadSeconds * 1000;
      await Promise.all(
        Array.from({ length: LOAD_CONNECTIONS }, async () => {
          while (nowMs() < deadline) {
            const answer = peer
              ? await propfind(peer, folder, { dispatcher: agent })
              : await exchange(agent, dirlistUrl, { method: 'GET', headers: { authorization: `Bearer ${session.token}` } });
            if (answer.status === (peer ? 207 : 200)) ok += 1;
            else results.loadErrors[system] += 1;
          }
        }),
      );
      return ok / ((nowMs() - start) / 1000);
    } finally {
      await agent.close();
    }
  };

  for (let round = 0; round < settings.rounds; round += 1) {
    for (const system of rotate(world.systems, round)) {
      if (system === 'bridge') await storeLog.take();
      results.loadRps[system].push(await metered(world, 'load', system, () => load(system)));
      if (system === 'bridge') results.loadStoreRequests.push(await storeLog.take());
    }
  }
  const r = results.loadRps;
  console.log(`  bridge ${spread(r.bridge, 0)} req/s; rclone ${spread(r.rclone, 0)} req/s; store dirlist ${spread(r.store, 0)} req/s`);
  printCpu(world, 'load', 1 / settings.loadSeconds, 'ms per s of load');
  const perRun = results.loadStoreRequests.map((requests) => requests.length).join(', ');
  console.log(`  store requests during the bridge's ${settings.loadSeconds} s runs (cache TTL ${settings.ttlMs} ms): ${perRun}; in all: ${describeRequests(results.loadStoreRequests.flat())}`);
  for (const system of world.systems) {
    if (results.loadErrors[system] > 0) results.notes.push(`2: ${system} answered ${results.loadErrors[system]} requests with an unexpected status (not counted).`);
  }
}

// ---------------------------------------------------------------- targets 3 and 4

async function benchGet(world: World): Promise<void> {
  const { settings, bridge, results, store, session, storeAgent } = world;
  console.log(`\n${LABEL}: 3. GET of a ${settings.sizeMiB} MiB file (${settings.rounds} rounds)`);
  const storeUrl = storeDownloadUrl(store.baseUrl, session, world.dirUuids.big, 'big.bin');
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const system of rotate(world.systems, round)) {
      const peer = system === 'store' ? undefined : peerOf(world, system);
      const answer = await metered(world, 'get', system, () =>
        peer ? exchange(peer.agent, `${peer.base}/home/big.bin`, { method: 'GET', headers: davHeaders(peer) }) : exchange(storeAgent, storeUrl, { method: 'GET' }),
      );
      expectStatus(`GET big.bin from ${system}`, answer, 200);
      if (answer.bytes !== settings.sizeBytes) throw new Error(`GET big.bin from ${system} gave ${answer.bytes} bytes, expected ${settings.sizeBytes}`);
      results.getMiBps[system].push(settings.sizeBytes / MiB / (answer.ms / 1000));
    }
  }
  const g = results.getMiBps;
  console.log(`  bridge ${spread(g.bridge)} MiB/s; rclone ${spread(g.rclone)} MiB/s; store ${spread(g.store)} MiB/s`);
  printCpu(world, 'get', 1024 / settings.sizeMiB, 'ms per GiB');
  if (settings.verify) {
    const check = await exchange(bridge.agent, `${bridge.base}/home/big.bin`, { method: 'GET', headers: davHeaders(bridge), hash: true });
    if (check.sha256 !== world.sourceSha) {
      results.failures.push('3: the bridge served big.bin with a different sha256');
      console.log('  sha256 of the bridge GET DIFFERS from the source');
    } else console.log('  sha256 of a bridge GET equals the source (checked outside the timings)');
  }
}

async function benchPut(world: World): Promise<void> {
  const { settings, bridge, rclone, results, store, session, storeAgent, source } = world;
  console.log(`\n${LABEL}: 4. PUT of a ${settings.sizeMiB} MiB file (${settings.rounds} rounds)`);
  for (let round = 0; round < settings.rounds; round += 1) {
    for (const system of rotate(world.systems, round)) {
      const name = `put-${system}-${round}.bin`;
      const start = nowMs();
      await metered(world, 'put', system, async () => {
        if (system === 'store') {
          await storeUpload(storeAgent, store.baseUrl, session.token, 'home', name, { file: source, sizeBytes: settings.sizeBytes });
          return;
        }
        const peer = peerOf(world, system);
        const answer = await exchange(peer.agent, `${peer.base}${davPath('home', name)}`, {
          method: 'PUT',
          headers: davHeaders(peer, { 'content-length': String(settings.sizeBytes), 'content-type': 'application/octet-stream' }),
          body: createReadStream(source, { highWaterMark: MiB }),
          keepBody: true,
        });
        expectStatus(`PUT ${name} to ${system}`, answer, 201, 204);
      });
      results.putMiBps[system].push(settings.sizeBytes / MiB / ((nowMs() - start) / 1000));
    }
  }
  const p = results.putMiBps;
  console.log(`  bridge ${spread(p.bridge)} MiB/s; rclone ${spread(p.rclone)} MiB/s; store (two-step upload) ${spread(p.store)} MiB/s`);
  printCpu(world, 'put', 1024 / settings.sizeMiB, 'ms per GiB');

  const home = await storeDirlist(storeAgent, store.baseUrl, session.token, 'home');
  for (let round = 0; round < settings.rounds; round += 1) {
    const entry = home.find((e) => e.name === `put-bridge-${round}.bin`);
    if (entry?.size !== settings.sizeBytes) results.failures.push(`4: put-bridge-${round}.bin is listed by the store with size ${String(entry?.size)}`);
    if (rclone) {
      const size = statSync(path.join(world.rcloneRoot, 'home', `put-rclone-${round}.bin`), { throwIfNoEntry: false })?.size;
      if (size !== settings.sizeBytes) results.failures.push(`4: rclone stored put-rclone-${round}.bin with size ${String(size)}`);
    }
  }
  if (settings.verify) {
    const check = await exchange(bridge.agent, `${bridge.base}/home/put-bridge-0.bin`, { method: 'GET', headers: davHeaders(bridge), hash: true });
    if (check.sha256 !== world.sourceSha) {
      results.failures.push('4: the file PUT through the bridge reads back with a different sha256');
      console.log('  sha256 of the file PUT through the bridge DIFFERS from the source');
    } else console.log('  sha256 of the file PUT through the bridge equals the source (checked outside the timings)');
  }
}

// ---------------------------------------------------------------- target 6

async function benchRange(world: World): Promise<void> {
  const { settings, results, store, session, storeAgent, storeLog } = world;
  const offset = settings.sizeBytes >= 1024 * MiB ? 900 * MiB : Math.floor((settings.sizeBytes * 900) / 1024 / MiB) * MiB;
  const length = Math.min(MiB, settings.sizeBytes - offset);
  results.rangeOffset = offset;
  results.rangeLength = length;
  const expected = readSlice(world.source, offset, length);
  const range = `bytes=${offset}-${offset + length - 1}`;
  console.log(`\n${LABEL}: 6. Range ${range} (${(length / MiB).toFixed(2)} MiB at ${(offset / MiB).toFixed(0)} MiB; ${settings.rounds}×${RANGE_RUNS_PER_ROUND} reads each)`);
  const storeUrl = storeDownloadUrl(store.baseUrl, session, world.dirUuids.big, 'big.bin');

  for (let round = 0; round < settings.rounds; round += 1) {
    for (let i = 0; i < RANGE_RUNS_PER_ROUND; i += 1) {
      for (const system of rotate(world.systems, round + i)) {
        let answer: Answer;
        if (system === 'store') {
          answer = await metered(world, 'range', system, () => exchange(storeAgent, storeUrl, { method: 'GET', headers: { range }, keepBody: true }));
        } else {
          const peer = peerOf(world, system);
          const url = `${peer.base}/home/big.bin`;
          // A HEAD first, so the timed read finds the path in the bridge's cache (rclone's is warm anyway).
          const head = await exchange(peer.agent, url, { method: 'HEAD', headers: davHeaders(peer) });
          expectStatus(`HEAD big.bin on ${system}`, head, 200);
          let before: number | undefined;
          if (system === 'bridge') {
            await storeLog.take();
            before = procIo(store.pid)?.wchar;
          }
          answer = await metered(world, 'range', system, () => exchange(peer.agent, url, { method: 'GET', headers: davHeaders(peer, { range }), keepBody: true }));
          if (system === 'bridge') {
            const requests = await storeLog.take();
            const after = procIo(store.pid)?.wchar;
            results.rangeStoreRequests.push(requests.length);
            if (before !== undefined && after !== undefined) results.rangeStoreBytes.push(after - before);
          }
        }
        expectStatus(`range GET from ${system}`, answer, 206);
        if (!answer.body?.equals(expected)) throw new Error(`range GET from ${system} returned other bytes than the source's (${answer.bytes} bytes)`);
        results.rangeMs[system].push(answer.ms);
      }
    }
  }
  const r = results.rangeMs;
  console.log(`  bridge ${spread(r.bridge, 2)} ms; rclone ${spread(r.rclone, 2)} ms; store ${spread(r.store, 2)} ms`);
  printCpu(world, 'range', 1, 'ms per read');
  console.log(
    `  the store sent ${results.rangeStoreBytes.map((b) => (b / 1e6).toFixed(3)).join(', ')} MB per bridge range read, in ${results.rangeStoreRequests.join(', ')} requests`,
  );
  if (results.rangeStoreBytes.length === 0) results.notes.push('6: /proc/<store pid>/io was unreadable; bytes read from the store are unknown.');
}

// ---------------------------------------------------------------- target 7

async function benchSmallFiles(world: World): Promise<void> {
  const { settings, rclone, results, store, session, storeAgent } = world;
  const count = settings.smallFiles;
  console.log(`\n${LABEL}: 7. ${count} files of ${SMALL_FILE_BYTES / 1024} KiB by ${SMALL_CLIENTS} parallel clients (${settings.rounds} rounds)`);
  const content = randomBytes(SMALL_FILE_BYTES);
  const nameOf = (i: number): string => `s-${String(i).padStart(5, '0')}.bin`;

  for (let round = 0; round < settings.rounds; round += 1) {
    for (const system of rotate(world.systems, round)) {
      const folder = `small-${system}-${round}`;
      const agent = newAgent(SMALL_CLIENTS);
      try {
        let seconds: number;
        if (system === 'store') {
          const uuid = await storeMkdir(storeAgent, store.baseUrl, session.token, 'home', folder);
          const start = nowMs();
          await metered(world, 'small', system, () => runBounded(count, SMALL_CLIENTS, (i) => storeUpload(agent, store.baseUrl, session.token, uuid, nameOf(i), content)));
          seconds = (nowMs() - start) / 1000;
        } else {
          const peer = peerOf(world, system);
          const mkcol = await exchange(peer.agent, `${peer.base}${davPath('home', folder)}/`, { method: 'MKCOL', headers: davHeaders(peer), keepBody: true });
          expectStatus(`MKCOL ${folder} on ${system}`, mkcol, 201);
          const start = nowMs();
          await metered(world, 'small', system, () => runBounded(count, SMALL_CLIENTS, async (i) => {
            const answer = await exchange(agent, `${peer.base}${davPath('home', folder, nameOf(i))}`, {
              method: 'PUT',
              headers: davHeaders(peer, { 'content-type': 'application/octet-stream' }),
              body: content,
              keepBody: true,
            });
            expectStatus(`PUT ${folder}/${nameOf(i)} to ${system}`, answer, 201, 204);
          }));
          seconds = (nowMs() - start) / 1000;
        }
        results.smallSeconds[system].push(seconds);
      } finally {
        await agent.close();
      }
    }
  }
  const s = results.smallSeconds;
  console.log(`  bridge ${spread(s.bridge, 2)} s; rclone ${spread(s.rclone, 2)} s; store (two-step uploads) ${spread(s.store, 2)} s`);
  printCpu(world, 'small', 1, `ms per ${count} files`);

  // What arrived: every file, once, with its size.
  const home = await storeDirlist(storeAgent, store.baseUrl, session.token, 'home');
  for (let round = 0; round < settings.rounds; round += 1) {
    const folder = home.find((e) => e.name === `small-bridge-${round}`);
    const entries = folder ? await storeDirlist(storeAgent, store.baseUrl, session.token, folder.uuid) : [];
    const good = entries.filter((e) => e.size === SMALL_FILE_BYTES).length;
    if (good !== count) results.failures.push(`7: the store holds ${good} of the ${count} files PUT through the bridge in round ${round}`);
    if (rclone) {
      const onDisk = readdirSync(path.join(world.rcloneRoot, 'home', `small-rclone-${round}`)).length;
      if (onDisk !== count) results.failures.push(`7: rclone wrote ${onDisk} of ${count} files in round ${round}`);
    }
  }
}

// ---------------------------------------------------------------- the table

interface Row {
  metric: string;
  bridge?: number;
  rclone?: number;
  store?: number;
  digits: number;
  /** bridge / reference, when a target is judged. */
  ratio?: number;
  ratioLabel?: string;
  target: string;
  verdict?: boolean;
}

function report(world: World): void {
  const { settings, results } = world;
  const rows: Row[] = [];
  const m = (values: readonly number[]): number | undefined => (values.length > 0 ? median(values) : undefined);
  const ratioOf = (a: number | undefined, b: number | undefined): number | undefined => (a !== undefined && b !== undefined && b > 0 ? a / b : undefined);
  const judge = (ratio: number | undefined, ok: (r: number) => boolean): boolean | undefined => (ratio === undefined ? undefined : ok(ratio));

  if (settings.only.has(1)) {
    const bridge = m(results.propfindWarmMs.bridge);
    const rclone = m(results.propfindWarmMs.rclone);
    const ratio = ratioOf(bridge, rclone);
    rows.push({ metric: `1 PROPFIND ${settings.dirEntries} entries, warm (ms)`, bridge, rclone, store: m(results.propfindWarmMs.store), digits: 1, ratio, target: '≤ 0.65× rclone', verdict: judge(ratio, (r) => r <= 0.65) });
    rows.push({
      metric: `1 store requests in ${results.warmBridgeRuns} warm runs`,
      bridge: results.warmStoreRequests,
      digits: 0,
      target: '0',
      verdict: results.warmBridgeRuns > 0 && results.warmStoreRequests === 0,
    });
    const cold = m(results.propfindColdMs);
    rows.push({ metric: `1 PROPFIND ${settings.dirEntries} entries, cold (ms)`, bridge: cold, digits: 1, ratio: ratioOf(cold, rclone), target: 'reported' });
  }
  if (settings.only.has(2)) {
    const bridge = m(results.loadRps.bridge);
    const rclone = m(results.loadRps.rclone);
    const ratio = ratioOf(bridge, rclone);
    rows.push({ metric: `2 PROPFIND 100 entries, ${LOAD_CONNECTIONS} conns (req/s)`, bridge, rclone, store: m(results.loadRps.store), digits: 0, ratio, target: '≥ 2× rclone', verdict: judge(ratio, (r) => r >= 2) });
  }
  if (settings.only.has(3)) {
    const bridge = m(results.getMiBps.bridge);
    const rclone = m(results.getMiBps.rclone);
    const store = m(results.getMiBps.store);
    const ratio = ratioOf(bridge, rclone);
    rows.push({ metric: `3 GET ${settings.sizeMiB} MiB (MiB/s)`, bridge, rclone, store, digits: 0, ratio, target: '≥ 0.5× rclone', verdict: judge(ratio, (r) => r >= 0.5) });
    const vsStore = ratioOf(bridge, store);
    rows.push({ metric: `3 GET ${settings.sizeMiB} MiB vs the store`, bridge, store, digits: 0, ratio: vsStore, ratioLabel: 'store', target: '≥ 0.9× store', verdict: judge(vsStore, (r) => r >= 0.9) });
  }
  if (settings.only.has(4)) {
    const bridge = m(results.putMiBps.bridge);
    const rclone = m(results.putMiBps.rclone);
    const ratio = ratioOf(bridge, rclone);
    rows.push({ metric: `4 PUT ${settings.sizeMiB} MiB (MiB/s)`, bridge, rclone, store: m(results.putMiBps.store), digits: 0, ratio, target: '≥ 2× rclone', verdict: judge(ratio, (r) => r >= 2) });
  }
  if (settings.only.has(5)) {
    const { bridge, rclone, store } = results.peakRssMiB;
    const ratio = ratioOf(bridge, rclone);
    rows.push({ metric: '5 peak RSS during 3 and 4 (MiB)', bridge, rclone, store, digits: 0, ratio, target: '≤ 1× rclone', verdict: judge(ratio, (r) => r <= 1) });
  }
  if (settings.only.has(6)) {
    const bridge = m(results.rangeMs.bridge);
    const rclone = m(results.rangeMs.rclone);
    const ratio = ratioOf(bridge, rclone);
    rows.push({
      metric: `6 1 MiB range at ${(results.rangeOffset / MiB).toFixed(0)} MiB (ms)`,
      bridge,
      rclone,
      store: m(results.rangeMs.store),
      digits: 2,
      ratio,
      target: '≤ 1× rclone',
      verdict: judge(ratio, (r) => r <= 1),
    });
    const worst = results.rangeStoreBytes.length > 0 ? Math.max(...results.rangeStoreBytes) : undefined;
    rows.push({
      metric: '6 MB sent by the store per range read (max)',
      bridge: worst === undefined ? undefined : worst / 1e6,
      digits: 3,
      target: '≤ 2 MB',
      verdict: worst === undefined ? undefined : worst <= RANGE_STORE_BYTES_LIMIT,
    });
  }
  if (settings.only.has(7)) {
    const bridge = m(results.smallSeconds.bridge);
    const rclone = m(results.smallSeconds.rclone);
    const ratio = ratioOf(bridge, rclone);
    rows.push({
      metric: `7 ${settings.smallFiles} × 4 KiB PUT, ${SMALL_CLIENTS} clients (s)`,
      bridge,
      rclone,
      store: m(results.smallSeconds.store),
      digits: 2,
      ratio,
      target: '≤ 1.2× rclone',
      verdict: judge(ratio, (r) => r <= 1.2),
    });
  }

  console.log('');
  console.log(
    `driveway bridge benchmark: medians of ${settings.rounds} interleaved rounds; ${settings.sizeMiB} MiB file; loopback; ${os.cpus().length} CPUs (${os.cpus()[0]?.model ?? '?'}); node ${process.version}; bridge cache TTL ${settings.ttlMs} ms`,
  );
  console.log('store column: the same operation on the store directly (dirlist for PROPFIND, two-step upload for PUT); ratio: bridge / rclone unless marked');
  printTable(
    ['metric', 'bridge', 'rclone', 'store', 'ratio', 'target', 'result'],
    rows.map((r) => [
      r.metric,
      fmt(r.bridge, r.digits),
      fmt(r.rclone, r.digits),
      fmt(r.store, r.digits),
      r.ratio === undefined ? '–' : `${r.ratio.toFixed(2)}×${r.ratioLabel ? ` ${r.ratioLabel}` : ''}`,
      r.target,
      r.verdict === undefined ? (r.target === 'reported' ? '–' : 'n/a') : r.verdict ? 'pass' : 'FAIL',
    ]),
  );
  for (const r of rows) if (r.verdict === false) results.failures.push(`${r.metric}: missed (${r.target})`);
  for (const note of results.notes) console.log(`note: ${note}`);
  if (results.failures.length > 0) {
    console.log('');
    for (const failure of results.failures) console.log(`MISSED/WRONG: ${failure}`);
  }
}

main().catch((err: unknown) => {
  if (isInterrupted()) return;
  console.error(`${LABEL} failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
