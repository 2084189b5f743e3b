/**
 * Chunked and resumable uploads against one PUT (issue 23's benchmark):
 * `npx tsx bench/chunked-upload.ts`. One driveway process as `npm start` runs it, on the embedded
 * default and, when PostgreSQL is installed, on PostgreSQL + S3 (s3rver); a BENCH_CHUNKED_MIB file
 * (1024) of random bytes, uploaded in each round three ways, in an order that rotates per round:
 *
 *   put      `curl -T` of the whole file to /home/ (one request)
 *   chunked  `curl` MKCOL of a v2 upload folder (Destination, OC-Total-Length), the file's 10 MiB
 *            chunks by `curl --parallel --parallel-max 4` (one config file listing them), then
 *            `curl` MOVE of `.file` onto the target: the wall time of the three
 *   tus      `curl` POST to /home/ (Upload-Length, Upload-Metadata), then the file's 5 MiB parts
 *            as PATCHes one after the other on one connection (one curl config file)
 *
 * The same run times the node floor (bench/raw-node.ts: a Node HTTP server with no session, no
 * database, no hashing) for put and for tus's PATCHes, sent by the same curl commands: what the
 * sequential 5 MiB PATCHes cost against one PUT before driveway does anything (BENCH_SETUPS
 * picks among embedded, pg+s3 and floor).
 *
 * Every figure comes from curl (the bench's own Node code splits the file and checks sizes,
 * outside the timings). Reported: MB/s (10^6 bytes) as the median of BENCH_ROUNDS (3) and their
 * spread, each against put's median time, the driveway process's peak RSS during each (VmHWM,
 * reset before each when the kernel allows), and the 1-minute load average at each round's start
 * (the machine may be shared). The issue's target: chunked and tus within 1.3x of put's time.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import { requirePostgres, startPostgres } from '../test/helpers/postgres.js';
import { S3RVER_CREDENTIALS, startS3Server } from '../test/helpers/s3-server.js';
import {
  BENCH_USER,
  buildDriveway,
  createBenchUser,
  fmt,
  freePort,
  killClients,
  median,
  MiB,
  positiveIntEnv,
  printTable,
  readSlice,
  rotate,
  RssWatcher,
  runClient,
  spread,
  startChild,
  startDriveway,
  stopChild,
  transpileFloor,
  writeRandomFile,
  withBenchRun,
  type BenchRun,
} from './lib.js';

const LABEL = 'bench:chunked-upload';
const CHUNK_BYTES = 10 * MiB;
const TUS_PART_BYTES = 5 * MiB;
const PARALLEL = 4;
const RUN_TIMEOUT_MS = 60 * 60_000;
const CURL_TIMEOUT_MS = 20 * 60_000;

interface Figures {
  seconds: number[];
  peakMiB: number[];
}

type Way = 'put' | 'chunked' | 'tus';
const WAYS: readonly Way[] = ['put', 'chunked', 'tus'];

interface Result {
  setup: string;
  ways: Record<Way, Figures>;
  load: number[];
}

const agent = new Agent({ connections: 4 });

async function curl(args: string[]): Promise<number> {
  const result = await runClient('curl', ['--silent', '--show-error', '--fail-with-body', '--user', `${BENCH_USER.email}:${BENCH_USER.password}`, ...args], { PATH: process.env.PATH }, CURL_TIMEOUT_MS);
  if (result.code !== 0) throw new Error(`curl ${args.slice(0, 4).join(' ')} failed (${result.code}): ${result.stderr}${result.stdout}`);
  return result.wallMs;
}

/** The file's chunks of `chunkBytes` as files of their own (outside every timing). */
function chunkFiles(file: string, sizeBytes: number, dir: string, chunkBytes: number): string[] {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let start = 0, n = 1; start < sizeBytes; start += chunkBytes, n += 1) {
    const chunk = path.join(dir, String(n));
    writeFileSync(chunk, readSlice(file, start, Math.min(chunkBytes, sizeBytes - start)));
    files.push(chunk);
  }
  return files;
}

interface Inputs {
  file: string;
  sizeBytes: number;
  /** 10 MiB pieces for Nextcloud chunking, 5 MiB ones for tus. */
  chunks: string[];
  tusParts: string[];
}

async function benchSetup(run: BenchRun, setup: string, env: Record<string, string>, inputs: Inputs, rounds: number): Promise<Result> {
  const { file, sizeBytes, chunks, tusParts } = inputs;
  const adminPassword = `Bench-${randomBytes(9).toString('base64url')}1a`;
  const dataDir = path.join(run.tmp, `data-${setup}`);
  const driveway = await startDriveway({ part: 'all', dataDir, logFile: path.join(run.tmp, `${setup}.log`), env: { ...env, DRIVEWAY_ADMIN_PASSWORD: adminPassword } });
  run.onCleanup(() => stopChild(driveway.child));
  const storeUrl = /driveway store:\s+(http:\/\/\S+)/.exec(readFileSync(driveway.logFile, 'utf8'))?.[1] as string;
  await createBenchUser(agent, storeUrl, adminPassword);
  const dav = driveway.baseUrl;
  const owner = encodeURIComponent(BENCH_USER.email);
  const rss = new RssWatcher(driveway.pid);
  const result: Result = { setup, ways: { put: { seconds: [], peakMiB: [] }, chunked: { seconds: [], peakMiB: [] }, tus: { seconds: [], peakMiB: [] } }, load: [] };

  const put = (round: number): Promise<number> => curl(['-T', file, '-o', '/dev/null', `${dav}/home/put-${round}.bin`]);
  async function chunked(round: number): Promise<number> {
    const target = `${dav}/remote.php/dav/files/${owner}/home/chunked-${round}.bin`;
    const folder = `${dav}/remote.php/dav/uploads/${owner}/bench-${round}`;
    const headers = ['-H', `Destination: ${target}`, '-H', `OC-Total-Length: ${sizeBytes}`];
    const config = path.join(run.tmp, `chunks-${setup}-${round}.curl`);
    writeFileSync(config, chunks.map((chunk, i) => `upload-file = "${chunk}"\nurl = "${folder}/${i + 1}"\noutput = "/dev/null"\n`).join(''));
    let ms = await curl(['-X', 'MKCOL', ...headers, '-o', '/dev/null', `${folder}/`]);
    ms += await curl(['--parallel', '--parallel-max', String(PARALLEL), ...headers, '-K', config]);
    ms += await curl(['-X', 'MOVE', ...headers, '-o', '/dev/null', `${folder}/.file`]);
    return ms;
  }
  async function tus(round: number): Promise<number> {
    const name = Buffer.from(`tus-${round}.bin`).toString('base64');
    const created = await runClient('curl', ['--silent', '--show-error', '--fail', '--user', `${BENCH_USER.email}:${BENCH_USER.password}`, '-X', 'POST', '-H', 'Tus-Resumable: 1.0.0', '-H', `Upload-Length: ${sizeBytes}`, '-H', `Upload-Metadata: filename ${name}`, '-D', '-', '-o', '/dev/null', `${dav}/home/`], { PATH: process.env.PATH }, CURL_TIMEOUT_MS);
    const location = /^location:\s*(\S+)/im.exec(created.stdout)?.[1];
    if (created.code !== 0 || location === undefined) throw new Error(`tus POST failed (${created.code}): ${created.stderr}${created.stdout}`);
    const url = new URL(location, dav).href;
    const config = path.join(run.tmp, `tus-${setup}-${round}.curl`);
    patchConfig(config, url, tusParts, { user: `${BENCH_USER.email}:${BENCH_USER.password}` });
    if (!process.env.BENCH_TUS_TRACE) return created.wallMs + (await curl(['-K', config]));
    const traced = await runClient('curl', ['-K', config], { PATH: process.env.PATH }, CURL_TIMEOUT_MS);
    const times = traced.stdout.trim().split('\n').map(Number);
    console.error(`tus PATCH seconds: first ${times.slice(0, 3).join(' ')}, median ${median(times)}, last ${times.slice(-3).join(' ')}, sum ${times.reduce((a, b) => a + b, 0).toFixed(2)}`);
    return created.wallMs + traced.wallMs;
  }
  const runners: Record<Way, (round: number) => Promise<number>> = { put, chunked, tus };

  for (let round = 1; round <= rounds; round++) {
    result.load.push(loadavg()[0] as number);
    for (const way of rotate(WAYS, round)) {
      rss.restart();
      const ms = await runners[way](round);
      result.ways[way].seconds.push(ms / 1000);
      result.ways[way].peakMiB.push(rss.peakMiB());
    }
  }
  rss.stop();
  // Every file must be there at its size (a PROPFIND through the bridge).
  for (const name of [`put-${rounds}.bin`, `chunked-${rounds}.bin`, `tus-${rounds}.bin`]) {
    const answer = await runClient('curl', ['--silent', '--fail', '--user', `${BENCH_USER.email}:${BENCH_USER.password}`, '-X', 'PROPFIND', '-H', 'Depth: 0', `${dav}/home/${name}`], { PATH: process.env.PATH }, 60_000);
    if (!answer.stdout.includes(`<D:getcontentlength>${sizeBytes}</D:getcontentlength>`) && !answer.stdout.includes(`getcontentlength>${sizeBytes}<`)) throw new Error(`${setup}: ${name} is not ${sizeBytes} bytes: ${answer.stdout.slice(0, 400)}`);
  }
  await stopChild(driveway.child);
  return result;
}

/**
 * Writes the curl config of tus's PATCHes (one after the other on one connection) to `url`; the
 * floor, which keeps no session, is told the total (`floorLength`) on each.
 */
function patchConfig(file: string, url: string, parts: readonly string[], options: { user?: string; floorLength?: number }): void {
  const { user, floorLength } = options;
  const patches = parts.map((part, i) =>
    // `next` starts an operation afresh: the credentials and --fail go into each.
    [
      `url = "${url}"`,
      ...(user ? [`user = "${user}"`] : []),
      'fail-with-body',
      'request = "PATCH"',
      `upload-file = "${part}"`,
      'header = "Tus-Resumable: 1.0.0"',
      'header = "Content-Type: application/offset+octet-stream"',
      `header = "Upload-Offset: ${i * TUS_PART_BYTES}"`,
      ...(floorLength === undefined ? [] : [`header = "Upload-Length: ${floorLength}"`]),
      'output = "/dev/null"',
      ...(process.env.BENCH_TUS_TRACE ? ['write-out = "%{time_total}\\n"'] : []),
    ].join('\n'),
  );
  writeFileSync(file, `${patches.join('\nnext\n')}\n`);
}

/** The node floor: put and tus's PATCHes against bench/raw-node.ts, by the same curl commands. */
async function benchFloor(run: BenchRun, inputs: Inputs, rounds: number): Promise<Result> {
  const { file, sizeBytes, tusParts } = inputs;
  const root = path.join(run.tmp, 'floor');
  mkdirSync(root);
  const port = await freePort();
  const floor = await startChild({
    name: 'node floor',
    command: process.execPath,
    args: [transpileFloor(run.tmp), '--root', root, '--port', String(port)],
    env: { PATH: process.env.PATH },
    logFile: path.join(run.tmp, 'floor.log'),
    readyLine: /raw-node: http/,
  });
  run.onCleanup(() => stopChild(floor.child));
  const base = `http://127.0.0.1:${port}`;
  const rss = new RssWatcher(floor.pid);
  const result: Result = { setup: 'node floor', ways: { put: { seconds: [], peakMiB: [] }, chunked: { seconds: [], peakMiB: [] }, tus: { seconds: [], peakMiB: [] } }, load: [] };
  const plainCurl = async (args: string[]): Promise<number> => {
    const answer = await runClient('curl', ['--silent', '--show-error', '--fail-with-body', ...args], { PATH: process.env.PATH }, CURL_TIMEOUT_MS);
    if (answer.code !== 0) throw new Error(`curl ${args.slice(0, 4).join(' ')} failed (${answer.code}): ${answer.stderr}${answer.stdout}`);
    return answer.wallMs;
  };
  const runners: Partial<Record<Way, (round: number) => Promise<number>>> = {
    put: (round) => plainCurl(['-T', file, '-o', '/dev/null', `${base}/put-${round}.bin`]),
    tus: (round) => {
      const config = path.join(run.tmp, `tus-floor-${round}.curl`);
      patchConfig(config, `${base}/tus-${round}.bin`, tusParts, { floorLength: sizeBytes });
      return plainCurl(['-K', config]);
    },
  };
  for (let round = 1; round <= rounds; round++) {
    result.load.push(loadavg()[0] as number);
    for (const way of rotate(['put', 'tus'] as const, round)) {
      rss.restart();
      const ms = await (runners[way] as (round: number) => Promise<number>)(round);
      result.ways[way].seconds.push(ms / 1000);
      result.ways[way].peakMiB.push(rss.peakMiB());
    }
  }
  rss.stop();
  await stopChild(floor.child);
  return result;
}

async function main(): Promise<void> {
  const rounds = positiveIntEnv('BENCH_ROUNDS', 3);
  const sizeBytes = positiveIntEnv('BENCH_CHUNKED_MIB', 1024) * MiB;
  const hasPostgres = requirePostgres({ warn: (m) => console.error(`${LABEL}: ${m} (PostgreSQL + S3 left out)`) }).binDir !== undefined;
  buildDriveway(LABEL);
  await withBenchRun(LABEL, RUN_TIMEOUT_MS, async (run) => {
    run.onCleanup(() => agent.close());
    run.onCleanup(killClients);
    const file = path.join(run.tmp, 'file.bin');
    writeRandomFile(file, sizeBytes);
    const inputs: Inputs = {
      file,
      sizeBytes,
      chunks: chunkFiles(file, sizeBytes, path.join(run.tmp, 'chunks'), CHUNK_BYTES),
      tusParts: chunkFiles(file, sizeBytes, path.join(run.tmp, 'tus-parts'), TUS_PART_BYTES),
    };
    const only = process.env.BENCH_SETUPS?.split(',');
    const results: Result[] = [];
    if (!only || only.includes('floor')) results.push(await benchFloor(run, inputs, rounds));
    if (!only || only.includes('embedded')) results.push(await benchSetup(run, 'embedded', {}, inputs, rounds));
    if (hasPostgres && (!only || only.includes('pg+s3'))) {
      const pg = await startPostgres({ durable: true });
      run.onCleanup(() => pg.stop());
      const s3 = await startS3Server('driveway-bench');
      run.onCleanup(() => s3.close());
      results.push(
        await benchSetup(
          run,
          'pg+s3',
          {
            DRIVEWAY_DATABASE_URL: pg.url,
            DRIVEWAY_BLOB_BACKEND: 's3',
            DRIVEWAY_S3_BUCKET: s3.bucket,
            DRIVEWAY_S3_ENDPOINT: s3.endpoint,
            DRIVEWAY_S3_REGION: 'us-east-1',
            DRIVEWAY_S3_FORCE_PATH_STYLE: 'true',
            AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
            AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
          },
          inputs,
          rounds,
        ),
      );
    }
    const mb = sizeBytes / 1e6;
    console.log(`\n${LABEL}: ${sizeBytes / MiB} MiB, ${rounds} rounds; Nextcloud chunks of ${CHUNK_BYTES / MiB} MiB x${PARALLEL}, tus parts of ${TUS_PART_BYTES / MiB} MiB (MB/s; time against put's median; peak RSS MiB)`);
    printTable(
      ['setup', 'way', 'MB/s', 'time / put', 'peak RSS', 'load (1 min)'],
      results.flatMap((r) =>
        WAYS.filter((way) => r.ways[way].seconds.length > 0).map((way) => [
          r.setup,
          way,
          spread(r.ways[way].seconds.map((sec) => mb / sec)),
          `${fmt(median(r.ways[way].seconds) / median(r.ways.put.seconds), 2)}x`,
          fmt(Math.max(...r.ways[way].peakMiB), 0),
          spread(r.load, 2),
        ]),
      ),
    );
  });
}

main().catch((err: unknown) => {
  console.error(`${LABEL}: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
