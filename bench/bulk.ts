/**
 * The bulk upload bench of issue 32: `npm run bench:bulk` (`npx tsx bench/bulk.ts`). Prints
 * figures; not a timed test.
 *
 * Two `npm start` servers as shipped (embedded: SQLite + blobs, each in its own temp data dir):
 * one advertising `dav.bulkupload` (the default), one started with DRIVEWAY_BENCH_NO_BULK_UPLOAD=1
 * (the capability left out, for this bench only; the door stays open). One local tree of
 * BENCH_BULK_FILES (2,000) × 4 KiB files in 20 folders, uploaded by:
 *   1. Debian's nextcloudcmd, first sync, to the server with bulk upload (POSTs to
 *      /remote.php/dav/bulk, at most 100 files each);
 *   2. the same to the server without it (one PUT per file);
 *   3. `rclone copy --transfers 4` (webdav, vendor nextcloud) of the same tree to the first
 *      server (the same server as 1., another folder).
 * Targets (issue 32): 1. at least 3× faster than 2., and faster than 3. Then, unless
 * BENCH_BULK_CURL=0, the existing drive bench's workload 7 (bench/drive.ts, BENCH_ONLY=7):
 * 2,000 × 4 KiB by curl, one file per request, against rclone serve webdav in the same run
 * (target: within 1.3×), its table printed as it comes.
 * The request counts come from a counting proxy in front of each server. Exit 1 when a target is
 * missed or a sync fails or leaves a file short.
 *
 * Only loopback traffic, bounded client runs, only our own children stopped (by PID); the temp
 * folder is removed whatever happens.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import { syncInvocation } from '../test/clients/sync-args.js';
import { startCountingProxy, type ProxiedRequest } from '../test/helpers/counting-proxy.js';
import { BENCH_USER, buildDriveway, createBenchUser, fmt, freePort, killClients, positiveIntEnv, printTable, repoRoot, runClient, startDriveway, stopChild, withBenchRun, type BenchRun } from './lib.js';

const LABEL = 'bench/bulk';
const RUN_TIMEOUT_MS = 40 * 60_000;
const CLIENT_TIMEOUT_MS = 15 * 60_000;
const ADMIN_PASSWORD = 'Bench-Admin-Passw0rd1';
const NEXTCLOUDCMD = '/usr/bin/nextcloudcmd';
const FOLDERS = 20;
const FILE_BYTES = 4096;

const files = positiveIntEnv('BENCH_BULK_FILES', 2000);

interface Served {
  label: string;
  davUrl: string;
  proxyUrl: string;
  requests: () => ProxiedRequest[];
  reset: () => void;
}

async function serve(run: BenchRun, agent: Agent, name: string, env: Record<string, string>): Promise<Served> {
  const [storePort, davPort] = [await freePort(), await freePort()];
  const driveway = await startDriveway({
    part: 'all',
    dataDir: path.join(run.tmp, `data-${name}`),
    logFile: path.join(run.tmp, `driveway-${name}.log`),
    // Debian's nextcloudcmd 3.7 is one of the clients bulk upload is not offered to by default (an empty file fails its bulk request): this tree holds none.
    env: { DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(davPort), DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD, DRIVEWAY_BULK_UPLOAD_CLIENTS: 'all', ...env },
  });
  run.onCleanup(() => stopChild(driveway.child));
  await createBenchUser(agent, `http://127.0.0.1:${storePort}`, ADMIN_PASSWORD);
  const proxy = await startCountingProxy(driveway.baseUrl);
  run.onCleanup(() => proxy.close());
  return { label: name, davUrl: driveway.baseUrl, proxyUrl: proxy.url, requests: () => [...proxy.requests], reset: () => proxy.reset() };
}

const count = (requests: readonly ProxiedRequest[], method: string, pathTest: (p: string) => boolean = () => true): number => requests.filter((r) => r.method === method && pathTest(r.path)).length;

/** How many files below `folder` the server lists (PROPFIND Depth infinity is off: walk by Depth 1). */
async function countFiles(davUrl: string, folder: string): Promise<number> {
  const auth = `Basic ${Buffer.from(`${BENCH_USER.email}:${BENCH_USER.password}`).toString('base64')}`;
  let total = 0;
  const walk = async (href: string): Promise<void> => {
    const answer = await fetch(`${davUrl}${href}`, { method: 'PROPFIND', headers: { authorization: auth, depth: '1' } });
    const xml = await answer.text();
    const responses = [...xml.matchAll(/<D:response>([\s\S]*?)<\/D:response>/gi)].slice(1);
    for (const [, body] of responses) {
      const child = /<D:href>([^<]+)<\/D:href>/i.exec(body ?? '')?.[1] ?? '';
      if (/<D:collection\s*\/>/i.test(body ?? '')) await walk(child);
      else if (/\/file-\d+\.bin$/.test(child)) total += 1;
    }
  };
  await walk(folder.endsWith('/') ? folder : `${folder}/`);
  return total;
}

/** `npx tsx bench/drive.ts` with BENCH_ONLY=7: its output passed through; resolves with its exit code. */
function driveBenchSmallFiles(): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'node_modules/tsx/dist/cli.mjs'), path.join(repoRoot, 'bench/drive.ts')], {
      cwd: repoRoot,
      env: { ...process.env, BENCH_ONLY: '7', BENCH_SMALL_FILES: String(files) },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.on('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<void> {
  buildDriveway(LABEL);
  await withBenchRun(LABEL, RUN_TIMEOUT_MS, async (run) => {
    const agent = new Agent();
    run.onCleanup(() => agent.close());
    run.onCleanup(killClients);
    const withBulk = await serve(run, agent, 'bulk', {});
    const withoutBulk = await serve(run, agent, 'no-bulk', { DRIVEWAY_BENCH_NO_BULK_UPLOAD: '1' });

    const local = path.join(run.tmp, 'local');
    for (let i = 0; i < files; i += 1) {
      const folder = path.join(local, `f${String(i % FOLDERS).padStart(2, '0')}`);
      mkdirSync(folder, { recursive: true });
      const content = Buffer.alloc(FILE_BYTES, `file ${i} `);
      writeFileSync(path.join(folder, `file-${i}.bin`), content);
    }
    console.log(`${LABEL}: ${files} × ${FILE_BYTES / 1024} KiB in ${FOLDERS} folders`);

    const firstSync = async (served: Served, remote: string) => {
      await fetch(`${served.davUrl}${remote}`, { method: 'MKCOL', headers: { authorization: `Basic ${Buffer.from(`${BENCH_USER.email}:${BENCH_USER.password}`).toString('base64')}` } });
      const { args, env } = syncInvocation('nextcloudcmd', { serverUrl: served.proxyUrl, login: BENCH_USER.email, password: BENCH_USER.password }, remote, local, path.join(run.tmp, `client-home-${served.label}`), { debug: false });
      served.reset();
      const result = await runClient(NEXTCLOUDCMD, args, env, CLIENT_TIMEOUT_MS);
      if (result.code !== 0) throw new Error(`nextcloudcmd to ${served.label} exited ${result.code}\n${result.stderr.slice(-3000)}`);
      return { seconds: result.wallMs / 1000, requests: served.requests() };
    };

    const bulk = await firstSync(withBulk, '/home/nextcloudcmd');
    const plain = await firstSync(withoutBulk, '/home/nextcloudcmd');

    // rclone copy of the same tree to the server with bulk upload (rclone has no bulk upload: one PUT per file);
    // the clients' journals (.sync_*.db) left in the tree are not part of it.
    const obscured = await runClient('rclone', ['obscure', BENCH_USER.password], { PATH: process.env.PATH }, 10_000);
    const rcloneEnv = {
      PATH: process.env.PATH,
      HOME: path.join(run.tmp, 'rclone-home'),
      RCLONE_CONFIG: path.join(run.tmp, 'rclone.conf'),
      RCLONE_CONFIG_DW_TYPE: 'webdav',
      RCLONE_CONFIG_DW_URL: `${withBulk.proxyUrl}/remote.php/dav/files/${BENCH_USER.email}`,
      RCLONE_CONFIG_DW_VENDOR: 'nextcloud',
      RCLONE_CONFIG_DW_USER: BENCH_USER.email,
      RCLONE_CONFIG_DW_PASS: obscured.stdout.trim(),
    };
    writeFileSync(rcloneEnv.RCLONE_CONFIG, '');
    withBulk.reset();
    const rclone = await runClient('rclone', ['copy', local, 'DW:home/rclone', '--transfers', '4', '--exclude', '.sync_*', '--log-level', 'ERROR'], rcloneEnv, CLIENT_TIMEOUT_MS);
    if (rclone.code !== 0) throw new Error(`rclone copy exited ${rclone.code}: ${rclone.stderr.slice(-2000)}`);
    const rcloneRequests = withBulk.requests();
    const rcloneSeconds = rclone.wallMs / 1000;

    const counted = {
      bulk: await countFiles(withBulk.davUrl, '/home/nextcloudcmd'),
      plain: await countFiles(withoutBulk.davUrl, '/home/nextcloudcmd'),
      rclone: await countFiles(withBulk.davUrl, '/home/rclone'),
    };
    const isBulk = (p: string): boolean => p.startsWith('/remote.php/dav/bulk');
    printTable(
      ['first sync of the tree', 'wall s', 'bulk POSTs', 'PUTs', 'requests', 'files there'],
      [
        ['nextcloudcmd, dav.bulkupload advertised', fmt(bulk.seconds, 2), String(count(bulk.requests, 'POST', isBulk)), String(count(bulk.requests, 'PUT')), String(bulk.requests.length), String(counted.bulk)],
        ['nextcloudcmd, without it', fmt(plain.seconds, 2), String(count(plain.requests, 'POST', isBulk)), String(count(plain.requests, 'PUT')), String(plain.requests.length), String(counted.plain)],
        ['rclone copy --transfers 4 (nextcloud vendor)', fmt(rcloneSeconds, 2), '0', String(count(rcloneRequests, 'PUT')), String(rcloneRequests.length), String(counted.rclone)],
      ],
    );
    const speedup = plain.seconds / bulk.seconds;
    console.log(`${LABEL}: bulk is ${fmt(speedup, 2)}× faster than one PUT per file (target >= 3×), ${fmt(rcloneSeconds / bulk.seconds, 2)}× faster than rclone copy (target > 1×)`);
    const misses: string[] = [];
    if (Object.values(counted).some((n) => n !== files)) misses.push(`files on the server: ${JSON.stringify(counted)} (expected ${files} each)`);
    if (speedup < 3) misses.push(`bulk only ${fmt(speedup, 2)}× faster than without`);
    if (bulk.seconds >= rcloneSeconds) misses.push('bulk not faster than rclone copy');

    if (process.env.BENCH_BULK_CURL !== '0') {
      console.log(`\n${LABEL}: ${files} × 4 KiB by curl, one file per request, against rclone serve webdav (bench/drive.ts, workload 7):`);
      const code = await driveBenchSmallFiles();
      if (code !== 0) misses.push(`bench/drive.ts workload 7 exited ${code} (its table says which target)`);
    }
    if (misses.length > 0) {
      console.log(`${LABEL}: MISSED\n  ${misses.join('\n  ')}`);
      process.exitCode = 1;
    } else console.log(`${LABEL}: every target met`);
  });
}

main().catch((err: unknown) => {
  console.error(`${LABEL}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  process.exitCode = 1;
});
