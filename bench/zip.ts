/**
 * A folder's zip against plain GETs of the same bytes (issue 31: "a folder link's zip of 1 GiB
 * streams at >= 50 % of a plain GET's rate with the server's memory flat"). Builds driveway,
 * starts the store (`--only store`, SQLite, local blobs) as `npm run store` does, uploads
 * BENCH_ZIP_FILES random files making BENCH_ZIP_MIB MiB into one folder, then per round, with
 * curl to /dev/null on loopback:
 *
 *   GET     each file through /resources/auth/download, one after the other
 *   zip     the folder through /resources/auth/zip (files stored, CRC-32 computed, ZIP64 past 4 GiB)
 *   link    the folder through a public link, /public/{token}?download=zip
 *
 * and the store's peak RSS during each (VmHWM). Prints the medians and the zip's rate against
 * the GETs' (target >= 50 %). `npm run bench:zip`; a figure, not a timed test.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Agent } from 'undici';
import {
  buildDriveway,
  createBenchUser,
  json,
  median,
  MiB,
  positiveIntEnv,
  printTable,
  RssWatcher,
  startDriveway,
  stopChild,
  storeDirlist,
  storeDownloadUrl,
  storeMkdir,
  storeUpload,
  stringField,
  withBenchRun,
  writeRandomFile,
} from './lib.js';

const TOTAL_MIB = positiveIntEnv('BENCH_ZIP_MIB', 1024);
const FILES = positiveIntEnv('BENCH_ZIP_FILES', 8);
const ROUNDS = positiveIntEnv('BENCH_ZIP_ROUNDS', 3);
const TARGET_RATIO = 0.5;

/** curl's seconds and bytes for one GET of `url` into /dev/null. */
function curl(url: string): { seconds: number; bytes: number } {
  const run = spawnSync('curl', ['-sS', '--fail', '-o', '/dev/null', '-w', '%{time_total} %{size_download}', url], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`curl ${url.replace(/\/auth\/\w+\/[^/]+/, '/auth/…')} failed: ${run.stderr}`);
  const [seconds, bytes] = run.stdout.trim().split(' ').map(Number);
  return { seconds: seconds as number, bytes: bytes as number };
}

await withBenchRun('bench/zip', 30 * 60_000, async (run) => {
  buildDriveway('bench/zip');
  const dispatcher = new Agent({ headersTimeout: 10 * 60_000, bodyTimeout: 10 * 60_000 });
  run.onCleanup(() => dispatcher.close());
  const adminPassword = `Bench-${randomBytes(9).toString('base64url')}1a`;
  const store = await startDriveway({ part: 'store', dataDir: path.join(run.tmp, 'data'), logFile: path.join(run.tmp, 'store.log'), env: { DRIVEWAY_ADMIN_PASSWORD: adminPassword } });
  run.onCleanup(() => stopChild(store.child));
  const base = store.baseUrl;
  const session = await createBenchUser(dispatcher, base, adminPassword);
  const folder = await storeMkdir(dispatcher, base, session.token, 'home', 'Zip me');
  const fileBytes = Math.floor((TOTAL_MIB * MiB) / FILES);
  console.log(`bench/zip: ${FILES} random files of ${(fileBytes / MiB).toFixed(0)} MiB into one folder`);
  for (let i = 0; i < FILES; i += 1) {
    const source = path.join(run.tmp, `part-${i}.bin`);
    writeRandomFile(source, fileBytes);
    await storeUpload(dispatcher, base, session.token, folder, `part-${i}.bin`, { file: source, sizeBytes: fileBytes });
  }
  const files = await storeDirlist(dispatcher, base, session.token, folder);
  const link = await json(dispatcher, `${base}/api/nodes/${folder}/shares`, { method: 'POST', token: session.token, body: { type: 'public' } });
  const linkUrl = stringField(link.data as Record<string, unknown>, 'url');
  const zipUrl = `${base}/resources/auth/zip/${encodeURIComponent(session.fileAccessKey)}/bench.zip?node=${folder}`;

  const rss = new RssWatcher(store.pid);
  run.onCleanup(() => void rss.stop());
  const ways = { GET: { rates: [] as number[], peaks: [] as number[] }, zip: { rates: [] as number[], peaks: [] as number[] }, link: { rates: [] as number[], peaks: [] as number[] } };
  const measure = (way: keyof typeof ways, work: () => { seconds: number; bytes: number }): void => {
    rss.restart();
    const { seconds, bytes } = work();
    ways[way].rates.push(bytes / MiB / seconds);
    ways[way].peaks.push(rss.peakMiB());
  };
  const total = fileBytes * FILES;
  for (let round = 1; round <= ROUNDS; round += 1) {
    measure('GET', () => {
      let seconds = 0;
      let bytes = 0;
      for (const file of files) {
        const got = curl(storeDownloadUrl(base, session, file.uuid, file.name));
        seconds += got.seconds;
        bytes += got.bytes;
      }
      return { seconds, bytes };
    });
    measure('zip', () => curl(zipUrl));
    measure('link', () => curl(`${linkUrl}?download=zip`));
    console.log(`bench/zip: round ${round}: ${(['GET', 'zip', 'link'] as const).map((w) => `${w} ${ways[w].rates.at(-1)?.toFixed(0)} MiB/s, peak RSS ${ways[w].peaks.at(-1)?.toFixed(0)} MiB`).join('; ')}`);
  }
  rss.stop();
  const get = median(ways.GET.rates);
  console.log(`\nbench/zip: ${(total / MiB).toFixed(0)} MiB in ${FILES} files, ${ROUNDS} rounds, loopback, ${os.cpus().length} CPUs, node ${process.version} (medians)`);
  printTable(
    ['way', 'MiB/s', 'of GET', 'peak RSS MiB'],
    (['GET', 'zip', 'link'] as const).map((w) => [w, median(ways[w].rates).toFixed(0), `${((median(ways[w].rates) / get) * 100).toFixed(0)} %`, median(ways[w].peaks).toFixed(0)]),
  );
  const ratio = median(ways.zip.rates) / get;
  console.log(`bench/zip: zip at ${(ratio * 100).toFixed(0)} % of GET (target >= ${TARGET_RATIO * 100} %): ${ratio >= TARGET_RATIO ? 'met' : 'NOT met'}`);
});
