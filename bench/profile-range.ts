/**
 * Where a 1 MiB Range GET's time goes (issue 32's "Range 1 MB at 500 MB" target):
 * `npx tsx bench/profile-range.ts`. Starts driveway as `npm start` does (node dist/main.js,
 * embedded) with --cpu-prof, PUTs a BENCH_FILE_MB file (600 MiB) and reads 1 MiB at 500 MiB
 * BENCH_READS times (200) with `curl -r`, then prints curl's median time_total and the process's
 * CPU profile summary (self and inclusive time by function, by area). BENCH_NODE_ARGS adds node
 * flags; BENCH_SKIP_BUILD=1 uses dist/ as it is. Loopback only; our child stopped by PID; the
 * temp folder removed.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { Agent } from 'undici';
import { BENCH_USER, buildDriveway, createBenchUser, fmt, freePort, median, MiB, positiveIntEnv, runClient, startDriveway, stopChild, summarizeCpuProfile, withBenchRun, writeRandomFile } from './lib.js';

const LABEL = 'bench/profile-range';
const sizeMiB = positiveIntEnv('BENCH_FILE_MB', 600);
const reads = positiveIntEnv('BENCH_READS', 200);
const nodeArgs = (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');

await withBenchRun(LABEL, 20 * 60_000, async ({ tmp }) => {
  if (process.env.BENCH_SKIP_BUILD !== '1') buildDriveway(LABEL);
  const source = path.join(tmp, 'source.bin');
  writeRandomFile(source, sizeMiB * MiB);
  const adminPassword = 'Bench-Admin-Passw0rd1';
  const storePort = await freePort();
  const profDir = path.join(tmp, 'prof');
  const server = await startDriveway({
    part: 'all',
    dataDir: path.join(tmp, 'data'),
    logFile: path.join(tmp, 'driveway.log'),
    env: { DRIVEWAY_ADMIN_PASSWORD: adminPassword, DRIVEWAY_STORE_PORT: String(storePort), DRIVEWAY_DAV_PORT: String(await freePort()) },
    nodeArgs: [...nodeArgs, '--cpu-prof', `--cpu-prof-dir=${profDir}`],
  });
  const times: number[] = [];
  try {
    await createBenchUser(new Agent(), `http://127.0.0.1:${storePort}`, adminPassword);
    const auth = ['-u', `${BENCH_USER.email}:${BENCH_USER.password}`];
    const put = await runClient('curl', ['-sS', '-f', '-o', '/dev/null', ...auth, '-T', source, `${server.baseUrl}/home/big.bin`], process.env, 10 * 60_000);
    if (put.code !== 0) throw new Error(`PUT failed: ${put.stderr}`);
    const offset = Math.floor((500 / 1024) * sizeMiB * MiB);
    for (let i = 0; i < reads; i++) {
      const got = await runClient('curl', ['-sS', '-f', '-o', '/dev/null', '-w', '%{time_total}', ...auth, '-r', `${offset}-${offset + MiB - 1}`, `${server.baseUrl}/home/big.bin`], process.env, 60_000);
      if (got.code !== 0) throw new Error(`range read failed: ${got.stderr}`);
      times.push(Number(got.stdout) * 1000);
    }
  } finally {
    await stopChild(server.child);
  }
  console.log(`\n${LABEL}: ${reads} reads of 1 MiB at 500/1024 of ${sizeMiB} MiB: median ${fmt(median(times), 2)} ms (min ${fmt(Math.min(...times), 2)}, max ${fmt(Math.max(...times), 2)})`);
  const profile = readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (profile) console.log(summarizeCpuProfile(path.join(profDir, profile), 25));
});
