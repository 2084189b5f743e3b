/**
 * Share links (docs/extensions.md "Share links and private shares"): creating, listing and
 * removing public links and upload links, the share permissions that gate them on a group's
 * nodes, the real share counts in directory entries and the public_shares / private_shares
 * folders; and the links themselves as an anonymous client (curl) uses them: a public link
 * serves its file with Range and ETag, a folder as a listing, behind an optional password
 * (HTTP Basic, rate-limited) until it expires or is removed; an upload link takes anonymous
 * uploads into its folder and nothing else.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestStore } from '../../helpers/start-store.js';
import type { StoreSession } from '../../../src/store-client/index.js';
import { createFolder, readDiskUsed, nodeRow, letters, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { readCountRows, dataOf, startGroupStore, stopGroupStore, type GroupAdmin } from '../../helpers/groups.js';
import { as, basic, readChildNames, expectError, fetchRaw, readGroupDiskUsed, multipartFile, readText } from '../../helpers/sharing.js';

let store: TestStore;
let seeder: Seeder;
let ga: GroupAdmin;
let admin: StoreSession;
let owner: SeededUser;
let counter = 0;

beforeAll(async () => {
  ({ store, seeder, ga, admin } = await startGroupStore());
  owner = await seeder.user('Olive Owner');
});

afterAll(() => stopGroupStore({ seeder, store }));

const text = (label: string): string => `${label} #${(counter += 1)}`;

interface Link {
  share_uuid: string;
  token: string;
  url: string;
}

async function link(who: SeededUser, node: string, body: Record<string, unknown>): Promise<Link & Record<string, unknown>> {
  return dataOf(as(seeder.client, who, 'POST', `/api/nodes/${node}/shares`, body));
}

const upload = (path: string, name: string, content: string, headers: Record<string, string> = {}) => {
  const form = multipartFile(name, content);
  return fetchRaw(store, path, { method: 'POST', headers: { ...form.headers, ...headers }, body: form.body });
};

describe('a public link to a file', () => {
  it('is created with its token and URL shown once, and serves the bytes without a session', async () => {
    const content = text('public bytes 0123456789');
    const file = await uploadFile(seeder.client, owner.session, 'home', `flyer ${counter}.txt`, content);
    const created = await link(owner, file, { type: 'public' });
    expect(created).toEqual({
      share_uuid: expect.any(String),
      type: 'public',
      node_uuid: file,
      node_name: (await nodeRow(store, file))?.name,
      node_type: 'File',
      owner_type: 'User',
      owner_uuid: owner.uuid,
      creator_uuid: owner.uuid,
      created: expect.any(Number),
      expires: null,
      password_protected: false,
      token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      url: `${store.url}/public/${created.token}`,
    });
    // Only the token's hash is stored.
    const row = (await store.ctx.storage.sql.get<Record<string, unknown>>('SELECT * FROM shares WHERE uuid = ?', [created.share_uuid]))!;
    expect(JSON.stringify(row)).not.toContain(created.token);
    expect(row.token_hash).toMatch(/^[0-9a-f]{64}$/);
    // Listed without the token afterwards.
    const listed = await dataOf<Array<Record<string, unknown>>>(as(seeder.client, owner, 'GET', `/api/nodes/${file}/shares`));
    const { token: _token, url: _url, ...record } = created;
    expect(listed).toEqual([record]);

    const res = await fetchRaw(store, created.url);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe(content);
    expect(res.headers).toMatchObject({
      etag: `"${file}-1"`,
      'content-length': String(Buffer.byteLength(content)),
      'accept-ranges': 'bytes',
      'content-type': 'text/plain',
      'x-content-type-options': 'nosniff',
    });
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
  });

  it('honours Range, If-None-Match and HEAD, and follows new revisions', async () => {
    const content = 'abcdefghijklmnopqrstuvwxyz';
    const file = await uploadFile(seeder.client, owner.session, 'home', `alphabet ${(counter += 1)}.txt`, content);
    const { url } = await link(owner, file, { type: 'public' });
    const ranged = await fetchRaw(store, url, { headers: { range: 'bytes=2-5' } });
    expect({ status: ranged.status, body: ranged.body.toString(), range: ranged.headers['content-range'] }).toEqual({ status: 206, body: 'cdef', range: 'bytes 2-5/26' });
    expect((await fetchRaw(store, url, { headers: { range: 'bytes=40-' } })).status).toBe(416);
    const etag = (await fetchRaw(store, url)).headers.etag as string;
    const cached = await fetchRaw(store, url, { headers: { 'if-none-match': etag } });
    expect({ status: cached.status, length: cached.body.length }).toEqual({ status: 304, length: 0 });
    const head = await fetchRaw(store, url, { method: 'HEAD' });
    expect({ status: head.status, length: head.body.length, contentLength: head.headers['content-length'] }).toEqual({ status: 200, length: 0, contentLength: '26' });

    await uploadFile(seeder.client, owner.session, 'home', (await nodeRow(store, file))!.name, 'second revision');
    const fresh = await fetchRaw(store, url, { headers: { 'if-none-match': etag } });
    expect({ status: fresh.status, body: fresh.body.toString(), etag: fresh.headers.etag }).toEqual({ status: 200, body: 'second revision', etag: `"${file}-2"` });
  });

  it('with a password: 401 with a Basic challenge without or with a wrong one, the bytes with the right one (any username)', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `secret ${(counter += 1)}.txt`, 'classified');
    const created = await link(owner, file, { type: 'public', password: 'letmein' });
    expect(created.password_protected).toBe(true);
    const row = (await store.ctx.storage.sql.get<{ password_hash: string }>('SELECT password_hash FROM shares WHERE uuid = ?', [created.share_uuid]))!;
    expect(row.password_hash).not.toContain('letmein');

    const none = await fetchRaw(store, created.url);
    expect({ status: none.status, challenge: none.headers['www-authenticate'], body: none.json() }).toMatchObject({
      status: 401,
      challenge: expect.stringMatching(/^Basic realm=/),
      body: { status: 'error', code: 'unauthenticated' },
    });
    expect((await fetchRaw(store, created.url, { headers: basic('wrong') })).status).toBe(401);
    const right = await fetchRaw(store, created.url, { headers: basic('letmein', 'whoever') });
    expect({ status: right.status, body: right.body.toString() }).toEqual({ status: 200, body: 'classified' });
    // Never in the URL: a query string is no password.
    expect((await fetchRaw(store, `${created.url}?password=letmein`)).status).toBe(401);
  });

  it('rate-limits wrong passwords (429 with Retry-After, the right one too) until the window passes', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `guarded ${(counter += 1)}.txt`, 'guarded');
    const created = await link(owner, file, { type: 'public', password: 'correct horse' });
    for (let i = 0; i < store.config.store.loginMaxFailures; i += 1) expect((await fetchRaw(store, created.url, { headers: basic(`guess ${i}`) })).status).toBe(401);
    const blocked = await fetchRaw(store, created.url, { headers: basic('correct horse') });
    expect({ status: blocked.status, retry: Number(blocked.headers['retry-after']), code: (blocked.json() as { code: string }).code }).toEqual({
      status: 429,
      retry: expect.any(Number),
      code: 'rate_limited',
    });
    store.clock.advance(store.config.store.loginWindowSec * 1000 + 1000);
    expect((await fetchRaw(store, created.url, { headers: basic('correct horse') })).status).toBe(200);
  });

  it('expires: 410 link_expired from its expiry on; an expiry in the past is refused', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `brief ${(counter += 1)}.txt`, 'brief');
    const expires = store.clock.now() + 60_000;
    const created = await link(owner, file, { type: 'public', expires });
    expect(created.expires).toBe(expires);
    expect((await fetchRaw(store, created.url)).status).toBe(200);
    store.clock.advance(60_001);
    const expired = await fetchRaw(store, created.url);
    expect({ status: expired.status, body: expired.json() }).toEqual({ status: 410, body: { status: 'error', code: 'link_expired', msg: 'this link has expired' } });
    expectError(await as(seeder.client, owner, 'POST', `/api/nodes/${file}/shares`, { type: 'public', expires: store.clock.now() - 1 }), 400, 'invalid_request', 'expires: must be in the future');
  });

  it('is 404 once removed, and while its node is in trash (again served after a restore)', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `moving ${(counter += 1)}.txt`, 'moving');
    const created = await link(owner, file, { type: 'public' });
    await seeder.client.remove(owner.session, file as never);
    expect((await fetchRaw(store, created.url)).status).toBe(404);
    expect(await dataOf(as(seeder.client, owner, 'GET', '/api/nodes/public_shares/dirlist'))).not.toContainEqual(expect.objectContaining({ uuid: file }));
    expect((await as(seeder.client, owner, 'POST', `/api/nodes/${file}`, { move_to: 'home' })).status).toBe(204);
    expect((await fetchRaw(store, created.url)).status).toBe(200);
    expect(await dataOf(as(seeder.client, owner, 'DELETE', `/api/shares/${created.share_uuid}`))).toBeUndefined();
    const gone = await fetchRaw(store, created.url);
    expect({ status: gone.status, body: gone.json() }).toEqual({ status: 404, body: { status: 'error', code: 'not_found', msg: 'no such link' } });
    expect((await fetchRaw(store, '/public/not-a-token-at-all-but-long-enough')).status).toBe(404);
  });

  it('goes with its node when the node is purged', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `purged ${(counter += 1)}.txt`, 'purged');
    const created = await link(owner, file, { type: 'public' });
    await seeder.client.remove(owner.session, file as never);
    await seeder.client.remove(owner.session, file as never);
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE uuid = ?', created.share_uuid)).toBe(0);
  });
});

describe('a public link to a folder', () => {
  it('lists the folder as JSON and serves what lies below by path, never above', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', `Album ${(counter += 1)}`);
    const sub = await createFolder(seeder.client, owner.session, folder, 'Été 2024');
    await uploadFile(seeder.client, owner.session, folder, 'cover.txt', 'cover');
    await uploadFile(seeder.client, owner.session, sub, 'plage photo.txt', 'beach');
    await uploadFile(seeder.client, owner.session, 'home', `outside ${counter}.txt`, 'outside');
    const { url } = await link(owner, folder, { type: 'public' });

    const listing = await fetchRaw(store, url);
    expect({ status: listing.status, body: listing.json() }).toEqual({
      status: 200,
      body: {
        status: 'success',
        msg: 'shared folder',
        data: {
          name: (await nodeRow(store, folder))?.name,
          type: 'Dir',
          entries: [
            { name: 'Été 2024', type: 'Dir', size: 0, updated: expect.any(Number) },
            { name: 'cover.txt', type: 'File', size: 5, updated: expect.any(Number), revision: 1 },
          ],
        },
      },
    });
    expect(JSON.stringify(listing.json())).not.toContain(folder);
    const nested = await fetchRaw(store, `${url}/${encodeURIComponent('Été 2024')}/${encodeURIComponent('plage photo.txt')}`);
    expect({ status: nested.status, body: nested.body.toString() }).toEqual({ status: 200, body: 'beach' });
    expect((await fetchRaw(store, `${url}/${encodeURIComponent('Été 2024')}/`)).json()).toMatchObject({ data: { entries: [{ name: 'plage photo.txt' }] } });
    for (const path of [`${url}/missing.txt`, `${url}/..`, `${url}/%2E%2E/outside ${counter}.txt`, `${url}/cover.txt/more`]) {
      expect({ path, status: (await fetchRaw(store, path)).status }).toEqual({ path, status: 404 });
    }
    // A public link takes no uploads.
    expect((await upload(`${url}/upload`, 'intruder.txt', 'no')).status).toBe(403);
    expect(await readChildNames(store, folder)).toEqual(['cover.txt', 'Été 2024']);
  });
});

describe('an upload link', () => {
  it('takes anonymous uploads into its folder under free names, counted against the owner’s quota', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', `Dropbox ${(counter += 1)}`);
    await uploadFile(seeder.client, owner.session, folder, 'report.txt', 'the owner’s own');
    const created = await link(owner, folder, { type: 'upload' });
    expect(created).toMatchObject({ type: 'upload', node_type: 'Dir', password_protected: false, expires: null });
    const used = await readDiskUsed(store, owner.uuid);

    const res = await upload(`${created.url}/upload`, 'report.txt', 'from a stranger');
    expect({ status: res.status, body: res.json() }).toEqual({ status: 200, body: { status: 'success', msg: 'file uploaded', data: { name: 'report (2).txt', size: 15 } } });
    expect((await upload(`${created.url}/upload`, 'report.txt', 'another')).json()).toMatchObject({ data: { name: 'report (3).txt' } });
    expect(await readChildNames(store, folder)).toEqual(['report (2).txt', 'report (3).txt', 'report.txt']);
    const row = await store.ctx.storage.sql.get("SELECT n.owner_uuid, r.uploader_uuid FROM nodes n JOIN revisions r ON r.node_uuid = n.uuid WHERE n.parent_uuid = ? AND n.name = 'report (2).txt'", [folder]);
    expect(row).toEqual({ owner_uuid: owner.uuid, uploader_uuid: null });
    expect(await readDiskUsed(store, owner.uuid)).toBe(used + 15 + 7);
    // The bytes themselves, read back by the owner (small files live in their blob row).
    const stored = (await store.ctx.storage.sql.get<{ uuid: string }>("SELECT uuid FROM nodes WHERE parent_uuid = ? AND name = 'report (2).txt'", [folder]))!;
    expect(await readText(store, owner.session, stored.uuid)).toBe('from a stranger');
  });

  it('reads nothing, lists nothing, reaches no other folder, and ends with expiry or removal', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', `Inbox ${(counter += 1)}`);
    await createFolder(seeder.client, owner.session, folder, 'sub');
    await uploadFile(seeder.client, owner.session, folder, 'private.txt', 'private');
    const created = await link(owner, folder, { type: 'upload', expires: store.clock.now() + 60_000 });
    const before = await readChildNames(store, folder);
    const refusals: Array<[string, Promise<Awaited<ReturnType<typeof fetchRaw>>>, number]> = [
      ['listing', fetchRaw(store, created.url), 403],
      ['reading a file', fetchRaw(store, `${created.url}/private.txt`), 403],
      ['HEAD', fetchRaw(store, created.url, { method: 'HEAD' }), 403],
      ['uploading into a subfolder', upload(`${created.url}/sub/upload`, 'x.txt', 'x'), 404],
      ['a name with a slash', upload(`${created.url}/upload`, 'sub/x.txt', 'x'), 400],
      ['PUT', fetchRaw(store, `${created.url}/x.txt`, { method: 'PUT', body: 'x' }), 404],
      ['no file part', fetchRaw(store, `${created.url}/upload`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }), 400],
    ];
    for (const [what, pending, status] of refusals) expect({ what, status: (await pending).status }).toEqual({ what, status });
    expect(await readChildNames(store, folder)).toEqual(before);

    store.clock.advance(60_001);
    expect((await upload(`${created.url}/upload`, 'late.txt', 'late')).status).toBe(410);
    const fresh = await link(owner, folder, { type: 'upload' });
    await dataOf(as(seeder.client, owner, 'DELETE', `/api/shares/${fresh.share_uuid}`));
    expect((await upload(`${fresh.url}/upload`, 'removed.txt', 'removed')).status).toBe(404);
    expect(await readChildNames(store, folder)).toEqual(before);
  });

  it('with a password needs it (HTTP Basic), and stores nothing beyond the owner’s quota (507)', async () => {
    const tight = await seeder.user(`Tina Tight ${letters((counter += 1))}`, { quotaBytes: 20 });
    const folder = await createFolder(seeder.client, tight.session, 'home', 'Inbox');
    const created = await link(tight, folder, { type: 'upload', password: 'drop it' });
    expect((await upload(`${created.url}/upload`, 'a.txt', 'aaa')).status).toBe(401);
    expect((await upload(`${created.url}/upload`, 'a.txt', 'aaa', basic('drop it'))).status).toBe(200);
    const tooBig = await upload(`${created.url}/upload`, 'b.txt', 'b'.repeat(30), basic('drop it'));
    expect({ status: tooBig.status, code: (tooBig.json() as { code: string }).code }).toEqual({ status: 507, code: 'quota_exceeded' });
    expect(await readChildNames(store, folder)).toEqual(['a.txt']);
    expect(await readDiskUsed(store, tight.uuid)).toBe(3);
  });

  it('needs a folder (409 not_a_folder)', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `single ${(counter += 1)}.txt`, 'single');
    expectError(await as(seeder.client, owner, 'POST', `/api/nodes/${file}/shares`, { type: 'upload' }), 409, 'not_a_folder', 'an upload link needs a folder');
  });
});

describe('creating links: rules', () => {
  it('refuses malformed bodies and unshareable nodes, creating nothing', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `rules ${(counter += 1)}.txt`, 'rules');
    const trashed = await uploadFile(seeder.client, owner.session, 'home', `trashed ${counter}.txt`, 'trashed');
    await seeder.client.remove(owner.session, trashed as never);
    const other = await seeder.user(`Otto Other ${letters(counter)}`);
    const before = await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares');
    const cases: Array<[string, string, unknown, number, string, RegExp]> = [
      ['an unknown type', file, { type: 'secret' }, 400, 'invalid_request', /^type: must be "public"/],
      ['an unknown key', file, { type: 'public', colour: 'red' }, 400, 'invalid_request', /colour/],
      ['a password that is no string', file, { type: 'public', password: 1234 }, 400, 'invalid_request', /^password: /],
      ['expires as text', file, { type: 'public', expires: 'tomorrow' }, 400, 'invalid_request', /^expires: /],
      ['private without recipients', file, { type: 'private' }, 400, 'invalid_request', /^recipients: /],
      ['private with oneself', file, { type: 'private', recipients: [owner.uuid] }, 400, 'invalid_request', /^recipients\.0: you cannot share with yourself/],
      ['a top-level folder', 'home', { type: 'public' }, 403, 'top_level_immutable', /top-level/],
      ['a node in trash', trashed, { type: 'public' }, 409, 'node_in_trash', /trash/],
    ];
    for (const [what, node, body, status, code, msg] of cases) {
      const res = await as(seeder.client, owner, 'POST', `/api/nodes/${node}/shares`, body);
      expect({ what, status: res.status, body: res.body }).toMatchObject({ what, status, body: { code, msg: expect.stringMatching(msg) } });
    }
    expectError(await as(seeder.client, other, 'POST', `/api/nodes/${file}/shares`, { type: 'public' }), 404, 'not_found');
    expectError(await as(seeder.client, other, 'GET', `/api/nodes/${file}/shares`), 404, 'not_found');
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares')).toBe(before);
  });

  it('only the owner manages the links of a user’s node (a private share recipient gets 403)', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `mine ${(counter += 1)}.txt`, 'mine');
    const reader = await seeder.user(`Rudi Reader ${letters(counter)}`);
    const shared = await link(owner, file, { type: 'private', recipients: [reader.uuid] });
    const pub = await link(owner, file, { type: 'public' });
    expectError(await as(seeder.client, reader, 'POST', `/api/nodes/${file}/shares`, { type: 'public' }), 403, 'forbidden', "only the node's owner manages its shares");
    expectError(await as(seeder.client, reader, 'GET', `/api/nodes/${file}/shares`), 403, 'forbidden');
    for (const uuid of [shared.share_uuid, pub.share_uuid]) expectError(await as(seeder.client, reader, 'DELETE', `/api/shares/${uuid}`), 403, 'forbidden');
    expectError(await as(seeder.client, reader, 'DELETE', '/api/shares/00000000-0000-4000-8000-000000000077'), 404, 'not_found', 'share not found');
    expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', file)).toBe(2);
  });
});

describe('changing a link (PUT /api/shares/{uuid})', () => {
  it('changes the password, the expiry and reading or uploads, the token staying', async () => {
    const folder = await createFolder(seeder.client, owner.session, 'home', `change ${(counter += 1)}`);
    const made = await link(owner, folder, { type: 'public', password: 'first secret' });
    const url = new URL(made.url).pathname;
    expect((await fetchRaw(store, `${url}?info`)).status).toBe(401);
    const changed = await dataOf(as(seeder.client, owner, 'PUT', `/api/shares/${made.share_uuid}`, { password: null, expires: Date.now() + 86_400_000 }));
    expect(changed).toMatchObject({ share_uuid: made.share_uuid, type: 'public', password_protected: false, expires: expect.any(Number) });
    expect(changed).not.toHaveProperty('token');
    expect((await fetchRaw(store, `${url}?info`)).status).toBe(200);
    const upload = await dataOf(as(seeder.client, owner, 'PUT', `/api/shares/${made.share_uuid}`, { type: 'upload', password: 'drop here' }));
    expect(upload).toMatchObject({ type: 'upload', password_protected: true });
    expect((await fetchRaw(store, `${url}?info`, { headers: basic('drop here') })).json()).toMatchObject({ data: { type: 'Upload' } });
  });

  it('refuses what making a link refuses, a private share, another user and a link awaiting approvers, changing nothing', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `guarded ${(counter += 1)}.txt`, 'guarded');
    const other = await seeder.user(`Oona Other ${letters(counter)}`);
    const made = await link(owner, file, { type: 'public' });
    const shared = await link(owner, file, { type: 'private', recipients: [other.uuid] });
    const put = (who: SeededUser, uuid: string, body: unknown) => as(seeder.client, who, 'PUT', `/api/shares/${uuid}`, body);
    expectError(await put(owner, made.share_uuid, {}), 400, 'invalid_request', /at least one/);
    expectError(await put(owner, made.share_uuid, { expires: 1000 }), 400, 'invalid_request', /future/);
    expectError(await put(owner, made.share_uuid, { type: 'upload' }), 409, 'not_a_folder');
    expectError(await put(owner, shared.share_uuid, { password: 'x' }), 409, 'not_a_link');
    expectError(await put(other, made.share_uuid, { password: 'mine' }), 403, 'forbidden');
    expectError(await put(other, '00000000-0000-4000-8000-000000000078', { password: 'x' }), 404, 'not_found', 'share not found');
    const approver = await seeder.user(`Abe Approver ${letters(counter)}`);
    await dataOf(as(seeder.client, admin, 'POST', `/api/admin/users/${owner.uuid}/approvers`, { approver_id: approver.uuid, share_type: 'public' }));
    try {
      expectError(await put(owner, made.share_uuid, { password: 'x' }), 409, 'approval_required', /make a new link/);
    } finally {
      await dataOf(as(seeder.client, admin, 'DELETE', `/api/admin/users/${owner.uuid}/approvers/${approver.uuid}/public`));
    }
    const row = (await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE uuid = ? AND password_hash IS NULL AND expires IS NULL AND type = ?', made.share_uuid, 'public'));
    expect(row).toBe(1);
  });

  it("refuses a group member's change of another's link unless they may remove it, as DELETE answers, the link keeping its password and expiry", async () => {
    const group = await ga.group();
    const all = ['read', 'write', 'delete', 'download'];
    const [ann, ben, gia, ozzy] = await Promise.all(['Ann Author', 'Ben Bystander', 'Gia Groupadmin', 'Ozzy Outsider'].map((n) => seeder.user(`${n} ${letters((counter += 1))}`)));
    await ga.member(group, ann!.uuid, { node_permissions: all, share_permissions: ['public_create', 'public_delete'] });
    // Ben may make a public link of his own, but not remove one.
    await ga.member(group, ben!.uuid, { node_permissions: all, share_permissions: ['public_create'] });
    await ga.member(group, gia!.uuid, { is_admin: true });
    const folder = await createFolder(seeder.client, ann!.session, `home:${group}`, `ann's ${(counter += 1)}`);
    const expires = Date.now() + 7 * 86_400_000;
    const made = await link(ann!, folder, { type: 'public', password: 'ann only', expires });
    const url = new URL(made.url).pathname;
    const stored = () => readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE uuid = ? AND password_hash IS NOT NULL AND expires = ? AND type = ?', made.share_uuid, expires, 'public');
    const loosen = { password: null, expires: null };

    expectError(await as(seeder.client, ben!, 'DELETE', `/api/shares/${made.share_uuid}`), 403, 'forbidden', 'public_delete share permission required');
    expectError(await as(seeder.client, ben!, 'PUT', `/api/shares/${made.share_uuid}`, loosen), 403, 'forbidden', 'public_delete share permission required');
    expectError(await as(seeder.client, ben!, 'PUT', `/api/shares/${made.share_uuid}`, { type: 'upload' }), 403, 'forbidden', 'public_delete share permission required');
    expectError(await as(seeder.client, ozzy!, 'PUT', `/api/shares/${made.share_uuid}`, loosen), 404, 'not_found', 'share not found');
    expect(await stored()).toBe(1);
    expect((await fetchRaw(store, `${url}?info`)).status).toBe(401);
    expect((await fetchRaw(store, `${url}?info`, { headers: basic('ann only') })).status).toBe(200);

    // Whoever may remove it may change it: a group administrator.
    expect(await dataOf(as(seeder.client, gia!, 'PUT', `/api/shares/${made.share_uuid}`, { expires: null }))).toMatchObject({ password_protected: true, expires: null });
  });
});

describe("share permissions on a group's nodes", () => {
  const cases = [
    { type: 'public', create: 'public_create', remove: 'public_delete' },
    { type: 'private', create: 'private_create', remove: 'private_delete' },
    { type: 'upload', create: 'upload_link_create', remove: 'upload_link_delete' },
  ] as const;

  for (const c of cases) {
    it(`${c.type}: creating needs ${c.create}, removing ${c.remove}; group administrators and the built-in admin need neither`, async () => {
      const group = await ga.group();
      const all = ['read', 'write', 'delete', 'download'];
      const [without, creator, remover, groupAdmin, outsider, recipient] = await Promise.all(
        ['Nora Noperm', 'Cody Creator', 'Remy Remover', 'Gabe Groupadmin', 'Ozzy Outsider', 'Rhea Recipient'].map((n) => seeder.user(`${n} ${letters((counter += 1))}`)),
      );
      await ga.member(group, without!.uuid, { node_permissions: all, share_permissions: cases.flatMap((o) => (o.type === c.type ? [] : [o.create, o.remove])) });
      await ga.member(group, creator!.uuid, { node_permissions: all, share_permissions: [c.create] });
      await ga.member(group, remover!.uuid, { node_permissions: ['read'], share_permissions: [c.remove] });
      await ga.member(group, groupAdmin!.uuid, { is_admin: true });
      const folder = await createFolder(seeder.client, creator!.session, `home:${group}`, `shared ${c.type}`);
      const body = c.type === 'private' ? { type: c.type, recipients: [recipient!.uuid] } : { type: c.type };

      expectError(await as(seeder.client, without!, 'POST', `/api/nodes/${folder}/shares`, body), 403, 'forbidden', `${c.create} share permission required`);
      expectError(await as(seeder.client, outsider!, 'POST', `/api/nodes/${folder}/shares`, body), 404, 'not_found');
      expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', folder)).toBe(0);

      const made = await link(creator!, folder, body);
      expect(made).toMatchObject({ owner_type: 'Group', owner_uuid: group, creator_uuid: creator!.uuid });
      // Every member sees the node's shares.
      expect(await dataOf(as(seeder.client, without!, 'GET', `/api/nodes/${folder}/shares`))).toHaveLength(1);
      expectError(await as(seeder.client, creator!, 'DELETE', `/api/shares/${made.share_uuid}`), 403, 'forbidden', `${c.remove} share permission required`);
      expectError(await as(seeder.client, outsider!, 'DELETE', `/api/shares/${made.share_uuid}`), 404, 'not_found', 'share not found');
      await dataOf(as(seeder.client, remover!, 'DELETE', `/api/shares/${made.share_uuid}`));

      const byAdmin = await link(groupAdmin!, folder, body);
      await dataOf(as(seeder.client, groupAdmin!, 'DELETE', `/api/shares/${byAdmin.share_uuid}`));
      const byBuiltin = await dataOf<{ share_uuid: string }>(as(seeder.client, seeder.admin, 'POST', `/api/nodes/${folder}/shares`, body));
      await dataOf(as(seeder.client, seeder.admin, 'DELETE', `/api/shares/${byBuiltin.share_uuid}`));
      expect(await readCountRows(store, 'SELECT COUNT(*) AS n FROM shares WHERE node_uuid = ?', folder)).toBe(0);
      expect(await readGroupDiskUsed(store, group)).toBe(0);
    });
  }
});

describe('share counts and share folders', () => {
  it('directory entries count the real shares (upload links as public ones); public_shares and private_shares list the shared nodes', async () => {
    const parent = await createFolder(seeder.client, owner.session, 'home', `Counted ${(counter += 1)}`);
    const folder = await createFolder(seeder.client, owner.session, parent, 'Shared folder');
    const file = await uploadFile(seeder.client, owner.session, parent, 'shared.txt', 'counted');
    const plain = await uploadFile(seeder.client, owner.session, parent, 'plain.txt', 'plain');
    const ours: string[] = [folder, file, plain];
    const friend = await seeder.user(`Fred Friend ${letters(counter)}`);
    await link(owner, folder, { type: 'public' });
    await link(owner, folder, { type: 'upload' });
    await link(owner, folder, { type: 'private', recipients: [friend.uuid] });
    await link(owner, file, { type: 'private', recipients: [friend.uuid] });

    const listing = await dataOf<Array<{ uuid: string; public_shares: number; private_shares: number }>>(as(seeder.client, owner, 'GET', `/api/nodes/${parent}/dirlist`));
    const counts = Object.fromEntries(listing.map((e) => [e.uuid, [e.public_shares, e.private_shares]]));
    expect(counts).toEqual({ [folder]: [2, 1], [file]: [0, 1], [plain]: [0, 0] });

    const publicShares = await dataOf<Array<{ uuid: string; public_shares: number }>>(as(seeder.client, owner, 'GET', '/api/nodes/public_shares/dirlist'));
    expect(publicShares.filter((e) => ours.includes(e.uuid))).toMatchObject([{ uuid: folder, public_shares: 2 }]);
    const privateShares = await dataOf<Array<{ uuid: string }>>(as(seeder.client, owner, 'GET', '/api/nodes/private_shares/dirlist'));
    expect(privateShares.filter((e) => ours.includes(e.uuid)).map((e) => e.uuid)).toEqual([folder, file]);
    const mine = await dataOf<Array<{ node_uuid: string; type: string }>>(as(seeder.client, owner, 'GET', '/api/shares'));
    expect(mine.filter((s) => ours.includes(s.node_uuid)).map((s) => s.type).sort()).toEqual(['private', 'private', 'public', 'upload']);
  });
});

describe('a link\'s URL without store.publicUrl', () => {
  const create = async (file: string, headers: Record<string, string>): Promise<string> => {
    const res = await request(`${store.url}/api/nodes/${file}/shares`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.session.token}`, 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ type: 'public' }),
    });
    const body = (await res.body.json()) as { data: { url: string; token: string } };
    expect(body.data.url.endsWith(`/public/${body.data.token}`)).toBe(true);
    return body.data.url;
  };

  it('is built from the request\'s Host, and never from X-Forwarded-* sent by a peer outside store.trustedProxies', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `host ${counter}.txt`, text('host'));
    expect(await create(file, { host: 'files.example.org:8080' })).toMatch(/^http:\/\/files\.example\.org:8080\/public\//);
    expect(await create(file, { host: 'files.example.org', 'x-forwarded-host': 'evil.example', 'x-forwarded-proto': 'https' })).toMatch(/^http:\/\/files\.example\.org\/public\//);
  });

  it('follows X-Forwarded-Proto and X-Forwarded-Host from a trusted proxy', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `proxied ${counter}.txt`, text('proxied'));
    const trusted = store.config.store.trustedProxies;
    store.config.store.trustedProxies = ['127.0.0.1'];
    try {
      expect(await create(file, { host: '127.0.0.1', 'x-forwarded-host': 'files.example.org', 'x-forwarded-proto': 'https' })).toMatch(/^https:\/\/files\.example\.org\/public\//);
    } finally {
      store.config.store.trustedProxies = trusted;
    }
  });

  it('stays a path when the Host is malformed', async () => {
    const file = await uploadFile(seeder.client, owner.session, 'home', `bad host ${counter}.txt`, text('bad host'));
    expect(await create(file, { host: 'a b/c' })).toMatch(/^\/public\//);
  });
});
