/**
 * Zip archives attacked (docs/api.md "Zip archives"): a share recipient zipping what the owner
 * has since put in trash or a folder beside the share, other owners' nodes named in parallel
 * with one's own, entry names that try to leave the folder they are unpacked in, and downloads
 * given up halfway, which must close every blob file they opened (a store that leaks a file
 * handle per aborted archive runs out of them).
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fileVersion } from '../../src/store/ops/download.js';
import { planZip, zipStream } from '../../src/store/ops/zip.js';
import { authenticateFileAccessKey } from '../../src/store/sessions.js';
import { getNode, listChildren } from '../../src/store/storage/nodes.js';
import { localBlobs } from '../helpers/blobs.js';
import { dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../helpers/groups.js';
import { createFolder, topLevelRow, uploadFile, USER_PASSWORD, type Seeder, type SeededUser } from '../helpers/seed.js';
import { postAuth } from '../helpers/user-api.js';
import { as, fetchRaw } from '../helpers/sharing.js';
import { MiB, patternBytes } from '../helpers/stream-helpers.js';
import type { TestStore } from '../helpers/start-store.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let owner: SeededUser;
let reader: SeededUser;
let stranger: SeededUser;
const tmp = makeTmpDir('driveway-zip-attacks-');

beforeAll(async () => {
  ({ store, seeder, ga } = await startGroupStore());
  owner = await seeder.user('Olga Owner');
  reader = await seeder.user('Rita Reader');
  stranger = await seeder.user('Sam Stranger');
});

afterAll(async () => {
  await stopGroupStore({ seeder, store });
  tmp.remove();
});

const zipPath = (who: SeededUser, nodes: readonly string[]): string =>
  `/resources/auth/zip/${encodeURIComponent(who.session.fileAccessKey)}/a.zip?${nodes.map((n) => `node=${encodeURIComponent(n)}`).join('&')}`;

/** Blob files (under the local backend's folder) this process holds open. */
function openBlobFiles(): string[] {
  const blobDir = localBlobs(store).blobDir;
  const open: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(blobDir)) open.push(target);
    } catch {
      // closed meanwhile
    }
  }
  return open;
}

async function settled(check: () => boolean, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  while (!check() && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
}

describe('what a zip may hold', () => {
  it('gives a share recipient the shared folder, nothing once the owner trashed it, nothing beside it', async () => {
    const shared = await createFolder(seeder.client, owner.session, 'home', 'Shared out');
    await uploadFile(seeder.client, owner.session, shared, 'ok.txt', 'shared bytes');
    const beside = await createFolder(seeder.client, owner.session, 'home', 'Kept back');
    await uploadFile(seeder.client, owner.session, beside, 'secret.txt', 'not shared');
    await dataOf(as(seeder.client, owner, 'POST', `/api/nodes/${shared}/shares`, { type: 'private', recipients: [reader.uuid] }));
    const first = await fetchRaw(store, zipPath(reader, [shared]));
    expect(first.status).toBe(200);
    // Other nodes named beside one the caller may read, in parallel: refused whole, before a byte.
    const answers = await Promise.all([
      fetchRaw(store, zipPath(reader, [shared, beside])),
      fetchRaw(store, zipPath(stranger, [shared])),
      fetchRaw(store, zipPath(reader, [beside, shared])),
    ]);
    for (const res of answers) {
      expect(res.status).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'not_found' });
    }
    expect((await as(seeder.client, owner, 'DELETE', `/api/nodes/${shared}`)).status).toBe(204);
    const trashed = await fetchRaw(store, zipPath(reader, [shared]));
    expect(trashed.status).toBe(404);
    expect(trashed.json()).toMatchObject({ status: 'error', code: 'not_found' });
  });

  it('refuses groups’ and organizations’ nodes to outsiders (404) and to a member without download (403), in parallel', async () => {
    const group = await ga.group('Zip team');
    await ga.member(group, reader.uuid, { node_permissions: ['read'] });
    await ga.organization('zip-org');
    const orgGroup = await ga.group('Zip org team', { orgId: 'zip-org' });
    const home = (await topLevelRow(store, group, 'home')).uuid;
    const trash = (await topLevelRow(store, group, 'trash')).uuid;
    const orgHome = (await topLevelRow(store, orgGroup, 'home')).uuid;
    const folder = await createFolder(seeder.client, seeder.admin, home, 'Team only');
    const [member, ...outsiders] = await Promise.all([
      fetchRaw(store, zipPath(reader, [folder])),
      fetchRaw(store, zipPath(reader, [orgHome])),
      ...[[home], [folder], [trash], [`home:${group}`], [orgHome], [folder, home, trash, orgHome]].map((nodes) => fetchRaw(store, zipPath(stranger, nodes))),
    ]);
    expect(member?.status).toBe(403);
    expect(member?.json()).toMatchObject({ status: 'error', code: 'forbidden' });
    for (const res of outsiders) {
      expect(res.status).toBe(404);
      expect(res.json()).toMatchObject({ status: 'error', code: 'not_found' });
    }
  });

  it('keeps every entry inside the folder it is unpacked in, whatever the names', async () => {
    const root = await createFolder(seeder.client, owner.session, 'home', 'Tricky');
    const names = ['..', '...', 'C:evil.txt', 'back\\slash.txt', ' lead.txt', `${'x'.repeat(250)}.txt`];
    let made = 0;
    for (const name of names) made += await createFolder(seeder.client, owner.session, root, name).then(() => 1, () => 0);
    expect(made).toBeGreaterThan(2);
    await uploadFile(seeder.client, owner.session, root, 'plain.txt', 'plain');
    const res = await fetchRaw(store, zipPath(owner, [root]));
    expect(res.status).toBe(200);
    const file = path.join(tmp.dir, 'tricky.zip');
    writeFileSync(file, res.body);
    const listed = execFileSync('unzip', ['-Z1', file], { encoding: 'utf8' }).trim().split('\n');
    for (const entry of listed) {
      expect(entry.startsWith('Tricky/')).toBe(true);
      expect(entry.split('/').some((s) => s === '..' || s === '.')).toBe(false);
      expect(entry).not.toMatch(/\\|\0|^[A-Za-z]:|^\//);
    }
  });
});

describe('a zip asked with the key of an app password\'s session or of the web app\'s bridge token', () => {
  /** The file access key of a session opened with an app password of `who` (POST /auth, as the apps sign in). */
  async function appPasswordKey(who: SeededUser): Promise<string> {
    const made = await dataOf<{ password: string }>(as(seeder.client, who, 'POST', '/api/user/app_passwords', { name: 'phone' }));
    const signedIn = await postAuth(seeder.client, { username: who.email, password: made.password });
    return (signedIn.body as { fileaccesskey: string }).fileaccesskey;
  }

  /** The file access key the web app reads with its bridge token (cookie sign-in, POST /api/session/bridge_token, GET /api/session). */
  async function bridgeTokenKey(who: SeededUser): Promise<string> {
    const csrf = { 'x-driveway-csrf': '1', 'content-type': 'application/json', origin: store.url };
    const signIn = await request(`${store.url}/api/session`, { method: 'POST', headers: csrf, body: JSON.stringify({ username: who.email, password: USER_PASSWORD }) });
    await signIn.body.dump();
    const cookie = String(signIn.headers['set-cookie']).split(';')[0] ?? '';
    const minted = await request(`${store.url}/api/session/bridge_token`, { method: 'POST', headers: { ...csrf, cookie } });
    const token = ((await minted.body.json()) as { data: { token: string } }).data.token;
    const session = await request(`${store.url}/api/session`, { headers: { authorization: `Bearer ${token}` } });
    return ((await session.body.json()) as { data: { fileaccesskey: string } }).data.fileaccesskey;
  }

  it('refuses other users\', groups\' and organizations\' nodes and top-level folders in parallel (404), streaming nothing', async () => {
    const group = await ga.group('Zip key team');
    await ga.organization('zip-key-org');
    const orgGroup = await ga.group('Zip key org team', { orgId: 'zip-key-org' });
    const strangersFolder = await createFolder(seeder.client, stranger.session, 'home', 'Stranger only');
    await uploadFile(seeder.client, stranger.session, strangersFolder, 'private.txt', 'the stranger\'s bytes');
    const groupFolder = await createFolder(seeder.client, seeder.admin, `home:${group}`, 'Team only');
    const mine = await createFolder(seeder.client, reader.session, 'home', 'Mine to zip');
    const foreign = [
      [strangersFolder], [`home:${stranger.uuid}`], [`trash:${stranger.uuid}`], [stranger.uuid],
      [groupFolder], [`home:${group}`], [group], [`home:${orgGroup}`], [orgGroup],
      [mine, strangersFolder], [`home:${orgGroup}`, mine],
    ];
    const keys = await Promise.all([appPasswordKey(reader), bridgeTokenKey(reader)]);
    const zipWith = (key: string, nodes: readonly string[]) =>
      fetchRaw(store, `/resources/auth/zip/${encodeURIComponent(key)}/a.zip?${nodes.map((n) => `node=${encodeURIComponent(n)}`).join('&')}`);
    const answers = await Promise.all(keys.flatMap((key) => foreign.map((nodes) => zipWith(key, nodes))));
    for (const [i, res] of answers.entries()) {
      expect({ i, status: res.status, type: res.headers['content-type'], body: res.json() }).toEqual({
        i, status: 404, type: expect.stringMatching(/^application\/json/), body: { status: 'error', code: 'not_found', msg: expect.any(String) },
      });
    }
    // The same keys zip the caller's own folder.
    for (const key of keys) expect((await zipWith(key, [mine])).status).toBe(200);
  });
});

describe('a zip download given up', () => {
  it('closes the blob file of every archive aborted halfway (in parallel)', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', 'Big');
    for (let i = 0; i < 3; i += 1) await uploadFile(seeder.client, owner.session, folder, `part${i}.bin`, patternBytes(i + 1, 4 * MiB));
    expect(openBlobFiles()).toEqual([]);
    const bodies = await Promise.all(
      Array.from({ length: 8 }, async () => {
        const res = await request(store.url + zipPath(owner, [folder]), { reset: true, highWaterMark: 1024 });
        expect(res.statusCode).toBe(200);
        await new Promise((r) => res.body.once('readable', r));
        return res.body;
      }),
    );
    // Held back by the clients: the files being read are open now.
    await settled(() => openBlobFiles().length > 0);
    expect(openBlobFiles().length).toBeGreaterThan(0);
    for (const body of bodies) body.destroy();
    await settled(() => openBlobFiles().length === 0);
    expect(openBlobFiles()).toEqual([]);
  });

  it('closes a file opened after the client went away (the revision still being looked up then)', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', 'Racy');
    const file = await uploadFile(seeder.client, owner.session, folder, 'slow.bin', patternBytes(9, 2 * MiB));
    const { ctx } = store;
    const caller = await authenticateFileAccessKey(ctx.storage.sql, ctx.clock, owner.session.fileAccessKey);
    const node = await getNode(ctx.storage.sql, file);
    if (!caller || !node) throw new Error('seeded rows missing');
    const items = await planZip([node], (f) => listChildren(ctx.storage.sql, f.uuid));
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let looked = false;
    const out = zipStream(ctx, items, async (f) => {
      looked = true;
      await gate;
      return fileVersion(ctx, caller, f.uuid, String(f.revision));
    });
    out.resume();
    await settled(() => looked);
    expect(looked).toBe(true);
    out.destroy();
    release();
    await new Promise((r) => setTimeout(r, 300));
    expect(openBlobFiles()).toEqual([]);
  });
});
