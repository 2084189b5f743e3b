/**
 * What publishing the checksums costs a listing (issue 22's PROPFIND target):
 * `npx tsx bench/propfind-checksums.ts`.
 *
 * driveway as `npm start` runs it, a folder of BENCH_DIR_ENTRIES (10,000) small files seeded
 * through the store's API, and `curl` PROPFIND Depth 1 of that folder with two bodies, the
 * properties rclone's owncloud vendor asks for (with `oc:checksums`) and the same without it,
 * alternated BENCH_ROUNDS (15) times each, in two processes:
 *
 *   listing from the store   DRIVEWAY_CACHE_TTL_MS=0: every PROPFIND fetches the folder from the
 *                            store (what a first listing, or one after a change, costs)
 *   cached listing           the default cache: only the answer is built (warm)
 *
 * It prints curl's time_total (median, min-max), the answer's size, and the ratio with/without.
 * Loopback only; only our own children are stopped, by PID; the temp folder goes whatever happens.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import {
  buildDriveway,
  createBenchUser,
  fmt,
  median,
  positiveIntEnv,
  printTable,
  runBounded,
  runClient,
  spread,
  startDriveway,
  stopChild,
  storeMkdir,
  storeUpload,
  withBenchRun,
} from './lib.js';

const LABEL = 'propfind-checksums';
const FOLDER = 'many';
const RCLONE_PROPS = ['<d:displayname/>', '<d:getlastmodified/>', '<d:getcontentlength/>', '<d:resourcetype/>', '<d:getcontenttype/>'];

function propfindBody(withChecksums: boolean): string {
  const props = [...RCLONE_PROPS, ...(withChecksums ? ['<oc:checksums/>'] : [])].join('');
  return `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop>${props}</d:prop></d:propfind>`;
}

await withBenchRun(LABEL, 30 * 60_000, async (run) => {
  const entries = positiveIntEnv('BENCH_DIR_ENTRIES', 10_000);
  const rounds = positiveIntEnv('BENCH_ROUNDS', 15);
  buildDriveway(LABEL);
  const dataDir = path.join(run.tmp, 'data');
  const rows: string[][] = [];
  for (const [mode, ttl] of [['listing from the store', '0'], ['cached listing', '600000']] as const) {
    const running = await startDriveway({ part: 'all', dataDir, logFile: path.join(run.tmp, `driveway-${ttl}.log`), env: { DRIVEWAY_CACHE_TTL_MS: ttl } });
    run.onCleanup(() => stopChild(running.child));
    const password = readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
    const storeUrl = readFileSync(running.logFile, 'utf8').match(/driveway store:\s+(http:\/\/\S+)/)?.[1]?.replace(/\/$/, '');
    if (!storeUrl) throw new Error('the store URL is not in the log');
    if (ttl === '0') {
      const agent = new Agent({ connections: 8 });
      const session = await createBenchUser(agent, storeUrl, password);
      const folder = await storeMkdir(agent, storeUrl, session.token, 'home', FOLDER);
      await runBounded(entries, 8, (i) => storeUpload(agent, storeUrl, session.token, folder, `f-${String(i).padStart(5, '0')}.txt`, Buffer.from(`tiny file ${i}\n`)));
      await agent.close();
      console.log(`${LABEL}: seeded ${entries} files`);
    }
    const samples: Record<'with' | 'without', number[]> = { with: [], without: [] };
    const bytes: Record<'with' | 'without', number> = { with: 0, without: 0 };
    for (let round = 0; round < rounds + 1; round += 1) {
      for (const which of round % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
        const result = await runClient(
          'curl',
          ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{time_total} %{size_download}', '-u', 'bench@example.test:Bench-Passw0rd1', '-X', 'PROPFIND', '-H', 'Depth: 1', '-H', 'Content-Type: application/xml', '--data-binary', propfindBody(which === 'with'), `${running.baseUrl}/home/${FOLDER}/`],
          process.env,
          60_000,
        );
        const [status, seconds, size] = result.stdout.trim().split(' ');
        if (status !== '207') throw new Error(`PROPFIND answered ${status}: ${result.stderr}`);
        // Round 0 warms the session (the Basic login's scrypt) and the code paths.
        if (round === 0) continue;
        samples[which].push(Number(seconds) * 1000);
        bytes[which] = Number(size);
      }
    }
    await stopChild(running.child);
    for (const which of ['with', 'without'] as const) {
      rows.push([mode, which === 'with' ? 'with oc:checksums' : 'without', fmt(median(samples[which]), 1), spread(samples[which], 1), fmt(bytes[which] / 1e6, 2)]);
    }
    rows.push([mode, 'ratio', `${fmt(median(samples.with) / median(samples.without), 2)}×`, '', '']);
  }
  printTable(['mode', 'PROPFIND', 'ms (median)', 'min-max', 'MB'], rows);
});
