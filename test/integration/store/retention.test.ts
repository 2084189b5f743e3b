/**
 * Retention (docs/operations.md "Retention", store/ops/retention.ts) on a real store: keeping the
 * newest N revisions (never the current one), the days rule against the store's ManualClock, both
 * rules together, trash expiry deleting for good as the owner's own DELETE in trash does, an
 * organization's settings overriding the global ones for its users and groups, the organization
 * API's validation, a dry run and a prune with nothing to do changing nothing, and the store's
 * background job. After each prune disk_used equals the bytes of the revisions still stored,
 * blob reference counts are exact, and blobs nothing refers to any more are gone.
 */
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LATEST_VERSION, nodeId, type StoreSession } from '../../../src/store-client/index.js';
import { checkConsistency } from '../../../src/store/ops/consistency-check.js';
import { applyRetention, type PruneReport, type RetentionPages, type RetentionSettings } from '../../../src/store/ops/retention.js';
import { openDatabase } from '../../../src/store/storage/dialects/sqlite-open.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { makeTmpDir } from '../../helpers/tmp-dir.js';
import { blobHashOf, blobInBackend, createFolder, createSeeder, entryNamed, nodeRow, people, readBlobRefs, readDiskUsed, uploadFile, USER_PASSWORD, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { ALL_NODE_PERMISSIONS, call, dataOf, groupAdmin, readGroupUsage, type GroupAdmin } from '../../helpers/groups.js';

const DAY = 86_400_000;
const NONE: RetentionSettings = { keepRevisions: 0, keepRevisionDays: 0, trashDays: 0 };

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let person: (role: string) => Promise<SeededUser>;

beforeAll(async () => {
  store = await startTestStore();
  seeder = await createSeeder(store);
  ga = groupAdmin(seeder.client, seeder.admin);
  person = people(seeder);
});

afterAll(async () => {
  await seeder?.client.close();
  await store?.close();
});

/** Distinct content of `size` bytes per call (above 64 KiB it is a blob in the backend, not a row). */
let made = 0;
function content(size: number): Buffer {
  made += 1;
  const buffer = Buffer.alloc(size, made % 251);
  buffer.writeUInt32BE(made, 0);
  return buffer;
}

const BIG = 70 * 1024;

function prune(settings: Partial<RetentionSettings>, dryRun = false, pages?: RetentionPages): Promise<PruneReport> {
  const { ctx } = store;
  return applyRetention({ sql: ctx.storage.sql, blobs: ctx.blobs, log: ctx.log, settings: { ...NONE, ...settings } }, { now: store.clock.now(), dryRun, ...(pages ? { pages } : {}) });
}

async function revisionsOf(file: string): Promise<number[]> {
  const rows = await store.ctx.storage.sql.all<{ revision: number }>('SELECT revision FROM revisions WHERE node_uuid = ? ORDER BY revision', [file]);
  return rows.map((r) => Number(r.revision));
}

/** Bytes of every revision an owner's nodes hold: what disk_used must equal. */
async function storedBytes(ownerUuid: string): Promise<number> {
  const row = await store.ctx.storage.sql.get<{ bytes: number }>(
    'SELECT COALESCE(SUM(r.size), 0) AS bytes FROM revisions r JOIN nodes n ON n.uuid = r.node_uuid WHERE n.owner_uuid = ?',
    [ownerUuid],
  );
  return Number(row?.bytes ?? 0);
}

/** Uploads each content as the next revision of `name` in `folder`; returns the file's id. */
async function revisions(s: StoreSession, folder: string, name: string, contents: Buffer[]): Promise<string> {
  let id = '';
  for (const c of contents) id = await uploadFile(seeder.client, s, folder, name, c);
  return id;
}

async function downloadStatus(s: StoreSession, file: string, version: number | string): Promise<number> {
  const res = await request(store.url + seeder.client.downloadPath(s, nodeId(file), 'f.bin', version));
  await res.body.dump();
  return res.statusCode;
}

/** Everything retention could change, to compare before and after. */
async function snapshot(): Promise<unknown> {
  const sql = store.ctx.storage.sql;
  return {
    revisions: await sql.all('SELECT node_uuid, revision, blob_hash, size FROM revisions ORDER BY node_uuid, revision'),
    nodes: await sql.all('SELECT uuid, parent_uuid, name, updated FROM nodes ORDER BY uuid'),
    blobs: await sql.all('SELECT hash, refs FROM blobs ORDER BY hash'),
    users: await sql.all('SELECT uuid, disk_used FROM users ORDER BY uuid'),
    groups: await sql.all('SELECT uuid, disk_used FROM groups ORDER BY uuid'),
  };
}

/** A fresh session: the days tests move the clock past the session lifetime. */
const relogin = (user: SeededUser): Promise<StoreSession> => seeder.client.login(user.email, USER_PASSWORD);

/** What `driveway check` would report on the store now (nothing when usage, references and blobs are exact). */
async function consistencyFindings(): Promise<string[]> {
  const findings: string[] = [];
  await checkConsistency({
    sql: store.ctx.storage.sql,
    blobs: store.ctx.blobs,
    graceMs: 3_600_000,
    repair: false,
    now: () => store.clock.now(),
    onFinding: (finding) => findings.push(`${finding.kind}: ${finding.text}`),
  });
  return findings;
}

/** A user of organization `org`, logged in. */
async function userInOrg(org: string, name: string): Promise<SeededUser> {
  const email = `${name.toLowerCase().replace(/[^a-z]+/g, '.')}@example.test`;
  const uuid = (await seeder.client.createUser(seeder.admin, { fullname: name, email, password: USER_PASSWORD }, org)) as string;
  return { uuid, email, session: await seeder.client.login(email, USER_PASSWORD) };
}

/** A new admin session (and the helpers using it) after the clock moved past the old one's lifetime. */
async function renewAdmin(): Promise<void> {
  await seeder.client.close();
  seeder = await createSeeder(store);
  ga = groupAdmin(seeder.client, seeder.admin);
  person = people(seeder);
}

describe('keepRevisions', () => {
  it('keeps the newest N revisions of each file, the current one included, and frees exactly what it removes', async () => {
    const alice = await person('Keeper');
    const sizes = [BIG, 1000, BIG + 5, 2000];
    const versions = sizes.map(content);
    const file = await revisions(alice.session, 'home', 'report.bin', versions);
    // Revision 1's bytes are also another file's: its blob must stay, one reference fewer.
    const twin = await uploadFile(seeder.client, alice.session, 'home', 'twin.bin', versions[0] as Buffer);
    const single = await uploadFile(seeder.client, alice.session, 'home', 'single.bin', content(3000));
    const hash1 = blobHashOf(versions[0] as Buffer);
    const hash3 = blobHashOf(versions[2] as Buffer);
    expect(await readBlobRefs(store, hash1)).toBe(2);
    const usedBefore = await readDiskUsed(store, alice.uuid);

    const report = await prune({ keepRevisions: 2 });

    expect(await revisionsOf(file)).toEqual([3, 4]);
    expect(await revisionsOf(single)).toEqual([1]);
    expect(await revisionsOf(twin)).toEqual([1]);
    expect(await readDiskUsed(store, alice.uuid)).toBe(usedBefore - (sizes[0] as number) - (sizes[1] as number));
    expect(await readDiskUsed(store, alice.uuid)).toBe(await storedBytes(alice.uuid));
    expect(report.owners.find((o) => o.ownerUuid === alice.uuid)).toMatchObject({ revisions: 2, trashItems: 0, bytesFreed: (sizes[0] as number) + (sizes[1] as number) });
    expect(await readBlobRefs(store, hash1)).toBe(1);
    expect(await blobInBackend(store, hash1)).toBe(true);
    expect(await blobInBackend(store, hash3)).toBe(true);
    // The API shows the file as before, and the revisions kept are still served; the removed ones are not.
    expect(await entryNamed(seeder.client, alice.session, 'home', 'report.bin')).toMatchObject({ revision: 4, sizeBytes: sizes[3] });
    expect(await downloadStatus(alice.session, file, 3)).toBe(200);
    expect(await downloadStatus(alice.session, file, LATEST_VERSION)).toBe(200);
    expect(await downloadStatus(alice.session, file, 1)).toBe(404);

    // keepRevisions 1: only the current one stays; revision 3's blob (only there) leaves the backend.
    await prune({ keepRevisions: 1 });
    expect(await revisionsOf(file)).toEqual([4]);
    expect(await readBlobRefs(store, hash3)).toBe(0);
    expect(await blobInBackend(store, hash3)).toBe(false);
    expect(await readDiskUsed(store, alice.uuid)).toBe(await storedBytes(alice.uuid));

    // A new revision afterwards counts as usual; the next prune removes the one before it.
    await uploadFile(seeder.client, alice.session, 'home', 'report.bin', content(10));
    await prune({ keepRevisions: 1 });
    expect(await revisionsOf(file)).toEqual([5]);
    expect(await readDiskUsed(store, alice.uuid)).toBe(await storedBytes(alice.uuid));
  });

  it('prunes the revisions of files in trash and in a group too, charging the group', async () => {
    const bob = await person('Grouper');
    const group = await ga.group('Retention team');
    await ga.member(group, bob.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    const inGroup = await revisions(bob.session, `home:${group}`, 'plan.bin', [content(BIG), content(500), content(600)]);
    const trashed = await revisions(bob.session, 'home', 'old.bin', [content(700), content(800)]);
    expect((await call(seeder.client, bob.session, 'DELETE', `/api/nodes/${trashed}`)).status).toBe(204);

    await prune({ keepRevisions: 1 });

    expect(await revisionsOf(inGroup)).toEqual([3]);
    expect(await revisionsOf(trashed)).toEqual([2]);
    expect((await readGroupUsage(store, group))?.disk_used).toBe(600);
    expect(await readDiskUsed(store, bob.uuid)).toBe(800);
  });
});

describe('organization settings', () => {
  it('are validated by the organization API and shown in its record (null: the global value)', async () => {
    const created = await dataOf(call(seeder.client, seeder.admin, 'POST', '/api/admin/organizations', { id: 'ret-tight', name: 'Tight', allow_unlimited_quota: true, keep_revisions: 1 }));
    expect(created).toMatchObject({ keep_revisions: 1, keep_revision_days: null, trash_days: null });
    for (const bad of [{ keep_revisions: -1 }, { keep_revision_days: 1.5 }, { trash_days: '3' }, { keep_revisions: 2_000_000 }]) {
      const res = await call(seeder.client, seeder.admin, 'PUT', '/api/admin/organizations/ret-tight', bad);
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({ status: 'error', msg: expect.stringMatching(new RegExp(`^${Object.keys(bad)[0]}: `)) });
    }
    expect(await dataOf(call(seeder.client, seeder.admin, 'GET', '/api/admin/organizations/ret-tight'))).toMatchObject({ keep_revisions: 1, trash_days: null });
    const updated = await dataOf(call(seeder.client, seeder.admin, 'PUT', '/api/admin/organizations/ret-tight', { trash_days: 5, keep_revision_days: 0 }));
    expect(updated).toMatchObject({ keep_revisions: 1, keep_revision_days: 0, trash_days: 5 });
    expect(await dataOf(call(seeder.client, seeder.admin, 'PUT', '/api/admin/organizations/ret-tight', { trash_days: null, name: 'Tight Ltd' }))).toMatchObject({
      name: 'Tight Ltd',
      keep_revisions: 1,
      trash_days: null,
    });
  });

  it("override the global settings for the organization's users and groups", async () => {
    await dataOf(call(seeder.client, seeder.admin, 'POST', '/api/admin/organizations', { id: 'ret-all', name: 'Keeps all', allow_unlimited_quota: true, keep_revisions: 0 }));
    const tight = await userInOrg('ret-tight', 'Tight User');
    const loose = await userInOrg('ret-all', 'Loose User');
    const plain = await person('Plain');
    const tightGroup = await ga.group('Tight team', { orgId: 'ret-tight' });
    await ga.member(tightGroup, tight.uuid, { node_permissions: ALL_NODE_PERMISSIONS });
    const tightFile = await revisions(tight.session, 'home', 'a.bin', [content(10), content(20), content(30)]);
    const groupFile = await revisions(tight.session, `home:${tightGroup}`, 'g.bin', [content(40), content(50)]);
    const looseFile = await revisions(loose.session, 'home', 'b.bin', [content(10), content(20), content(30)]);
    const plainFile = await revisions(plain.session, 'home', 'c.bin', [content(10), content(20), content(30)]);

    // Global keep 2: ret-tight keeps 1 (its own), ret-all keeps all (its own 0), the default organization 2.
    await prune({ keepRevisions: 2 });
    expect(await revisionsOf(tightFile)).toEqual([3]);
    expect(await revisionsOf(groupFile)).toEqual([2]);
    expect(await revisionsOf(looseFile)).toEqual([1, 2, 3]);
    expect(await revisionsOf(plainFile)).toEqual([2, 3]);
    for (const u of [tight, loose, plain]) expect(await readDiskUsed(store, u.uuid)).toBe(await storedBytes(u.uuid));
    expect((await readGroupUsage(store, tightGroup))?.disk_used).toBe(await storedBytes(tightGroup));

    // Global settings keeping everything: the organization's own still applies.
    const next = await revisions(tight.session, 'home', 'a.bin', [content(60)]);
    expect(next).toBe(tightFile);
    await prune({});
    expect(await revisionsOf(tightFile)).toEqual([4]);
    expect(await revisionsOf(plainFile)).toEqual([2, 3]);
  });
});

describe('nothing to do, and a dry run', () => {
  it('changes nothing when every rule keeps everything', async () => {
    const frank = await person('Nothing');
    await revisions(frank.session, 'home', 'n.bin', [content(BIG), content(11)]);
    const before = await snapshot();
    const report = await prune({});
    // ret-tight's own keep_revisions 1 still applies to its users; nobody else's rows change.
    expect(report.owners.every((o) => o.settings.keepRevisions > 0 || o.settings.keepRevisionDays > 0 || o.settings.trashDays > 0)).toBe(true);
    expect(await snapshot()).toEqual(before);
  });

  it('a dry run reports what a prune then removes, and changes nothing', async () => {
    const gina = await person('Dry');
    const file = await revisions(gina.session, 'home', 'd.bin', [content(BIG), content(12), content(13)]);
    const before = await snapshot();
    const dry = await prune({ keepRevisions: 1 }, true);
    expect(dry.dryRun).toBe(true);
    expect(await snapshot()).toEqual(before);
    expect(await revisionsOf(file)).toEqual([1, 2, 3]);
    const real = await prune({ keepRevisions: 1 });
    expect({ revisions: real.revisions, trashItems: real.trashItems, bytesFreed: real.bytesFreed }).toEqual({
      revisions: dry.revisions,
      trashItems: dry.trashItems,
      bytesFreed: dry.bytesFreed,
    });
    expect(dry.owners.find((o) => o.ownerUuid === gina.uuid)).toMatchObject({ revisions: 2, bytesFreed: BIG + 12 });
    expect(await revisionsOf(file)).toEqual([3]);
    // Run again: nothing left to remove.
    const again = await prune({ keepRevisions: 1 });
    expect(again.revisions).toBe(0);
  });
});

describe('keepRevisionDays (the store clock)', () => {
  it('keeps revisions younger than D days and the current one, however old', async () => {
    await renewAdmin();
    const carol = await person('Dayer');
    const file = await revisions(carol.session, 'home', 'diary.bin', [content(100)]);
    store.clock.advance(8 * DAY);
    let s = await relogin(carol);
    await revisions(s, 'home', 'diary.bin', [content(200), content(300)]);
    store.clock.advance(DAY);

    await prune({ keepRevisionDays: 7 });
    expect(await revisionsOf(file)).toEqual([2, 3]);
    expect(await readDiskUsed(store, carol.uuid)).toBe(500);

    // Seven more days: revision 2 is old now, revision 3 too, but it is the current one.
    store.clock.advance(7 * DAY);
    s = await relogin(carol);
    await prune({ keepRevisionDays: 7 });
    expect(await revisionsOf(file)).toEqual([3]);
    expect(await readDiskUsed(store, carol.uuid)).toBe(300);
    expect(await entryNamed(seeder.client, s, 'home', 'diary.bin')).toMatchObject({ revision: 3, sizeBytes: 300 });
  });

  it('with both rules, removes a revision only when both let it go', async () => {
    await renewAdmin();
    const dave = await person('Twoer');
    const file = await revisions(dave.session, 'home', 'both.bin', [content(11), content(12), content(13), content(14)]);
    store.clock.advance(10 * DAY);
    const s = await relogin(dave);
    await revisions(s, 'home', 'both.bin', [content(15)]);

    // Days alone would remove 1-4 (old, not current); keep 3 alone 1 and 2; both: 1 and 2.
    await prune({ keepRevisions: 3, keepRevisionDays: 7 });
    expect(await revisionsOf(file)).toEqual([3, 4, 5]);
    // Days alone would remove 3 and 4 (old); keep 2 alone only 3; both: 3.
    await prune({ keepRevisions: 2, keepRevisionDays: 7 });
    expect(await revisionsOf(file)).toEqual([4, 5]);
    expect(await readDiskUsed(store, dave.uuid)).toBe(14 + 15);
  });
});

describe('trashDays', () => {
  it('deletes trash items moved there more than D days ago for good, freeing their quota and blobs', async () => {
    await renewAdmin();
    const erin = await person('Trasher');
    const old = await uploadFile(seeder.client, erin.session, 'home', 'old.bin', content(BIG));
    const oldBlob = (await store.ctx.storage.sql.get<{ blob_hash: string }>('SELECT blob_hash FROM revisions WHERE node_uuid = ?', [old]))?.blob_hash as string;
    const folder = await createFolder(seeder.client, erin.session, 'home', 'album');
    const inner = await revisions(erin.session, folder, 'photo.bin', [content(4000), content(5000)]);
    const restored = await uploadFile(seeder.client, erin.session, 'home', 'back.bin', content(600));
    for (const id of [old, folder, restored]) expect((await call(seeder.client, erin.session, 'DELETE', `/api/nodes/${id}`)).status).toBe(204);
    // Restored: out of trash again, so it never expires there.
    expect((await call(seeder.client, erin.session, 'POST', `/api/nodes/${restored}`, { move_to: 'home' })).status).toBe(204);
    store.clock.advance(20 * DAY);
    let s = await relogin(erin);
    const later = await uploadFile(seeder.client, s, 'home', 'later.bin', content(700));
    expect((await call(seeder.client, s, 'DELETE', `/api/nodes/${later}`)).status).toBe(204);
    store.clock.advance(11 * DAY);
    s = await relogin(erin);
    const usedBefore = await readDiskUsed(store, erin.uuid);

    const dry = await prune({ trashDays: 30 }, true);
    const report = await prune({ trashDays: 30 });

    expect(report.owners.find((o) => o.ownerUuid === erin.uuid)).toMatchObject({ trashItems: 2, revisions: 0, bytesFreed: BIG + 4000 + 5000 });
    expect(dry.owners.find((o) => o.ownerUuid === erin.uuid)).toMatchObject({ trashItems: 2, bytesFreed: BIG + 4000 + 5000 });
    for (const id of [old, folder, inner]) expect(await nodeRow(store, id)).toBeUndefined();
    expect(await revisionsOf(inner)).toEqual([]);
    expect(await readDiskUsed(store, erin.uuid)).toBe(usedBefore - BIG - 4000 - 5000);
    expect(await readDiskUsed(store, erin.uuid)).toBe(await storedBytes(erin.uuid));
    expect(await readBlobRefs(store, oldBlob)).toBe(0);
    expect(await blobInBackend(store, oldBlob)).toBe(false);
    const trash = (await seeder.client.listFolder(s, nodeId('trash'))).map((e) => e.name);
    expect(trash).toEqual(['later.bin']);
    expect((await seeder.client.listFolder(s, nodeId('home'))).map((e) => e.name)).toContain('back.bin');
  });
});

describe('several prunes at once', () => {
  it('release each reference once: usage, reference counts and blobs stay exact (driveway check finds nothing)', async () => {
    await renewAdmin();
    const users = await Promise.all([person('Racer'), person('Racer')]);
    const files: string[] = [];
    for (const user of users) {
      for (let f = 0; f < 3; f += 1) {
        // Shared bytes across the users' revisions, so two owners release the same blob's references.
        files.push(await revisions(user.session, 'home', `race${f}.bin`, [content(BIG), Buffer.from(`shared ${f}`.padEnd(500, '.')), content(300 + f)]));
      }
    }
    const reports = await Promise.all([prune({ keepRevisions: 1 }), prune({ keepRevisions: 1 }), prune({ keepRevisions: 1 })]);
    for (const file of files) expect(await revisionsOf(file)).toEqual([3]);
    const removed = reports.flatMap((r) => r.owners.filter((o) => users.some((u) => u.uuid === o.ownerUuid))).reduce((sum, o) => sum + o.revisions, 0);
    expect(removed).toBe(12);
    for (const user of users) expect(await readDiskUsed(store, user.uuid)).toBe(await storedBytes(user.uuid));
    expect(await consistencyFindings()).toEqual([]);
  });
});

describe('past a page', () => {
  it('reads owners, files and trash items page by page and removes revisions batch by batch (pages of 2 here): all of it, the dry run alike', async () => {
    await renewAdmin();
    await dataOf(call(seeder.client, seeder.admin, 'POST', '/api/admin/organizations', { id: 'ret-paged', name: 'Paged', allow_unlimited_quota: true, keep_revisions: 1, trash_days: 10 }));
    const users = [await userInOrg('ret-paged', 'Paged One'), await userInOrg('ret-paged', 'Paged Two'), await userInOrg('ret-paged', 'Paged Three')];
    const files: string[] = [];
    const trashed: string[] = [];
    for (const user of users) {
      // 5 files of 3 revisions (3 ranges of 2 files, 2 batches of 2 revisions in each full one), 5 trash items (3 pages).
      for (let f = 0; f < 5; f += 1) files.push(await revisions(user.session, 'home', `p${f}.bin`, [content(f === 0 ? BIG : 100 + f), content(200 + f), content(300 + f)]));
      for (let t = 0; t < 5; t += 1) {
        const item = await uploadFile(seeder.client, user.session, 'home', `t${t}.bin`, content(t === 0 ? BIG : 400 + t));
        expect((await call(seeder.client, user.session, 'DELETE', `/api/nodes/${item}`)).status).toBe(204);
        trashed.push(item);
      }
    }
    store.clock.advance(11 * DAY);
    const owners = Number((await store.ctx.storage.sql.get<{ n: number }>('SELECT (SELECT COUNT(*) FROM users) + (SELECT COUNT(*) FROM groups) AS n'))?.n);
    expect(owners).toBeGreaterThan(2);
    const pages: RetentionPages = { owners: 2, files: 2, revisions: 2, trash: 2 };

    const dry = await prune({}, true, pages);
    const report = await prune({}, false, pages);
    expect(dry.ownersChecked).toBe(owners);
    expect(report.ownersChecked).toBe(owners);
    for (const user of users) {
      const planned = dry.owners.find((o) => o.ownerUuid === user.uuid);
      expect(planned).toMatchObject({ revisions: 10, trashItems: 5 });
      expect(report.owners.find((o) => o.ownerUuid === user.uuid)).toMatchObject({ revisions: 10, trashItems: 5, bytesFreed: planned?.bytesFreed });
      expect(await readDiskUsed(store, user.uuid)).toBe(await storedBytes(user.uuid));
    }
    for (const file of files) expect(await revisionsOf(file)).toEqual([3]);
    for (const item of trashed) expect(await nodeRow(store, item)).toBeUndefined();
    expect(await consistencyFindings()).toEqual([]);
  });
});

describe('the background job', () => {
  it('applies store.retention every intervalSec while the store serves', async () => {
    const other = await startTestStore({ flags: { 'store.retention.keepRevisions': 1, 'store.retention.intervalSec': 1 } });
    const otherSeeder = await createSeeder(other);
    try {
      const user = await otherSeeder.user('Background User');
      let file = '';
      for (const c of [content(BIG), content(100), content(200)]) file = await uploadFile(otherSeeder.client, user.session, 'home', 'bg.bin', c);
      const deadline = Date.now() + 15_000;
      let used = await readDiskUsed(other, user.uuid);
      while (used !== 200 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        used = await readDiskUsed(other, user.uuid);
      }
      expect(used).toBe(200);
      const rows = await other.ctx.storage.sql.all<{ revision: number }>('SELECT revision FROM revisions WHERE node_uuid = ?', [file]);
      expect(rows.map((r) => Number(r.revision))).toEqual([3]);
    } finally {
      await otherSeeder.client.close();
      await other.close();
    }
  });
});

describe('migration 016', () => {
  it('dates what is in trash at the upgrade from the upgrade, and nothing outside trash', () => {
    const tmp = makeTmpDir('driveway-retention-migration-');
    const file = path.join(tmp.dir, 'driveway.sqlite');
    try {
      let db = openDatabase(file);
      // What a database from before 016 held: no trashed_at, no retention columns.
      db.exec(`ALTER TABLE nodes DROP COLUMN trashed_at; ALTER TABLE organizations DROP COLUMN keep_revisions;
        ALTER TABLE organizations DROP COLUMN keep_revision_days; ALTER TABLE organizations DROP COLUMN trash_days`);
      db.prepare('DELETE FROM schema_migrations WHERE version = 16').run();
      db.prepare("INSERT INTO users (uuid, username, email, fullname, password_hash, org_id, created, updated) VALUES ('u1', 'a@example.test', 'a@example.test', 'Old User', 'x', 'default', 1, 1)").run();
      const node = db.prepare("INSERT INTO nodes (uuid, owner_uuid, owner_type, parent_uuid, top_kind, name, type, created, updated) VALUES (?, 'u1', 'User', ?, ?, ?, 'Dir', 1, 1)");
      node.run('trash1', null, 'trash', 'trash');
      node.run('home1', null, 'home', 'home');
      node.run('in-trash', 'trash1', null, 'old folder');
      node.run('in-home', 'home1', null, 'kept folder');
      db.close();
      const before = Date.now();
      db = openDatabase(file);
      const rows = db.prepare("SELECT uuid, trashed_at FROM nodes WHERE owner_uuid = 'u1' ORDER BY uuid").all() as Array<{ uuid: string; trashed_at: number | null }>;
      const at = (uuid: string) => rows.find((r) => r.uuid === uuid)?.trashed_at;
      expect(at('in-trash')).toBeGreaterThanOrEqual(Math.floor(before / 1000) * 1000);
      expect(at('in-home')).toBeNull();
      expect(at('trash1')).toBeNull();
      expect(db.prepare("SELECT keep_revisions, keep_revision_days, trash_days FROM organizations WHERE id = 'default'").get()).toEqual({
        keep_revisions: null,
        keep_revision_days: null,
        trash_days: null,
      });
      db.close();
    } finally {
      tmp.remove();
    }
  });
});
