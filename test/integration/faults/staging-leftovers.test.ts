/**
 * Staged parts (`<dataDir>/tmp/*.part`, src/store/blobs/staging.ts) of a process that ended are
 * swept; those of a live one never are (issue 21, item 8). A real driveway killed with SIGKILL
 * mid-upload leaves its part, which the next start on the folder removes and logs. A start of
 * another process on the folder, while a live instance stages there, leaves that instance's part
 * and its upload completes. A serving store's periodic sweep removes a dead process's parts and
 * its own parts untouched past `store.blobs.stagingMaxAgeSec`, and leaves another live process's.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { BlobStaging, contentHashOf } from '../../../src/store/blobs/staging.js';
import { createStoreClient, nodeId, type NodeId } from '../../../src/store-client/index.js';
import { partFileGrowing, stagedParts } from '../../helpers/blobs.js';
import { ADMIN_PASSWORD, spawnDriveway, type DrivewayProcess } from '../../helpers/driveway-process.js';
import { captureLog } from '../../helpers/log-capture.js';
import { spawnStagingOwner, type StagingOwner } from '../../helpers/staging-owner.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { filesIn, MiB, patternBytes, readAll, startEndlessUpload } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const WAIT = { timeout: 20_000, interval: 100 };

/** Stops an instance with SIGTERM (it drains and exits 0); SIGKILL if it does not within 20 s. */
async function stop(instance: DrivewayProcess): Promise<void> {
  instance.child.kill('SIGTERM');
  const timer = setTimeout(() => instance.kill(), 20_000);
  await instance.exited;
  clearTimeout(timer);
}

describe('an instance killed mid-upload', () => {
  const tmp = makeTmpDir('driveway-leftovers-');
  const started: DrivewayProcess[] = [];
  afterAll(() => {
    for (const instance of started) instance.kill();
    tmp.remove();
  });

  it('leaves its staged part, which the next start on the folder removes and logs', async () => {
    const staging = path.join(tmp.dir, 'tmp');
    const killed = await spawnDriveway({ dataDir: tmp.dir });
    started.push(killed);
    const client = createStoreClient(killed.storeUrl, { retries: 0 });
    let part: string;
    try {
      const admin = await client.login('admin', ADMIN_PASSWORD);
      const upload = startEndlessUpload(killed.storeUrl, await client.requestUploadToken(admin, nodeId('home')));
      part = await partFileGrowing(staging, 2 * MiB);
      killed.child.kill('SIGKILL');
      await killed.exited;
      expect(await upload).toBeInstanceOf(Error);
    } finally {
      await client.close();
    }
    const left = statSync(part).size;
    expect(left).toBeGreaterThanOrEqual(2 * MiB);
    const deadOwner = path.join(staging, `${path.basename(part).split('.')[0] as string}.owner`);
    expect(existsSync(deadOwner)).toBe(true);

    const restarted = await spawnDriveway({ dataDir: tmp.dir });
    started.push(restarted);
    expect(stagedParts(staging)).toEqual([]);
    expect(existsSync(deadOwner)).toBe(false);
    const line = restarted
      .output()
      .split('\n')
      .find((l) => l.includes('removed staged upload parts'));
    expect(line, restarted.output()).toBeDefined();
    expect(JSON.parse(line as string)).toMatchObject({ parts: 1, bytes: left });
    await stop(restarted);
  }, 90_000);
});

describe('a start on a folder where a live instance stages', () => {
  const tmp = makeTmpDir('driveway-live-part-');
  let live: DrivewayProcess | undefined;
  afterAll(() => {
    live?.kill();
    tmp.remove();
  });

  it('leaves that instance’s part, and its upload completes', async () => {
    live = await spawnDriveway({ dataDir: tmp.dir });
    const staging = path.join(tmp.dir, 'tmp');
    const client = createStoreClient(live.storeUrl, { retries: 0 });
    try {
      const admin = await client.login('admin', ADMIN_PASSWORD);
      const first = patternBytes(0, 2 * MiB);
      const rest = patternBytes(2 * MiB, 2 * MiB);
      let open: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => (open = resolve));
      async function* body(): AsyncGenerator<Buffer> {
        yield first;
        await gate;
        yield rest;
      }
      const upload = client.upload(admin, { folder: nodeId('home'), name: 'kept.bin' }, Readable.from(body()), 4 * MiB);
      try {
        const part = await partFileGrowing(staging, 2 * MiB);
        // What any process starting on the folder does: take its own ownership, then sweep.
        const other = new BlobStaging(staging);
        await other.init();
        expect(existsSync(part)).toBe(true);
        expect(await other.sweep()).toEqual({ parts: 0, bytes: 0 });
        await other.close();
        expect(existsSync(part)).toBe(true);
      } finally {
        open();
      }
      const stored = await upload;
      expect(stored.id).toBeDefined();
      const download = await client.download(admin, stored.id as NodeId, 'kept.bin');
      expect(contentHashOf(await readAll(download.body))).toBe(contentHashOf(Buffer.concat([first, rest])));
    } finally {
      await client.close();
    }
    await stop(live);
  }, 90_000);
});

describe('the periodic sweep of a serving store', () => {
  let store: TestStore;
  let staging: string;
  const log = captureLog('info');
  const others: StagingOwner[] = [];

  beforeAll(async () => {
    store = await startTestStore({ storage: 'sqlite', logger: log.logger, flags: { 'store.blobs.stagingMaxAgeSec': 2 } });
    staging = path.join(store.dataDir, 'tmp');
  });
  afterAll(async () => {
    for (const other of others) await other.kill();
    await store?.close();
  });

  it('removes a dead process’s parts and its own untouched ones, and leaves a live process’s', async () => {
    const dead = await spawnStagingOwner(staging);
    const alive = await spawnStagingOwner(staging);
    others.push(dead, alive);
    await dead.kill();
    // This process's own part, as a leak would leave one: untouched for two days.
    const stale = ownPart(staging, 2 * 86_400_000);

    await vi.waitFor(() => {
      expect(existsSync(dead.part)).toBe(false);
      expect(existsSync(stale)).toBe(false);
    }, WAIT);
    expect(existsSync(dead.ownerFile)).toBe(false);
    expect(existsSync(alive.part)).toBe(true);
    expect(existsSync(alive.ownerFile)).toBe(true);
    const line = await log.waitFor((l) => String(l.msg).startsWith('removed staged upload parts'));
    expect(line.parts).toBeGreaterThanOrEqual(2);
  }, 60_000);
});

/** A part named as this process's staging in `folder` names its own, last written `ageMs` ago. */
function ownPart(folder: string, ageMs: number): string {
  const owner = filesIn(folder).find((name) => name.startsWith(`${process.pid}-`) && name.endsWith('.owner'));
  if (!owner) throw new Error(`no owner file of this process in ${folder}`);
  const part = path.join(folder, `${owner.slice(0, -'.owner'.length)}.${randomUUID()}.part`);
  writeFileSync(part, Buffer.alloc(1000));
  const when = (Date.now() - ageMs) / 1000;
  utimesSync(part, when, when);
  return part;
}

describe('a sweep by age', () => {
  const tmp = makeTmpDir('driveway-staging-age-');
  afterAll(() => tmp.remove());

  it('removes this process’s parts untouched for longer than the age, not younger ones', async () => {
    const staging = new BlobStaging(tmp.dir);
    await staging.init();
    try {
      const old = ownPart(tmp.dir, 2 * 3_600_000);
      const young = ownPart(tmp.dir, 60_000);
      expect(await staging.sweep(3_600_000)).toEqual({ parts: 1, bytes: 1000 });
      expect(existsSync(old)).toBe(false);
      expect(existsSync(young)).toBe(true);
      // Without an age, a sweep leaves this process's parts alone.
      expect(await staging.sweep()).toEqual({ parts: 0, bytes: 0 });
      expect(existsSync(young)).toBe(true);
    } finally {
      await staging.close();
    }
  });
});
