/**
 * A witness of what a power cut would leave of a store on SQLite, for tests of the order of
 * durability and blob removal (issue 21, item 6). The store's connection runs with
 * `synchronous = NORMAL`: a commit is on disk once an fsync of the `-wal` file that started after
 * it has completed (src/store/storage/dialects/wal-sync.ts). So the witness copies the database
 * and its WAL when such an fsync starts and, when it completes, holds that copy as "what survives
 * a power cut from now on". At each removal of a blob's bytes (the local backend's unlink of a
 * file under `blobs/`, or an S3 DeleteObject) it asks that copy whether a row still names the
 * blob: one that does is a blob a power cut at that moment would leave named and gone.
 *
 * Conservative: SQLite's own checkpoint fsyncs, or the disk writing back on its own, may put more
 * on disk than the copy holds, never less; and the copy taken at install counts as on disk, so
 * install it once what came before was answered (answers wait for their fsync).
 *
 * Observation only: FileHandle#sync (whoever's: the server's or an admin command's WAL fsync)
 * and fs.promises.rm are wrapped to call the real ones; an fd's path is read from /proc/self/fd,
 * so Linux only (as the suite).
 */
import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, promises as fsp, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { S3Client } from '@aws-sdk/client-s3';
import { vi, type MockInstance } from 'vitest';

interface Image {
  database: Buffer;
  wal: Buffer | undefined;
}

export interface Removal {
  hash: string;
  /** Whether the database as a power cut would leave it still names the blob. */
  stillNamed: boolean;
}

export interface PowerLossWitness {
  /** Every removal of a blob's bytes seen since install, in order. */
  readonly removals: Removal[];
  /** Watches an S3 backend's client too (DeleteObject). */
  watchS3(client: S3Client): void;
  uninstall(): Promise<void>;
}

/** Starts watching the SQLite database `databaseFile` and the blob folder `blobDir` (if any). */
export async function installPowerLossWitness(databaseFile: string, blobDir?: string): Promise<PowerLossWitness> {
  const walFile = `${databaseFile}-wal`;
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'driveway-power-loss-'));
  const take = (): Image => ({ database: readFileSync(databaseFile), wal: existsSync(walFile) ? readFileSync(walFile) : undefined });
  let durable = take();
  let copies = 0;

  /** Whether a row of the durable image names `hash` (a blob row, or a revision's). */
  const namedOnDisk = (hash: string): boolean => {
    const file = path.join(scratch, `image-${(copies += 1)}.sqlite`);
    writeFileSync(file, durable.database);
    if (durable.wal) writeFileSync(`${file}-wal`, durable.wal);
    const db = new Database(file);
    try {
      const blob = db.prepare('SELECT 1 FROM blobs WHERE hash = ?').get(hash);
      const revision = db.prepare('SELECT 1 FROM revisions WHERE blob_hash = ?').get(hash);
      return blob !== undefined || revision !== undefined;
    } finally {
      db.close();
      for (const suffix of ['', '-wal', '-shm']) rmSync(`${file}${suffix}`, { force: true });
    }
  };

  const removals: Removal[] = [];
  const seen = (hash: string): void => {
    removals.push({ hash, stillNamed: namedOnDisk(hash) });
  };

  const probe = await fsp.open(databaseFile, 'r');
  const fileHandle = Object.getPrototypeOf(probe) as { sync(this: { fd: number }): Promise<void> };
  await probe.close();
  const realSync = fileHandle.sync;
  const syncSpy: MockInstance = vi.spyOn(fileHandle, 'sync').mockImplementation(async function (this: { fd: number }) {
    let target: string | undefined;
    try {
      target = readlinkSync(`/proc/self/fd/${this.fd}`);
    } catch {
      target = undefined;
    }
    if (target !== walFile) return realSync.call(this);
    // What is in the files when the fsync starts is on disk once it has completed.
    const image = take();
    await realSync.call(this);
    durable = image;
  });

  const realRm = fsp.rm;
  const rmSpy: MockInstance = vi.spyOn(fsp, 'rm').mockImplementation(async (target, options) => {
    const file = String(target);
    if (blobDir !== undefined && file.startsWith(`${blobDir}${path.sep}`) && existsSync(file)) seen(path.basename(file));
    return realRm(target, options);
  });

  const watched: Array<() => void> = [];
  return {
    removals,
    watchS3(client) {
      const name = `powerLossWitness${watched.length}`;
      client.middlewareStack.add(
        (next, context) => async (args) => {
          const key = (args.input as { Key?: string }).Key;
          if (context.commandName === 'DeleteObjectCommand' && key !== undefined) seen(key.slice(key.lastIndexOf('/') + 1));
          return next(args);
        },
        { step: 'initialize', name },
      );
      watched.push(() => client.middlewareStack.remove(name));
    },
    async uninstall() {
      syncSpy.mockRestore();
      rmSpy.mockRestore();
      for (const unwatch of watched) unwatch();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
