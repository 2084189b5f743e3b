/**
 * The sync bench of issue 30: `npm run bench:sync` (`npx tsx bench/sync.ts`). Prints figures; not
 * a timed test.
 *
 * `npm start` as shipped (embedded: SQLite + blobs in a temp data dir) and Debian's `nextcloudcmd`
 * run as the client suites run it (test/clients/sync-args.ts), through a counting proxy that
 * records every request (method, path, Depth):
 *   1. a first sync uploads a tree of BENCH_SYNC_FILES (10,000) small files in BENCH_SYNC_FOLDERS
 *      (500) folders, one chain of them 8 folders deep;
 *   2. one sync with nothing changed (the client lists again the folders it wrote into), then
 *      BENCH_ROUNDS (3) more, each timed: PROPFINDs (target: exactly one, of the root, plus the
 *      status and OCS calls) and wall time (target: <= 2 s, the median);
 *   3. a file written on the server (through the bridge directly, not the proxy) 8 folders deep:
 *      the next sync downloads it, and PROPFINDs one folder per level of its path (target: 9,
 *      the root and the 8 folders; never one per folder of the tree).
 * Exit 1 when a target is missed or an answer is wrong (the file not downloaded, a sync failed).
 *
 * Only loopback traffic, bounded client runs, only our own children stopped (by PID); the temp
 * folder is removed whatever happens.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Agent, request } from 'undici';
import { syncInvocation } from '../test/clients/sync-args.js';
import { startCountingProxy, type ProxiedRequest } from '../test/helpers/counting-proxy.js';
import {
  BENCH_USER,
  buildDriveway,
  createBenchUser,
  fmt,
  freePort,
  killClients,
  median,
  positiveIntEnv,
  printTable,
  runClient,
  startDriveway,
  stopChild,
  withBenchRun,
  type ClientResult,
} from './lib.js';

const LABEL = 'bench/sync';
const RUN_TIMEOUT_MS = 30 * 60_000;
const SYNC_TIMEOUT_MS = 15 * 60_000;
const ADMIN_PASSWORD = 'Bench-Admin-Passw0rd1';
const NEXTCLOUDCMD = '/usr/bin/nextcloudcmd';
const DEPTH = 8;
const TARGET_NO_CHANGE_MS = 2_000;

const files = positiveIntEnv('BENCH_SYNC_FILES', 10_000);
const folderCount = positiveIntEnv('BENCH_SYNC_FOLDERS', 500);
const rounds = positiveIntEnv('BENCH_ROUNDS', 3);

/** The folders of the tree: a chain DEPTH deep (`deep/d2/…/d8`), the rest `g<nn>/f<nnn>` under 20 parents. */
function treeFolders(): string[] {
  const chain = Array.from({ length: DEPTH }, (_, i) => ['deep', ...Array.from({ length: i }, (_, j) => `d${j + 2}`)].join('/'));
  const parents = Array.from({ length: 20 }, (_, i) => `g${String(i).padStart(2, '0')}`);
  const leaves = Array.from({ length: Math.max(0, folderCount - chain.length - parents.length) }, (_, i) => `${parents[i % parents.length]}/f${String(i).padStart(3, '0')}`);
  return [...chain, ...parents, ...leaves];
}

interface SyncFigures {
  result: ClientResult;
  requests: ProxiedRequest[];
}

const propfinds = (requests: readonly ProxiedRequest[]): ProxiedRequest[] => requests.filter((r) => r.method === 'PROPFIND');
const others = (requests: readonly ProxiedRequest[]): string[] => [...new Set(requests.filter((r) => r.method !== 'PROPFIND').map((r) => `${r.method} ${r.path.split('?')[0]}`))];

async function main(): Promise<void> {
  buildDriveway(LABEL);
  await withBenchRun(LABEL, RUN_TIMEOUT_MS, async (run) => {
    const agent = new Agent();
    run.onCleanup(() => agent.close());
    run.onCleanup(killClients);
    const [storePort, davPort] = [await freePort(), await freePort()];
    const driveway = await startDriveway({
      part: 'all',
      dataDir: path.join(run.tmp, 'data'),
      logFile: path.join(run.tmp, 'driveway.log'),
      env: { DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(davPort), DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD },
    });
    run.onCleanup(() => stopChild(driveway.child));
    const storeBase = `http://127.0.0.1:${storePort}`;
    await createBenchUser(agent, storeBase, ADMIN_PASSWORD);
    const proxy = await startCountingProxy(driveway.baseUrl);
    run.onCleanup(() => proxy.close());

    const local = path.join(run.tmp, 'local');
    const folders = treeFolders();
    for (const folder of folders) mkdirSync(path.join(local, folder), { recursive: true });
    for (let i = 0; i < files; i += 1) writeFileSync(path.join(local, folders[i % folders.length] as string, `file ${i}.txt`), `file ${i}\n`);
    console.log(`${LABEL}: ${files} files in ${folders.length} folders (one chain ${DEPTH} deep)`);

    let runs = 0;
    const sync = async (): Promise<SyncFigures> => {
      runs += 1;
      const { args, env } = syncInvocation('nextcloudcmd', { serverUrl: proxy.url, login: BENCH_USER.email, password: BENCH_USER.password }, '/home', local, path.join(run.tmp, `client-home-${runs}`), { debug: false });
      proxy.reset();
      const result = await runClient(NEXTCLOUDCMD, args, env, SYNC_TIMEOUT_MS);
      const figures = { result, requests: [...proxy.requests] };
      if (result.code !== 0) {
        throw new Error(`nextcloudcmd run ${runs} exited ${result.code} after ${fmt(result.wallMs / 1000)} s\n${result.stderr.slice(-4000)}\nrequests: ${others(figures.requests).slice(0, 20).join(', ')}`);
      }
      return figures;
    };

    const first = await sync();
    const settle = await sync();
    const noChange: SyncFigures[] = [];
    for (let round = 0; round < rounds; round += 1) noChange.push(await sync());

    const deepFolder = folders[DEPTH - 1] as string;
    const put = await request(`${driveway.baseUrl}/home/${deepFolder}/changed on the server.txt`, {
      method: 'PUT',
      dispatcher: agent,
      headers: { authorization: `Basic ${Buffer.from(`${BENCH_USER.email}:${BENCH_USER.password}`).toString('base64')}` },
      body: 'written on the server, 8 folders down\n',
    });
    await put.body.dump();
    if (put.statusCode !== 201) throw new Error(`PUT 8 folders down answered ${put.statusCode}`);
    const deep = await sync();
    let downloaded = false;
    try {
      downloaded = readFileSync(path.join(local, deepFolder, 'changed on the server.txt'), 'utf8') === 'written on the server, 8 folders down\n';
    } catch {
      downloaded = false;
    }

    const noChangeMs = median(noChange.map((f) => f.result.wallMs));
    const noChangePropfinds = noChange.map((f) => propfinds(f.requests));
    const onePropfindOfRoot = noChangePropfinds.every((list) => list.length === 1 && /\/home\/?$/.test(list[0]?.path ?? ''));
    const deepPropfinds = propfinds(deep.requests);
    const rows = [
      ['first sync (upload)', fmt(first.result.wallMs / 1000, 2), String(propfinds(first.requests).length), String(first.requests.length), '-'],
      ['next sync (lists what it wrote)', fmt(settle.result.wallMs / 1000, 2), String(propfinds(settle.requests).length), String(settle.requests.length), '-'],
      [
        `no change, median of ${rounds}`,
        fmt(noChangeMs / 1000, 2),
        noChangePropfinds.map((list) => `${list.length} (Depth ${list.map((r) => r.depth ?? '-').join(',')})`).join(' / '),
        String(median(noChange.map((f) => f.requests.length))),
        `1 PROPFIND of the root, <= ${TARGET_NO_CHANGE_MS / 1000} s`,
      ],
      [`a change ${DEPTH} folders down`, fmt(deep.result.wallMs / 1000, 2), String(deepPropfinds.length), String(deep.requests.length), `${DEPTH + 1} PROPFINDs, file downloaded`],
    ];
    printTable(['sync', 'wall s', 'PROPFINDs', 'requests', 'target'], rows);
    console.log(`no-change requests besides PROPFIND: ${others(noChange[0]?.requests ?? []).join(', ') || 'none'}`);
    for (const [round, list] of noChangePropfinds.entries()) {
      if (list.length !== 1) console.log(`no-change round ${round + 1} PROPFINDs: ${list.map((r) => `${decodeURIComponent(r.path)} (Depth ${r.depth ?? '-'})`).join(', ')}`);
    }
    console.log(`PROPFINDs after the change ${DEPTH} down: ${deepPropfinds.map((r) => decodeURIComponent(r.path)).join(', ')}`);

    const misses: string[] = [];
    if (!onePropfindOfRoot) misses.push('a no-change sync made other PROPFINDs than one of the root');
    if (noChangeMs > TARGET_NO_CHANGE_MS) misses.push(`a no-change sync took ${fmt(noChangeMs / 1000, 2)} s (> ${TARGET_NO_CHANGE_MS / 1000} s)`);
    if (!downloaded) misses.push(`the file written ${DEPTH} folders down was not downloaded`);
    if (deepPropfinds.length !== DEPTH + 1) misses.push(`the change ${DEPTH} folders down cost ${deepPropfinds.length} PROPFINDs (target ${DEPTH + 1})`);
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
