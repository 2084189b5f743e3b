/**
 * Storage safety (docs/store-semantics.md, "Upload"): a client that hangs up mid-upload, and a
 * store killed with SIGKILL mid-upload, leave no temp file, no row, no blob and an unchanged
 * disk_used; a blob renamed into place whose transaction never committed is swept at start;
 * an upload that fails after its rename never unlinks bytes a concurrent upload committed.
 */
import { localBlobs, partFileGrowing, stagedParts } from '../../helpers/blobs.js';
import { INLINE_MAX_BYTES } from '../../../src/store/blobs/staging.js';
import { inlineBlob } from '../../../src/store/storage/blob-refs.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createStoreClient, nodeId, type HttpStoreClient, type StoreSession } from '../../../src/store-client/index.js';
import { ADMIN_PASSWORD, startTestStore, type TestStore } from '../../helpers/start-store.js';
import { blobFiles, blobHashOf, createFolder, createSeeder, diskUsed, sha256Of, topLevelRow, type Seeder } from '../../helpers/seed.js';
import { MiB, readAll, startEndlessUpload } from '../../helpers/stream-helpers.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const WAIT = { timeout: 15_000, interval: 20 };

function nodeCount(store: TestStore): number {
  return (store.ctx.db!.prepare('SELECT COUNT(*) AS n FROM nodes').get() as { n: number }).n;
}

function revisionCount(store: TestStore): number {
  return (store.ctx.db!.prepare('SELECT COUNT(*) AS n FROM revisions').get() as { n: number }).n;
}

/**
 * A store on a data dir of its own: `before` runs there as admin, the store stops, a new one
 * starts on the same dir and `after` runs there as admin; the dir is removed whatever happens.
 */
async function acrossRestart(
  prefix: string,
  before: (store: TestStore, client: HttpStoreClient, session: StoreSession) => Promise<void>,
  after: (restarted: TestStore, client: HttpStoreClient, session: StoreSession) => Promise<void>,
): Promise<void> {
  const own = makeTmpDir(prefix);
  try {
    for (const step of [before, after]) {
      const store = await startTestStore({ dataDir: own.dir });
      const client = createStoreClient(store.url, { retries: 0 });
      try {
        await step(store, client, await client.login('admin', ADMIN_PASSWORD));
      } finally {
        await client.close();
        await store.close();
      }
    }
  } finally {
    own.remove();
  }
}

describe('a client that disconnects mid-upload', () => {
  let store: TestStore;
  let seeder: Seeder;
  let client: HttpStoreClient;

  beforeAll(async () => {
    store = await startTestStore();
    seeder = await createSeeder(store);
    client = seeder.client;
  });

  afterAll(async () => {
    await client.close();
    await store.close();
  });

  async function expectNothingLeft(userUuid: string, before: { nodes: number; revisions: number; blobs: string[]; used: number }): Promise<void> {
    await vi.waitFor(() => expect(stagedParts(localBlobs(store).tmpDir)).toEqual([]), WAIT);
    expect(nodeCount(store)).toBe(before.nodes);
    expect(revisionCount(store)).toBe(before.revisions);
    expect(blobFiles(store)).toEqual(before.blobs);
    expect(diskUsed(store, userUuid)).toBe(before.used);
    // The store still answers, and still stores.
    const home = (await client.listFolder(seeder.admin, nodeId('home'))).length;
    expect(home).toBeGreaterThanOrEqual(0);
  }

  it('aborted by the client (undici AbortController) leaves no temp file, row, blob or usage', async () => {
    const dana = await seeder.user('Dana Aborting');
    await client.upload(dana.session, { folder: nodeId('home'), name: 'kept.txt' }, Readable.from([Buffer.from('kept bytes')]), 10);
    const before = { nodes: nodeCount(store), revisions: revisionCount(store), blobs: blobFiles(store), used: diskUsed(store, dana.uuid) };
    expect(before.used).toBe(10);

    const controller = new AbortController();
    const token = await client.requestUploadToken(dana.session, nodeId('home'));
    const upload = startEndlessUpload(store.url, token, controller.signal);
    await partFileGrowing(localBlobs(store).tmpDir, 4 * MiB);
    controller.abort();
    expect(await upload).toBeInstanceOf(Error);

    await expectNothingLeft(dana.uuid, before);
    const after = await client.upload(dana.session, { folder: nodeId('home'), name: 'later.txt' }, Readable.from([Buffer.from('later')]), 5);
    expect(after.revision).toBe(1);
    expect(diskUsed(store, dana.uuid)).toBe(15);
  });

  it('cut off on a raw socket before its declared Content-Length leaves nothing behind', async () => {
    const eve = await seeder.user('Eve Vanishing');
    const before = { nodes: nodeCount(store), revisions: revisionCount(store), blobs: blobFiles(store), used: diskUsed(store, eve.uuid) };
    const token = await client.requestUploadToken(eve.session, nodeId('home'));
    const { port } = new URL(store.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await once(socket, 'connect');
    const head = Buffer.from('--B\r\nContent-Disposition: form-data; name="file"; filename="cut.bin"\r\n\r\n', 'utf8');
    socket.write(
      `POST /upload/${token} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=B\r\n` +
        `Content-Length: ${head.length + 64 * MiB + 8}\r\n\r\n`,
    );
    socket.write(head);
    for (let i = 0; i < 3; i += 1) socket.write(Buffer.alloc(MiB, i));
    await partFileGrowing(localBlobs(store).tmpDir, 1);
    socket.destroy();

    await expectNothingLeft(eve.uuid, before);
  });
});

describe('an upload that fails after its bytes were renamed into place', () => {
  it('never unlinks a blob that a concurrent upload of the same bytes committed', async () => {
    const store = await startTestStore();
    const seeder = await createSeeder(store);
    try {
      const fay = await seeder.user('Fay Racing');
      await createFolder(seeder.client, fay.session, 'home', 'taken');
      for (let round = 0; round < 8; round += 1) {
        // Past the inline limit: this race is about blob files (small blobs live in their row).
        const content = Buffer.concat([Buffer.from(`shared content, round ${round}`), Buffer.alloc(INLINE_MAX_BYTES)]);
        const results = await Promise.allSettled([
          seeder.client.upload(fay.session, { folder: nodeId('home'), name: 'taken' }, Readable.from([content]), content.length),
          seeder.client.upload(fay.session, { folder: nodeId('home'), name: `ok-${round}.txt` }, Readable.from([content]), content.length),
        ]);
        expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
        expect(blobFiles(store)).toContain(blobHashOf(content));
      }
    } finally {
      await seeder.client.close();
      await store.close();
    }
  });
});

/** Contents large enough to be kept as blob files (past INLINE_MAX_BYTES). */
const SURVIVOR = `survives the crash ${'.'.repeat(INLINE_MAX_BYTES)}`;
const COMMITTED = `committed ${'.'.repeat(INLINE_MAX_BYTES)}`;

describe('a store killed with SIGKILL mid-upload', () => {
  let child: ChildProcess | undefined;
  let tmp: { dir: string; remove: () => void };

  beforeAll(() => {
    tmp = makeTmpDir('driveway-kill-');
  });

  afterAll(() => {
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    tmp.remove();
  });

  /** Starts `driveway --only store` on the data dir; resolves with its URL from the "driveway store:" line. */
  async function spawnStore(dataDir: string): Promise<{ process: ChildProcess; url: string }> {
    const proc = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--only', 'store'], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DRIVEWAY_DATA_DIR: dataDir,
        DRIVEWAY_STORE_PORT: '0',
        DRIVEWAY_HOST: '127.0.0.1',
        DRIVEWAY_ADMIN_PASSWORD: ADMIN_PASSWORD,
        DRIVEWAY_LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    proc.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      proc.stdout?.on('data', (chunk: Buffer) => {
        stdout += chunk.toString('utf8');
        const match = /driveway store:\s+(http:\/\/\S+)/.exec(stdout);
        if (match) resolve(match[1] as string);
      });
      proc.once('exit', (code, signal) => reject(new Error(`store exited early (${code ?? signal}): ${stderr}`)));
    });
    return { process: proc, url };
  }

  it('leaves, after a restart on the same data dir, no temp file, no orphan blob, no row and a correct disk_used', async () => {
    const dataDir = tmp.dir;
    const started = await spawnStore(dataDir);
    child = started.process;
    const client = createStoreClient(started.url, { retries: 0 });
    let admin: StoreSession;
    try {
      admin = await client.login('admin', ADMIN_PASSWORD);
      await client.upload(admin, { folder: nodeId('home'), name: 'survivor.txt' }, Readable.from([Buffer.from(SURVIVOR)]), SURVIVOR.length);
      await client.upload(admin, { folder: nodeId('home'), name: 'small.txt' }, Readable.from([Buffer.from('small survivor')]), 14);
      const token = await client.requestUploadToken(admin, nodeId('home'));
      const upload = startEndlessUpload(started.url, token);
      const partFile = await partFileGrowing(path.join(dataDir, 'tmp'), 4 * MiB);

      child.kill('SIGKILL');
      await once(child, 'exit');
      expect(child.signalCode).toBe('SIGKILL');
      expect(await upload).toBeInstanceOf(Error);
      // The crash left the half-written temp file behind; the restart must deal with it.
      expect(statSync(partFile).size).toBeGreaterThan(0);
    } finally {
      await client.close();
    }

    const restarted = await startTestStore({ dataDir });
    try {
      expect(stagedParts(localBlobs(restarted).tmpDir)).toEqual([]);
      // The small file lives in its database row: only the large one has a blob file.
      expect(blobFiles(restarted)).toEqual([blobHashOf(SURVIVOR)]);
      expect((await inlineBlob(restarted.ctx.storage.sql, blobHashOf('small survivor')))?.toString()).toBe('small survivor');
      const adminRow = restarted.ctx.db!.prepare('SELECT uuid FROM users WHERE is_builtin = 1').get() as { uuid: string };
      const home = await topLevelRow(restarted, adminRow.uuid, 'home');
      const names = restarted.ctx.db!.prepare('SELECT name FROM nodes WHERE parent_uuid = ? ORDER BY name').all(home.uuid) as Array<{ name: string }>;
      expect(names.map((n) => n.name)).toEqual(['small.txt', 'survivor.txt']);
      expect(revisionCount(restarted)).toBe(2);
      expect(diskUsed(restarted, adminRow.uuid)).toBe(SURVIVOR.length + 14);

      const again = createStoreClient(restarted.url, { retries: 0 });
      try {
        const session = await again.login('admin', ADMIN_PASSWORD);
        const result = await again.upload(session, { folder: nodeId('home'), name: 'after.txt' }, Readable.from([Buffer.from('after')]), 5);
        expect(result.revision).toBe(1);
        expect(diskUsed(restarted, adminRow.uuid)).toBe(SURVIVOR.length + 14 + 5);
      } finally {
        await again.close();
      }
    } finally {
      await restarted.close();
    }
  });

  it('upgrades a data dir from before migration 003: SHA-256 blobs stay readable and are not swept', async () => {
    // Large enough to be a blob file, as every blob was then.
    const content = `stored by an older driveway ${'.'.repeat(INLINE_MAX_BYTES)}`;
    const legacy = sha256Of(content);
    await acrossRestart(
      'driveway-upgrade-',
      async (store, client, session) => {
        await client.upload(session, { folder: nodeId('home'), name: 'old.txt' }, Readable.from([Buffer.from(content)]), content.length);
        // Undo what migrations 003 and 004 did: SHA-256 addresses, the old columns. Later
        // migrations touch other tables and stay applied, so none of them has to be undone here.
        const db = store.ctx.db!;
        const blobs = localBlobs(store);
        mkdirSync(path.dirname(blobs.pathOf(legacy)), { recursive: true });
        renameSync(blobs.pathOf(blobHashOf(content)), blobs.pathOf(legacy));
        db.pragma('foreign_keys = OFF');
        db.transaction(() => {
          db.prepare('UPDATE blobs SET hash = ?').run(legacy);
          db.prepare('UPDATE revisions SET blob_hash = ?').run(legacy);
          db.exec('ALTER TABLE blobs RENAME COLUMN hash TO sha256; ALTER TABLE revisions RENAME COLUMN blob_hash TO blob_sha256');
          db.exec('CREATE TABLE main.upload_tokens (token_hash TEXT PRIMARY KEY)'); // dropped again by 004
          // Only 003 and 004 run again; later migrations stay applied (their tables are still there).
          db.prepare('DELETE FROM schema_migrations WHERE version IN (3, 4)').run();
        })();
      },
      async (restarted, client, session) => {
        expect(blobFiles(restarted)).toEqual([legacy]);
        const listed = await client.listFolder(session, nodeId('home'));
        const old = listed.find((entry) => entry.name === 'old.txt');
        expect(old).toBeDefined();
        const download = await client.download(session, old!.id, 'old.txt');
        expect((await readAll(download.body)).toString('utf8')).toBe(content);
        // The same bytes uploaded again get a BLAKE3 address of their own.
        await client.upload(session, { folder: nodeId('home'), name: 'new.txt' }, Readable.from([Buffer.from(content)]), content.length);
        expect(blobFiles(restarted).sort()).toEqual([legacy, blobHashOf(content)].sort());
      },
    );
  });

  it('forgets upload tokens at a restart: one issued before answers 410 after, and nothing is stored', async () => {
    let token = '';
    await acrossRestart(
      'driveway-token-restart-',
      async (_store, client, session) => {
        token = await client.requestUploadToken(session, nodeId('home'));
      },
      async (restarted, client) => {
        await expect(client.uploadWithToken(token, 'late.txt', Readable.from([Buffer.from('late')]), 4)).rejects.toMatchObject({
          httpStatus: 410,
          code: 'upload_token_used',
        });
        expect(revisionCount(restarted)).toBe(0);
        expect(blobFiles(restarted)).toEqual([]);
      },
    );
  });

  it('removes at start a blob that was renamed into place but never committed', async () => {
    await acrossRestart(
      'driveway-orphan-',
      async (store, client, session) => {
        await client.upload(session, { folder: nodeId('home'), name: 'kept.txt' }, Readable.from([Buffer.from(COMMITTED)]), COMMITTED.length);
        // What a crash between rename and commit leaves: the file at its content address, no row.
        const orphanPath = localBlobs(store).pathOf(blobHashOf('renamed, never committed'));
        mkdirSync(path.dirname(orphanPath), { recursive: true });
        writeFileSync(orphanPath, 'renamed, never committed');
        writeFileSync(path.join(path.dirname(orphanPath), 'not-a-blob-hash'), 'junk');
      },
      async (restarted) => {
        expect(blobFiles(restarted)).toEqual([blobHashOf(COMMITTED)]);
      },
    );
  });
});
