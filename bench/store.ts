/**
 * Store throughput and memory benchmark: `npx tsx bench/store.ts` (or `npm run bench:store`).
 *
 * Builds driveway, starts `node dist/main.js --only store` as a child process on a free
 * loopback port with a temp data dir, writes a random file (1 GiB; BENCH_FILE_MB overrides the
 * size in MiB), and measures in one run: `cat file > /dev/null` as the disk baseline, a
 * two-step upload (GET /api/nodes/home/upload, then POST /upload/<token> as multipart streamed
 * from disk), a download through /resources/auth/download/... hashed on the fly, and the
 * store's peak resident memory. Fails (exit 1) when the downloaded bytes differ from the source
 * or the peak RSS misses its target.
 *
 * Speaks only the endpoints of docs/api.md, so it measures the store, not the store client. Never buffers
 * the file; everything stays on loopback; it stops its own child (by PID) and removes its temp
 * folder whatever happens.
 */
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { Agent, request } from 'undici';
import {
  buildDriveway,
  catToDevNull,
  fileSizeMiB,
  isInterrupted,
  json,
  MiB,
  row,
  RssWatcher,
  startDriveway,
  stopChild,
  storeDownloadUrl,
  storeUpload,
  stringField,
  tailOf,
  timed,
  withBenchRun,
  writeRandomFile,
  type RunningChild,
} from './lib.js';

const RSS_TARGET_MIB = 150;
/** The whole run, including writing the file: generous for 1 GiB on a slow disk, but bounded. */
const RUN_TIMEOUT_MS = 30 * 60_000;

async function main(): Promise<void> {
  const sizeMiB = fileSizeMiB();
  const sizeBytes = sizeMiB * MiB;
  buildDriveway('bench/store');

  await withBenchRun('bench/store', RUN_TIMEOUT_MS, async (run) => {
    const dispatcher = new Agent({ headersTimeout: 10 * 60_000, bodyTimeout: 10 * 60_000 });
    run.onCleanup(() => dispatcher.close());

    const name = `bench-${sizeMiB}MiB.bin`;
    const source = path.join(run.tmp, name);
    console.log(`bench/store: writing ${sizeMiB} MiB of random data to ${source}`);
    const sourceSha = writeRandomFile(source, sizeBytes);

    const adminPassword = `Bench-${randomBytes(9).toString('base64url')}1a`;
    const store: RunningChild & { baseUrl: string } = await startDriveway({
      part: 'store',
      dataDir: path.join(run.tmp, 'data'),
      logFile: path.join(run.tmp, 'store.log'),
      env: { DRIVEWAY_ADMIN_PASSWORD: adminPassword },
    });
    run.onCleanup(() => stopChild(store.child));
    const rss = new RssWatcher(store.pid);
    run.onCleanup(() => void rss.stop());
    const startRss = { currentMiB: rss.currentKiB / 1024, peakMiB: rss.peakKiB / 1024 };
    const base = store.baseUrl;
    console.log(`bench/store: store pid ${store.pid} listening on ${base}`);

    const session = await json(dispatcher, `${base}/auth`, { method: 'POST', body: { username: 'admin', password: adminPassword } });
    const token = stringField(session, 'token');
    const fileAccessKey = stringField(session, 'fileaccesskey');

    const cat = await timed('cat file > /dev/null', sizeBytes, () => catToDevNull(source));
    const upload = await timed('upload (2 steps)', sizeBytes, () => storeUpload(dispatcher, base, token, 'home', name, { file: source, sizeBytes }));

    const listing = await json(dispatcher, `${base}/api/nodes/home/dirlist`, { token });
    const entries = Array.isArray(listing.data) ? (listing.data as Array<Record<string, unknown>>) : [];
    const uploaded = entries.find((entry) => entry.name === name);
    if (!uploaded || typeof uploaded.uuid !== 'string') throw new Error(`uploaded file not in home: ${JSON.stringify(listing)}`);
    if (uploaded.size !== sizeBytes) throw new Error(`home lists ${name} with size ${String(uploaded.size)}, expected ${sizeBytes}`);

    let downloadSha = '';
    let downloadedBytes = 0;
    const download = await timed('download', sizeBytes, async () => {
      const url = storeDownloadUrl(base, { token, fileAccessKey }, uploaded.uuid as string, name);
      const response = await request(url, { dispatcher });
      if (response.statusCode !== 200) throw new Error(`download answered ${response.statusCode}: ${await response.body.text()}`);
      const hash = createHash('sha256');
      for await (const chunk of response.body) {
        hash.update(chunk as Buffer);
        downloadedBytes += (chunk as Buffer).length;
      }
      downloadSha = hash.digest('hex');
    });

    const peakRssMiB = rss.stop();
    const widths = [22, 10, 9, 10, 12];
    console.log('');
    console.log(`driveway store benchmark: ${sizeMiB} MiB random file, loopback, ${os.cpus().length} CPUs, node ${process.version}`);
    console.log(row(['operation', 'MiB', 'seconds', 'MiB/s', 'ratio to cat'], widths));
    for (const m of [cat, upload, download]) {
      const rate = m.bytes / MiB / m.seconds;
      const catRate = cat.bytes / MiB / cat.seconds;
      console.log(row([m.label, (m.bytes / MiB).toFixed(0), m.seconds.toFixed(2), rate.toFixed(1), (rate / catRate).toFixed(3)], widths));
    }
    const rssOk = peakRssMiB < RSS_TARGET_MIB;
    const shaOk = downloadSha === sourceSha && downloadedBytes === sizeBytes;
    console.log('');
    console.log(`store RSS after start:  ${startRss.currentMiB.toFixed(1)} MiB (peak while starting ${startRss.peakMiB.toFixed(1)} MiB)`);
    console.log(`store peak RSS:         ${peakRssMiB.toFixed(1)} MiB (target < ${RSS_TARGET_MIB} MiB: ${rssOk ? 'met' : 'MISSED'})`);
    console.log(`download sha256:        ${shaOk ? 'equals the source' : `DIFFERS (${downloadedBytes} bytes, ${downloadSha} vs ${sourceSha})`}`);
    const warnings = tailOf(store.logFile).replace(/^driveway store:.*\n/m, '').trim();
    if (warnings) console.log(`\nstore log (warnings and errors):\n${warnings}`);
    if (!rssOk || !shaOk) process.exitCode = 1;
  });
}

main().catch((err: unknown) => {
  if (isInterrupted()) return;
  console.error(`bench/store failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
