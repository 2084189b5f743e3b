/**
 * No blob's bytes go before the commit that released them is on disk (issue 21, item 6), on every
 * path that removes them: a purge from trash, a user's or a group's deletion, a rejected incoming
 * share, retention, the collector, `driveway check --repair` beside the server, and the S3
 * backend's deletes. The store
 * runs on SQLite (synchronous = NORMAL, a shared WAL fsync before each answer); a witness
 * (test/helpers/power-loss.ts) keeps what a power cut would leave of the database and, at each
 * unlink or DeleteObject, asks that copy whether a row still names the blob.
 */
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openAdminBlobs, openAdminStore } from '../../../src/cli/admin-store.js';
import { INLINE_MAX_BYTES } from '../../../src/store/blobs/staging.js';
import type { S3BlobBackend } from '../../../src/store/blobs/s3.js';
import { collectBlobGarbage } from '../../../src/store/ops/blob-files.js';
import { checkConsistency } from '../../../src/store/ops/consistency-check.js';
import { purge } from '../../../src/store/ops/tree.js';
import type { StoreSession } from '../../../src/store-client/index.js';
import { groupAdmin, call, dataOf, ALL_NODE_PERMISSIONS, type GroupAdmin } from '../../helpers/groups.js';
import { installPowerLossWitness, type PowerLossWitness } from '../../helpers/power-loss.js';
import { freshS3Bucket, S3RVER_CREDENTIALS } from '../../helpers/s3-server.js';
import { blobHashOf, createFolder, createSeeder, nodeRow, people, uploadFile, type Seeder } from '../../helpers/seed.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';

let counter = 0;
/** Distinct content past the inline limit: a blob file (or object) of its own. */
const bigContent = (label: string): Buffer => Buffer.concat([Buffer.from(`${label} ${(counter += 1)} `), Buffer.alloc(INLINE_MAX_BYTES + 1024, counter % 251)]);

interface Harness {
  store: TestStore;
  seeder: Seeder;
  witness: PowerLossWitness;
}

async function startWatched(flags: Record<string, unknown> = {}): Promise<Harness> {
  const store = await startTestStore({ storage: 'sqlite', flags });
  const seeder = await createSeeder(store);
  const blobDir = store.ctx.blobs.kind === 'local' ? path.join(store.dataDir, 'blobs') : undefined;
  const witness = await installPowerLossWitness(path.join(store.dataDir, 'driveway.sqlite'), blobDir);
  if (store.ctx.blobs.kind === 's3') witness.watchS3((store.ctx.blobs as S3BlobBackend).client);
  return { store, seeder, witness };
}

async function stopWatched(h: Partial<Harness>): Promise<void> {
  await h.witness?.uninstall();
  await h.seeder?.client.close();
  await h.store?.close();
}

/** The witness saw `hashes` removed, each after the database stopped naming it on disk. */
function expectRemovedAfterDurable(witness: PowerLossWitness, hashes: string[]): void {
  const removed = witness.removals.filter((r) => hashes.includes(r.hash));
  expect(removed.map((r) => r.hash).sort()).toEqual([...hashes].sort());
  expect(removed.filter((r) => r.stillNamed).map((r) => r.hash)).toEqual([]);
}

describe('the local blob folder on SQLite', () => {
  let h: Harness;
  let ga: GroupAdmin;
  let person: ReturnType<typeof people>;

  beforeAll(async () => {
    h = await startWatched({ 'store.blobs.gcGraceSec': 0 });
    ga = groupAdmin(h.seeder.client, h.seeder.admin);
    person = people(h.seeder);
  });
  afterAll(() => stopWatched(h));

  it('unlinks a file deleted for good from trash only after that purge is on disk', async () => {
    const user = await person('Purger');
    const content = bigContent('purged');
    const file = await uploadFile(h.seeder.client, user.session, 'home', 'purged.bin', content);
    await h.seeder.client.remove(user.session, file);
    await h.seeder.client.remove(user.session, file);
    expectRemovedAfterDurable(h.witness, [blobHashOf(content)]);
  });

  it('unlinks every file of a folder deleted for good only after that purge is on disk', async () => {
    const user = await person('Folder Purger');
    const folder = await createFolder(h.seeder.client, user.session, 'home', 'doomed');
    const contents = [bigContent('a'), bigContent('b'), bigContent('c')];
    for (const [i, content] of contents.entries()) await uploadFile(h.seeder.client, user.session, folder, `f${i}.bin`, content);
    await h.seeder.client.remove(user.session, folder);
    await h.seeder.client.remove(user.session, folder);
    expectRemovedAfterDurable(h.witness, contents.map((c) => blobHashOf(c)));
  });

  it('unlinks a deleted user’s files only after the deletion is on disk', async () => {
    const user = await person('Leaver');
    const content = bigContent('leaver');
    await uploadFile(h.seeder.client, user.session, 'home', 'mine.bin', content);
    await dataOf(call(h.seeder.client, h.seeder.admin, 'DELETE', `/api/admin/users/${user.uuid}?confirm_delete=yes`));
    expectRemovedAfterDurable(h.witness, [blobHashOf(content)]);
  });

  it('unlinks a deleted group’s files only after the deletion is on disk', async () => {
    const group = await ga.group();
    const member = await person('Member');
    await ga.member(group, member.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    const content = bigContent('group');
    await uploadFile(h.seeder.client, member.session, `home:${group}`, 'minutes.bin', content);
    await dataOf(call(h.seeder.client, h.seeder.admin, 'DELETE', `/api/admin/groups/${group}?confirm_delete=yes`));
    expectRemovedAfterDurable(h.witness, [blobHashOf(content)]);
  });

  it('unlinks the copy of a rejected incoming share only after the rejection is on disk', async () => {
    const [sharer, recipient] = [await person('Sharer'), await person('Recipient')];
    const folder = await createFolder(h.seeder.client, sharer.session, 'home', 'offered');
    const content = bigContent('offered');
    await uploadFile(h.seeder.client, sharer.session, folder, 'offer.bin', content);
    expect((await call(h.seeder.client, sharer.session, 'POST', `/api/nodes/${folder}`, { share_copy_with: [recipient.uuid] })).status).toBe(204);
    // The sharer's own copy goes for good: the offered copy alone holds the blob now.
    await h.seeder.client.remove(sharer.session, folder);
    await h.seeder.client.remove(sharer.session, folder);
    expect(h.witness.removals.map((r) => r.hash)).not.toContain(blobHashOf(content));
    const [offer] = await dataOf<Array<{ uuid: string }>>(call(h.seeder.client, recipient.session, 'GET', '/api/user/pending_incoming'));
    await dataOf(call(h.seeder.client, recipient.session, 'PUT', '/api/user/pending_incoming', { uuid: offer?.uuid, action: 'reject' }));
    expectRemovedAfterDurable(h.witness, [blobHashOf(content)]);
  });

  /** A purge committed by a request not yet answered (so not yet fsynced): what a concurrent collector or check meets. */
  async function purgedNotAnswered(label: string): Promise<string> {
    const user = await person(label);
    const content = bigContent(label);
    const file = await uploadFile(h.seeder.client, user.session, 'home', 'gone.bin', content);
    await h.seeder.client.remove(user.session, file);
    const row = await nodeRow(h.store, file);
    await purge({ sql: h.store.ctx.storage.sql, now: h.store.clock.now(), callerUuid: user.uuid }, row!);
    return blobHashOf(content);
  }

  it('lets the collector remove a blob released by a commit not yet on disk only once it is', async () => {
    const hash = await purgedNotAnswered('Collected');
    await collectBlobGarbage(h.store.ctx);
    expectRemovedAfterDurable(h.witness, [hash]);
  });

  it('lets `driveway check --repair` beside the server remove an orphan only once its release is on disk', async () => {
    const hash = await purgedNotAnswered('Checked');
    const admin = await openAdminStore(h.store.config);
    try {
      const blobs = await openAdminBlobs(h.store.config, admin);
      const summary = await checkConsistency({ sql: admin.storage.sql, blobs, graceMs: 0, repair: true, now: () => Date.now() });
      expect(summary.findings.map((f) => f.kind)).toEqual(['orphan-blob']);
      await blobs.close();
    } finally {
      await admin.close();
    }
    expectRemovedAfterDurable(h.witness, [hash]);
  });
});

describe('retention on SQLite', () => {
  let h: Harness;
  let session: StoreSession;

  beforeAll(async () => {
    h = await startWatched({ 'store.retention.keepRevisions': 1, 'store.retention.trashDays': 1, 'store.retention.intervalSec': 1 });
    session = (await people(h.seeder)('Keeper')).session;
  });
  afterAll(() => stopWatched(h));

  it('unlinks pruned revisions and expired trash only after their removal is on disk', async () => {
    const [old, current, trashed] = [bigContent('old'), bigContent('current'), bigContent('trashed')];
    await uploadFile(h.seeder.client, session, 'home', 'kept.bin', old);
    await uploadFile(h.seeder.client, session, 'home', 'kept.bin', current);
    const file = await uploadFile(h.seeder.client, session, 'home', 'trashed.bin', trashed);
    await h.seeder.client.remove(session, file);
    h.store.clock.advance(2 * 86_400_000);
    await vi.waitFor(() => expect(h.witness.removals.length).toBe(2), { timeout: 15_000, interval: 100 });
    expectRemovedAfterDurable(h.witness, [blobHashOf(old), blobHashOf(trashed)]);
  });
});

describe('the S3 backend on SQLite', () => {
  let h: Harness;

  beforeAll(async () => {
    const s3 = await freshS3Bucket();
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    h = await startWatched({ 'store.blobs.backend': 's3', 'store.blobs.s3.bucket': s3.bucket, 'store.blobs.s3.endpoint': s3.endpoint, 'store.blobs.s3.forcePathStyle': true });
  });
  afterAll(() => stopWatched(h));

  it('deletes the object of a file deleted for good only after that purge is on disk', async () => {
    const user = await people(h.seeder)('Bucket User');
    const content = bigContent('object');
    const file = await uploadFile(h.seeder.client, user.session, 'home', 'object.bin', content);
    await h.seeder.client.remove(user.session, file);
    await h.seeder.client.remove(user.session, file);
    expectRemovedAfterDurable(h.witness, [blobHashOf(content)]);
  });
});
