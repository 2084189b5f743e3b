/**
 * Where driveway's memory goes (issue 32's "Peak RSS" target): `npm run bench:memory`.
 *
 * Starts driveway as `npm start` does (one process, embedded: SQLite + local blobs) and, with
 * curl as the client: the RSS at idle after start and after first use, then the peak RSS (VmHWM,
 * reset through /proc/<pid>/clear_refs before each) during a GET and during a PUT of a
 * BENCH_FILE_MB file (1 GiB), BENCH_ROUNDS times (medians). With BENCH_HEAP_SNAPSHOT=1 it also
 * takes a heap snapshot of the idle server after first use (--heapsnapshot-signal) and prints it
 * by room: the self size of the JavaScript heap's objects grouped by the package whose code made
 * them (closures, code and scripts by their script's path; other objects by constructor), beside
 * what lies outside the heap (process.memoryUsage through the snapshot's totals and /proc's RSS).
 * BENCH_NODE_ARGS adds node flags to the server (e.g. "--max-semi-space-size=4"); BENCH_SKIP_BUILD=1
 * uses dist/ as it is.
 * Loopback only; only our own child is stopped, by PID; its temp folder is removed.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import { heapByRoom } from './heap-rooms.js';
import {
  BENCH_USER,
  buildDriveway,
  createBenchUser,
  fmt,
  freePort,
  median,
  MiB,
  positiveIntEnv,
  procStatusKiB,
  resetPeakRss,
  runClient,
  sleep,
  startDriveway,
  stopChild,
  withBenchRun,
  writeRandomFile,
} from './lib.js';

const LABEL = 'bench/memory';
const sizeMiB = positiveIntEnv('BENCH_FILE_MB', 1024);
const rounds = positiveIntEnv('BENCH_ROUNDS', 3);
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
const wantSnapshot = process.env.BENCH_HEAP_SNAPSHOT === '1';

const rssMiB = (pid: number, field: 'VmRSS' | 'VmHWM') => (procStatusKiB(pid, field) ?? 0) / 1024;

await withBenchRun(LABEL, 30 * 60_000, async ({ tmp }) => {
  if (process.env.BENCH_SKIP_BUILD !== '1') buildDriveway(LABEL);
  const source = path.join(tmp, 'source.bin');
  console.log(`${LABEL}: writing ${sizeMiB} MiB of random data`);
  writeRandomFile(source, sizeMiB * MiB);
  const adminPassword = 'Bench-Admin-Passw0rd1';
  const dataDir = path.join(tmp, 'data');
  const storePort = await freePort();
  const server = await startDriveway({
    part: 'all',
    dataDir,
    logFile: path.join(tmp, 'driveway.log'),
    env: { DRIVEWAY_ADMIN_PASSWORD: adminPassword, DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(await freePort()) },
    nodeArgs: [...nodeArgs, ...(wantSnapshot ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${tmp}`] : [])],
  });
  const pid = server.child.pid as number;
  try {
    await sleep(1000);
    const idle = rssMiB(pid, 'VmRSS');
    const smaps = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const anonymous = Number(/Anonymous:\s+(\d+)/.exec(smaps)?.[1] ?? 0) / 1024;
    const dispatcher = new Agent();
    await createBenchUser(dispatcher, `http://127.0.0.1:${storePort}`, adminPassword);
    const auth = ['-u', `${BENCH_USER.email}:${BENCH_USER.password}`];
    const curl = async (args: string[]) => {
      const result = await runClient('curl', ['-sS', '-f', '-o', '/dev/null', ...auth, ...args], process.env, 10 * 60_000);
      if (result.code !== 0) throw new Error(`curl ${args.join(' ')}: ${result.stderr}`);
    };
    await curl(['-T', source, `${server.baseUrl}/home/first.bin`]);
    const peaks = { get: [] as number[], put: [] as number[] };
    for (let round = 0; round < rounds; round++) {
      resetPeakRss(pid);
      await curl([`${server.baseUrl}/home/first.bin`]);
      peaks.get.push(rssMiB(pid, 'VmHWM'));
      await runClient('sync', [], process.env, 60_000);
      resetPeakRss(pid);
      await curl(['-T', source, `${server.baseUrl}/home/put-${round}.bin`]);
      peaks.put.push(rssMiB(pid, 'VmHWM'));
      // The background MD5 of the file just written ends before the next round's figures.
      await sleep(3000);
    }
    const afterUse = rssMiB(pid, 'VmRSS');
    console.log(`\n${LABEL}: node args: ${nodeArgs.join(' ') || '(none)'}; ${sizeMiB} MiB, ${rounds} rounds`);
    console.log(`  RSS at idle after start: ${fmt(idle)} MiB (${fmt(anonymous)} MiB anonymous: heaps and buffers; the rest mapped code and libraries); at idle after use: ${fmt(afterUse)} MiB`);
    console.log(`  peak RSS during GET: median ${fmt(median(peaks.get))} MiB (${peaks.get.map((v) => fmt(v)).join(', ')})`);
    console.log(`  peak RSS during PUT: median ${fmt(median(peaks.put))} MiB (${peaks.put.map((v) => fmt(v)).join(', ')})`);
    if (wantSnapshot) {
      process.kill(pid, 'SIGUSR2');
      // The snapshot is written in pieces: done once its size holds still for a second.
      let file: string | undefined;
      for (let i = 0, last = -1; i < 240; i++) {
        await sleep(1000);
        file = readdirSync(tmp).find((f) => f.endsWith('.heapsnapshot'));
        if (!file) continue;
        const size = statSync(path.join(tmp, file)).size;
        if (size > 0 && size === last) break;
        last = size;
      }
      if (!file) throw new Error('no heap snapshot was written');
      const rooms = heapByRoom(path.join(tmp, file));
      const total = rooms.reduce((a, [, v]) => a + v, 0);
      console.log(`\n  JavaScript heap at idle after use, by room (self sizes, ${fmt(total)} MiB in all; RSS then ${fmt(rssMiB(pid, 'VmRSS'))} MiB):`);
      for (const [room, mib] of rooms.slice(0, 25)) console.log(`    ${room.padEnd(60)} ${fmt(mib, 2).padStart(7)} MiB`);
    }
  } finally {
    await stopChild(server.child);
  }
});
