/**
 * What SHA-1 and MD5 cost a large PUT on this machine (issue 22's PUT target):
 * `npx tsx bench/put-hashing.ts`.
 *
 * One `curl -T` of a BENCH_FILE_MB file (1 GiB by default) to each of four servers, in rounds
 * whose order rotates, each PUT after a `sync` (outside the timing):
 *
 *   floor             bench/raw-node.ts: body to a temp file, one fsync, rename (no hashes)
 *   floor + SHA-1     the same, also SHA-1 of the body as it passes (what driveway's answer waits for)
 *   floor + hashes    the same, also SHA-1 and MD5 of the body as it passes (same thread)
 *   rclone serve      `rclone serve webdav` when installed (issue 32's PUT target: ≥ 1.2× its rate)
 *   driveway          this checkout, as `npm start` runs it (embedded: SQLite + local blobs)
 *   baseline          BENCH_BASELINE_REF (default 6befab0, the last commit before issue 22
 *                     added the checksums), built in the temp folder; "none" skips it
 *
 * It prints each server's wall time (median, min-max), its CPU seconds per PUT (the server
 * process, all threads) and the ratios that matter: floor + hashes against floor (what the
 * hashing costs the least a Node server does for the same I/O here), driveway against baseline,
 * and each Node server's rate against rclone's. On a machine whose cores are all busy during the PUT (curl and the receiving
 * thread on 2 cores) the first ratio is the bound the second cannot beat.
 *
 * Knobs: BENCH_FILE_MB (1024), BENCH_ROUNDS (5), BENCH_BASELINE_REF (6befab0), BENCH_NICE (unset; e.g.
 * -15 as root: every thread of the four servers, and curl, run at that niceness, so other work on
 * a shared machine disturbs the comparison less; threads a server starts later inherit it, and
 * driveway's checksum threads stay their ten steps nicer than it). Loopback only; only
 * our own children are stopped, by PID; the temp folder goes whatever happens.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  buildDriveway,
  fmt,
  freePort,
  median,
  MiB,
  positiveIntEnv,
  prepareBaseline,
  printTable,
  procCpuMs,
  rotate,
  runClient,
  spread,
  startChild,
  startDriveway,
  stopChild,
  transpileFloor,
  withBenchRun,
  writeRandomFile,
  type RunningChild,
} from './lib.js';

const LABEL = 'put-hashing';

interface Server {
  name: string;
  running: RunningChild;
  url: string;
  auth?: string;
  wallMs: number[];
  cpuMs: number[];
}

await withBenchRun(LABEL, 60 * 60_000, async (run) => {
  const sizeMiB = positiveIntEnv('BENCH_FILE_MB', 1024);
  const rounds = positiveIntEnv('BENCH_ROUNDS', 5);
  const niceness = process.env.BENCH_NICE ? Number(process.env.BENCH_NICE) : undefined;
  if (niceness !== undefined && !Number.isInteger(niceness)) throw new Error(`BENCH_NICE must be a whole number, got ${process.env.BENCH_NICE}`);
  /** Every thread of a server at BENCH_NICE (renice of a process id changes that thread only on Linux). */
  const renice = async (pid: number): Promise<void> => {
    if (niceness === undefined) return;
    const tids = readdirSync(`/proc/${pid}/task`);
    const result = await runClient('renice', ['-n', String(niceness), '-p', ...tids], process.env, 10_000);
    if (result.code !== 0) throw new Error(`renice ${niceness} failed (root is needed to go below 0): ${result.stderr.trim()}`);
  };
  const baselineRef = process.env.BENCH_BASELINE_REF ?? '6befab0';
  buildDriveway(LABEL);
  const baseline = baselineRef === 'none' || baselineRef === '' ? undefined : prepareBaseline(run, baselineRef, LABEL);

  const source = path.join(run.tmp, 'source.bin');
  writeRandomFile(source, sizeMiB * MiB);
  const floorScript = transpileFloor(run.tmp);
  const servers: Server[] = [];
  const track = (name: string, running: RunningChild, url: string, auth?: string): Promise<void> => {
    run.onCleanup(() => stopChild(running.child));
    servers.push({ name, running, url, auth, wallMs: [], cpuMs: [] });
    return renice(running.pid);
  };

  for (const [name, extra] of [['floor', []], ['floor + SHA-1', ['--sha1']], ['floor + hashes', ['--hashes']]] as const) {
    const root = path.join(run.tmp, name.replace(/\W+/g, '-'));
    mkdirSync(root);
    const port = await freePort();
    const running = await startChild({
      name,
      command: process.execPath,
      args: [floorScript, '--root', root, '--port', String(port), ...extra],
      env: { PATH: process.env.PATH },
      logFile: path.join(run.tmp, `${name.replace(/\W+/g, '-')}.log`),
      readyLine: /raw-node: http/,
    });
    await track(name, running, `http://127.0.0.1:${port}`);
  }
  for (const [name, root] of [['driveway', undefined], ...(baseline ? [[`baseline ${baseline.commit}`, baseline.root]] : [])] as const) {
    const dataDir = path.join(run.tmp, `data-${servers.length}`);
    const running = await startDriveway({ part: 'all', root, dataDir, logFile: path.join(run.tmp, `driveway-${servers.length}.log`) });
    const password = readFileSync(path.join(dataDir, 'initial-admin-password'), 'utf8').trim();
    await track(name, running, `${running.baseUrl}/home`, `admin:${password}`);
  }

  if (spawnSync('rclone', ['version'], { stdio: 'ignore' }).status === 0) {
    const root = path.join(run.tmp, 'rclone');
    mkdirSync(root);
    const port = await freePort();
    const running = await startChild({
      name: 'rclone serve',
      command: 'rclone',
      args: ['serve', 'webdav', root, '--addr', `127.0.0.1:${port}`, '--cache-dir', path.join(run.tmp, 'rclone-cache'), '--log-level', 'NOTICE'],
      env: { PATH: process.env.PATH, HOME: run.tmp },
      logFile: path.join(run.tmp, 'rclone.log'),
      readyProbe: async () => (await fetch(`http://127.0.0.1:${port}/`, { method: 'OPTIONS' })).status < 500,
    });
    await track('rclone serve', running, `http://127.0.0.1:${port}`);
  } else console.log(`${LABEL}: rclone not installed: no rclone row`);

  console.log(`${LABEL}: ${rounds} rounds of one ${sizeMiB} MiB PUT per server${niceness === undefined ? '' : `, servers and curl at niceness ${niceness}`}`);
  for (let round = 0; round < rounds; round += 1) {
    for (const server of rotate(servers, round)) {
      await runClient('sync', [], process.env, 120_000);
      const cpuBefore = procCpuMs(server.running.pid) ?? 0;
      const args = ['-sS', '-o', '/dev/null', '-w', '%{http_code} %{time_total}', '-T', source, `${server.url}/put-${round}.bin`];
      const curl = server.auth ? ['-u', server.auth, ...args] : args;
      const result = niceness === undefined ? await runClient('curl', curl, process.env, 600_000) : await runClient('nice', ['-n', String(niceness), 'curl', ...curl], process.env, 600_000);
      const [status, seconds] = result.stdout.trim().split(' ');
      if (result.code !== 0 || (status !== '201' && status !== '204')) throw new Error(`${server.name}: PUT answered ${status} (curl ${result.code}): ${result.stderr}`);
      server.wallMs.push(Number(seconds) * 1000);
      server.cpuMs.push((procCpuMs(server.running.pid) ?? 0) - cpuBefore);
      console.log(`  round ${round + 1}: ${server.name} ${fmt(Number(seconds), 2)} s`);
    }
  }

  printTable(
    ['server', 'PUT s (median)', 'min-max', 'MB/s', 'server CPU s'],
    servers.map((s) => [s.name, fmt(median(s.wallMs) / 1000, 2), spread(s.wallMs.map((ms) => ms / 1000), 2), fmt((sizeMiB * MiB) / 1e6 / (median(s.wallMs) / 1000), 0), fmt(median(s.cpuMs) / 1000, 2)]),
  );
  const ratio = (a: string, b: string): string => {
    const x = servers.find((s) => s.name.startsWith(a));
    const y = servers.find((s) => s.name.startsWith(b));
    return x && y ? `${fmt(median(x.wallMs) / median(y.wallMs), 2)}×` : 'n/a';
  };
  console.log(`floor + hashes / floor: ${ratio('floor + hashes', 'floor')} (what SHA-1 and MD5 cost the least a Node server does here)`);
  console.log(`driveway / baseline: ${ratio('driveway', 'baseline')}`);
  // Rates: rclone's time over a server's is that server's rate as a multiple of rclone's (target ≥ 1.2 for driveway).
  for (const name of ['driveway', 'floor + SHA-1', 'floor + hashes', 'floor']) {
    console.log(`${name} rate / rclone serve rate: ${ratio('rclone serve', name)}${name === 'driveway' ? ' (issue 32: ≥ 1.20×)' : ''}`);
  }
});
