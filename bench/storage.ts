/**
 * In-process storage microbenchmark: `npx tsx bench/storage.ts`. Builds the store app over a
 * fresh SQLite file and blob folder in a temp dir (no listening socket) and, through
 * createLocalClient (the bridge's transport under `npm start`), measures:
 *   - 2,000 uploads of 4 KiB into one folder, one at a time and with 4 in flight;
 *   - listing that folder after 10,000 entries are in it (best of 20 listings, warm);
 *   - 300 uploads of 128 KiB, one at a time (staged to a part, fsynced, renamed into blobs/);
 *   - those files (blob files, not rows) deleted for good from trash, one at a time and with 4
 *     in flight: each a commit, the WAL fsync and the unlink of its blob file.
 * Figures only; nothing is asserted. BENCH_SMALL_FILES / BENCH_LIST_ENTRIES / BENCH_PURGES
 * override the counts.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ManualClock } from '../src/common/clock.js';
import { loadConfig } from '../src/common/config.js';
import { createLogger } from '../src/common/logger.js';
import { buildStoreApp } from '../src/store/app.js';
import { createLocalClient } from '../src/store/local-client.js';
import type { NodeId } from '../src/store-client/types.js';

const SMALL = Number(process.env.BENCH_SMALL_FILES ?? 2000);
const ENTRIES = Number(process.env.BENCH_LIST_ENTRIES ?? 10_000);
const PURGES = Number(process.env.BENCH_PURGES ?? 300);
/** Past INLINE_MAX_BYTES: each file has a blob file that its purge unlinks. */
const PURGED_BYTES = 128 * 1024;

async function main(): Promise<void> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'driveway-bench-storage-'));
  const password = 'Bench-Passw0rd-1a';
  const config = loadConfig({
    env: {},
    flags: { dataDir, host: '127.0.0.1', logLevel: 'silent', 'store.port': 0, 'store.adminPassword': password, 'store.scryptCost': 1024 },
  });
  const built = await buildStoreApp({ config, clock: new ManualClock(), logger: createLogger('silent') });
  try {
    const client = createLocalClient(built.ctx);
    const s = await client.login('admin', password);
    const home = 'home' as NodeId;
    await client.createFolder(s, home, 'small');
    await client.createFolder(s, home, 'small4');
    const entries = await client.listFolder(s, home);
    const folder = entries.find((e) => e.name === 'small')!.id;
    const folder4 = entries.find((e) => e.name === 'small4')!.id;
    const body = randomBytes(4096);

    const cpuMs = (from: NodeJS.CpuUsage): number => {
      const used = process.cpuUsage(from);
      return (used.user + used.system) / 1000;
    };
    const fsyncsSince = (from: number): string => `${((built.ctx.durability.flushes - from) / SMALL).toFixed(2)} WAL fsyncs/upload`;
    let flushes = built.ctx.durability.flushes;
    let cpu = process.cpuUsage();
    let t0 = performance.now();
    for (let i = 0; i < SMALL; i++) await client.upload(s, { folder, name: `f${i}.bin` }, body, body.length);
    const serialMs = performance.now() - t0;
    const serialCpuMs = cpuMs(cpu);
    const serialFsyncs = fsyncsSince(flushes);

    flushes = built.ctx.durability.flushes;
    cpu = process.cpuUsage();
    t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < SMALL) {
          const i = next++;
          await client.upload(s, { folder: folder4, name: `f${i}.bin` }, body, body.length);
        }
      }),
    );
    const parallelMs = performance.now() - t0;
    const parallelCpuMs = cpuMs(cpu);
    const parallelFsyncs = fsyncsSince(flushes);

    // Fill `small` up to ENTRIES entries (folders are cheap to make), then list it warm.
    for (let i = SMALL; i < ENTRIES; i++) await client.createFolder(s, folder, `d${i}`);
    let best = Infinity;
    let count = 0;
    cpu = process.cpuUsage();
    for (let i = 0; i < 20; i++) {
      const t = performance.now();
      count = (await client.listFolder(s, folder)).length;
      best = Math.min(best, performance.now() - t);
    }
    const listCpuMs = cpuMs(cpu) / 20;
    // Wall time includes the WAL fsyncs (the disk, shared with whatever else runs); CPU time is
    // what the code costs, the steadier figure on a busy machine.
    console.log(`uploads 4 KiB x${SMALL}, serial:     ${serialMs.toFixed(0)} ms (${((SMALL * 1000) / serialMs).toFixed(0)}/s), CPU ${((serialCpuMs * 1000) / SMALL).toFixed(0)} µs/upload, ${serialFsyncs}`);
    console.log(`uploads 4 KiB x${SMALL}, 4 parallel: ${parallelMs.toFixed(0)} ms (${((SMALL * 1000) / parallelMs).toFixed(0)}/s), CPU ${((parallelCpuMs * 1000) / SMALL).toFixed(0)} µs/upload, ${parallelFsyncs}`);
    console.log(`listing ${count} entries, best of 20: ${best.toFixed(1)} ms, CPU ${listCpuMs.toFixed(1)} ms/listing`);

    // Purges: files of distinct content moved to trash first (not measured), then deleted there.
    for (const inFlight of [1, 4]) {
      await client.createFolder(s, home, `purge${inFlight}`);
      const purgeFolder = (await client.listFolder(s, home)).find((e) => e.name === `purge${inFlight}`)!.id;
      const bodies = Array.from({ length: PURGES }, () => randomBytes(PURGED_BYTES));
      cpu = process.cpuUsage();
      t0 = performance.now();
      for (let i = 0; i < PURGES; i++) await client.upload(s, { folder: purgeFolder, name: `p${i}.bin` }, bodies[i] as Buffer, PURGED_BYTES);
      const uploadMs = performance.now() - t0;
      const uploadCpuMs = cpuMs(cpu);
      if (inFlight === 1) {
        console.log(
          `uploads 128 KiB x${PURGES} (staged, blob files), serial: ${uploadMs.toFixed(0)} ms (${((PURGES * 1000) / uploadMs).toFixed(0)}/s), CPU ${((uploadCpuMs * 1000) / PURGES).toFixed(0)} µs/upload`,
        );
      }
      const files = (await client.listFolder(s, purgeFolder)).map((e) => e.id);
      for (const id of files) await client.remove(s, id);
      flushes = built.ctx.durability.flushes;
      cpu = process.cpuUsage();
      t0 = performance.now();
      let at = 0;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (at < files.length) await client.remove(s, files[at++] as NodeId);
        }),
      );
      const purgeMs = performance.now() - t0;
      const purgeCpuMs = cpuMs(cpu);
      // WAL fsyncs per purge: the steady figure for the order of fsync and unlink (the wall time is the disk's).
      const fsyncs = (built.ctx.durability.flushes - flushes) / files.length;
      const label = inFlight === 1 ? 'serial:    ' : '4 parallel:';
      console.log(`purges of 128 KiB files x${files.length}, ${label} ${purgeMs.toFixed(0)} ms (${((files.length * 1000) / purgeMs).toFixed(0)}/s), CPU ${((purgeCpuMs * 1000) / files.length).toFixed(0)} µs/purge, ${fsyncs.toFixed(2)} WAL fsyncs/purge`);
    }
  } finally {
    await built.app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
