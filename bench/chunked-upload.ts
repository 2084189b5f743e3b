/**
 * Nextcloud chunked upload against one PUT (issue 23's benchmark, its Nextcloud half):
 * `npx tsx bench/chunked-upload.ts`. One driveway process as `npm start` runs it, on the embedded
 * default and, when PostgreSQL is installed, on PostgreSQL + S3 (s3rver); a BENCH_CHUNKED_MIB file
 * (1024) of random bytes, uploaded in each round:
 *
 *   put      `curl -T` of the whole file to /home/ (one request)
 *   chunked  `curl` MKCOL of a v2 upload folder (Destination, OC-Total-Length), the file's 10 MiB
 *            chunks by `curl --parallel --parallel-max 4` (one config file listing them), then
 *            `curl` MOVE of `.file` onto the target: the wall time of the three
 *
 * Every figure comes from curl (the bench's own Node code splits the file and checks sizes,
 * outside the timings). Reported: MB/s (10^6 bytes) as the median of BENCH_ROUNDS (3) and their
 * spread, chunked against put, and the driveway process's peak RSS during each (VmHWM, reset
 * before each when the kernel allows). The issue's target: chunked within 1.3x of put's time.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import { requirePostgres, startPostgres } from '../test/helpers/postgres.js';
import { S3RVER_CREDENTIALS, startS3Server } from '../test/helpers/s3-server.js';
import {
  BENCH_USER,
  buildDriveway,
  createBenchUser,
  fmt,
  killClients,
  median,
  MiB,
  positiveIntEnv,
  printTable,
  readSlice,
  RssWatcher,
  runClient,
  spread,
  startDriveway,
  stopChild,
  writeRandomFile,
  withBenchRun,
  type BenchRun,
} from './lib.js';

const LABEL = 'bench:chunked-upload';
const CHUNK_BYTES = 10 * MiB;
const PARALLEL = 4;
const RUN_TIMEOUT_MS = 60 * 60_000;
const CURL_TIMEOUT_MS = 20 * 60_000;

interface Figures {
  seconds: number[];
  peakMiB: number[];
}

interface Result {
  setup: string;
  put: Figures;
  chunked: Figures;
}

const agent = new Agent({ connections: 4 });

async function curl(args: string[]): Promise<number> {
  const result = await runClient('curl', ['--silent', '--show-error', '--fail-with-body', '--user', `${BENCH_USER.email}:${BENCH_USER.password}`, ...args], { PATH: process.env.PATH }, CURL_TIMEOUT_MS);
  if (result.code !== 0) throw new Error(`curl ${args.slice(0, 4).join(' ')} failed (${result.code}): ${result.stderr}${result.stdout}`);
  return result.wallMs;
}

/** The file's chunks as files of their own (outside every timing), and curl's config to send them. */
function chunkFiles(file: string, sizeBytes: number, dir: string): string[] {
  mkdirSync(dir, { recursive: true });
  const files: string[] = [];
  for (let start = 0, n = 1; start < sizeBytes; start += CHUNK_BYTES, n += 1) {
    const chunk = path.join(dir, String(n));
    writeFileSync(chunk, readSlice(file, start, Math.min(CHUNK_BYTES, sizeBytes - start)));
    files.push(chunk);
  }
  return files;
}

async function benchSetup(run: BenchRun, setup: string, env: Record<string, string>, file: string, sizeBytes: number, chunks: string[], rounds: number): Promise<Result> {
  const adminPassword = `Bench-${randomBytes(9).toString('base64url')}1a`;
  const dataDir = path.join(run.tmp, `data-${setup}`);
  const driveway = await startDriveway({ part: 'all', dataDir, logFile: path.join(run.tmp, `${setup}.log`), env: { ...env, DRIVEWAY_ADMIN_PASSWORD: adminPassword } });
  run.onCleanup(() => stopChild(driveway.child));
  const storeUrl = /driveway store:\s+(http:\/\/\S+)/.exec(readFileSync(driveway.logFile, 'utf8'))?.[1] as string;
  await createBenchUser(agent, storeUrl, adminPassword);
  const dav = driveway.baseUrl;
  const owner = encodeURIComponent(BENCH_USER.email);
  const rss = new RssWatcher(driveway.pid);
  const result: Result = { setup, put: { seconds: [], peakMiB: [] }, chunked: { seconds: [], peakMiB: [] } };
  for (let round = 1; round <= rounds; round++) {
    rss.restart();
    const putMs = await curl(['-T', file, '-o', '/dev/null', `${dav}/home/put-${round}.bin`]);
    result.put.seconds.push(putMs / 1000);
    result.put.peakMiB.push(rss.peakMiB());

    rss.restart();
    const target = `${dav}/remote.php/dav/files/${owner}/home/chunked-${round}.bin`;
    const folder = `${dav}/remote.php/dav/uploads/${owner}/bench-${round}`;
    const headers = ['-H', `Destination: ${target}`, '-H', `OC-Total-Length: ${sizeBytes}`];
    const config = path.join(run.tmp, `chunks-${setup}-${round}.curl`);
    writeFileSync(config, chunks.map((chunk, i) => `upload-file = "${chunk}"\nurl = "${folder}/${i + 1}"\noutput = "/dev/null"\n`).join(''));
    let ms = await curl(['-X', 'MKCOL', ...headers, '-o', '/dev/null', `${folder}/`]);
    ms += await curl(['--parallel', '--parallel-max', String(PARALLEL), ...headers, '-K', config]);
    ms += await curl(['-X', 'MOVE', ...headers, '-o', '/dev/null', `${folder}/.file`]);
    result.chunked.seconds.push(ms / 1000);
    result.chunked.peakMiB.push(rss.peakMiB());
  }
  rss.stop();
  // Both files must be there at their size (a PROPFIND through the bridge).
  for (const name of [`put-${rounds}.bin`, `chunked-${rounds}.bin`]) {
    const answer = await runClient('curl', ['--silent', '--fail', '--user', `${BENCH_USER.email}:${BENCH_USER.password}`, '-X', 'PROPFIND', '-H', 'Depth: 0', `${dav}/home/${name}`], { PATH: process.env.PATH }, 60_000);
    if (!answer.stdout.includes(`<D:getcontentlength>${sizeBytes}</D:getcontentlength>`) && !answer.stdout.includes(`getcontentlength>${sizeBytes}<`)) throw new Error(`${setup}: ${name} is not ${sizeBytes} bytes: ${answer.stdout.slice(0, 400)}`);
  }
  await stopChild(driveway.child);
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
    const chunks = chunkFiles(file, sizeBytes, path.join(run.tmp, 'chunks'));
    const results = [await benchSetup(run, 'embedded', {}, file, sizeBytes, chunks, rounds)];
    if (hasPostgres) {
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
          file,
          sizeBytes,
          chunks,
          rounds,
        ),
      );
    }
    const mb = sizeBytes / 1e6;
    console.log(`\n${LABEL}: ${sizeBytes / MiB} MiB, ${rounds} rounds, chunks of ${CHUNK_BYTES / MiB} MiB x${PARALLEL} (MB/s; peak RSS MiB)`);
    printTable(
      ['setup', 'put MB/s', 'chunked MB/s', 'chunked / put time', 'put peak RSS', 'chunked peak RSS'],
      results.map((r) => [
        r.setup,
        spread(r.put.seconds.map((s) => mb / s)),
        spread(r.chunked.seconds.map((s) => mb / s)),
        `${fmt(median(r.chunked.seconds) / median(r.put.seconds), 2)}x`,
        fmt(Math.max(...r.put.peakMiB), 0),
        fmt(Math.max(...r.chunked.peakMiB), 0),
      ]),
    );
  });
}

main().catch((err: unknown) => {
  console.error(`${LABEL}: ${err instanceof Error ? err.stack : String(err)}`);
  process.exit(1);
});
