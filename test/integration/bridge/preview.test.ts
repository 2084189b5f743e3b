/**
 * The apps' previews through the bridge (docs/client-quirks.md "Previews"): Nextcloud's
 * `/index.php/core/preview?fileId=` and `/index.php/core/preview.png?file=`, served from the
 * store's thumbnails (decoded here with sharp: a real image of the size asked), readable exactly
 * as the file is: another user's file by id or by path is 404 (never a hint), a group drive
 * member reads its files' previews, a member without download gets 403, a non-member 404; text,
 * SVG and HTML get none; nc:has-preview true exactly where a preview can be made.
 */
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { groupAdmin } from '../../helpers/groups.js';
import { apiCall, dataOf } from '../../helpers/user-api.js';

const OC = 'http://owncloud.org/ns';
const NC = 'http://nextcloud.org/ns';
const ASK = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="${OC}" xmlns:nc="${NC}"><d:prop><oc:fileid/><nc:has-preview/></d:prop></d:propfind>`;

describe('previews for the Nextcloud apps', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;
  let carol: DavUser;
  let dave: DavUser;
  const { dav, davAs } = bridgeRequests(() => f, () => alice);
  const files = (who: DavUser) => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;
  /** oc:fileid and nc:has-preview of each file below `folder` (a path on the bridge). */
  const listed = new Map<string, { fileId: string; hasPreview: string }>();
  let photo: Buffer;

  async function put(path: string, body: Buffer | string, as: DavUser = alice): Promise<void> {
    expect([201, 204]).toContain((await dav('PUT', path, {}, body, as)).status);
  }

  async function propsOf(path: string, as: DavUser = alice): Promise<{ fileId: string; hasPreview: string }> {
    const [self] = multistatusOf(await dav('PROPFIND', path, { depth: '0', 'content-type': 'application/xml' }, ASK, as));
    return { fileId: self!.props.get(`{${OC}}fileid`)!.text, hasPreview: self!.props.get(`{${NC}}has-preview`)!.text };
  }

  const preview = (as: DavUser | undefined, query: string, form: 'preview' | 'preview.png' = 'preview') => davAs(as, 'GET', `/index.php/core/${form}?${query}`);

  beforeAll(async () => {
    f = await bridgeFixture();
    [alice, bob, carol, dave] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser(), f.newDavUser()]);
    // A real photo: 1,600 x 1,200, noise so the encoder has something to keep.
    const noise = Buffer.alloc(1600 * 1200 * 3);
    for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24;
    photo = await sharp(noise, { raw: { width: 1600, height: 1200, channels: 3 } }).jpeg({ quality: 80 }).toBuffer();
    expect((await dav('MKCOL', '/home/pics/')).status).toBe(201);
    await put('/home/pics/photo.jpg', photo);
    await put('/home/pics/notes.txt', 'just words');
    await put('/home/pics/drawing.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>');
    await put('/home/pics/page.html', '<html><body><img src=x onerror=alert(1)></body></html>');
    // An SVG under an image's name: has-preview says yes from the name, the store still makes none.
    await put('/home/pics/disguised.png', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>');
    const ga = groupAdmin(f.client, f.admin);
    const team = await ga.group('Preview Team');
    await ga.member(team, alice.uuid, { node_permissions: ['read', 'write', 'delete', 'download'] });
    await ga.member(team, carol.uuid, { node_permissions: ['read', 'download'] });
    await ga.member(team, dave.uuid, { node_permissions: ['read'] });
    await put('/groups/Preview%20Team/home/team.png', await sharp({ create: { width: 300, height: 200, channels: 3, background: { r: 0, g: 120, b: 200 } } }).png().toBuffer());
    for (const name of ['photo.jpg', 'notes.txt', 'drawing.svg', 'page.html', 'disguised.png']) listed.set(name, await propsOf(`/home/pics/${name}`));
  });
  afterAll(async () => {
    await f?.close();
  });

  it("serves an image's preview by fileId as the apps ask it: a real WebP within the size, nosniff, private, an ETag that answers 304", async () => {
    const { fileId } = listed.get('photo.jpg')!;
    // The Android app: x/y half its cell, a=1, mode=cover, forceIcon=0.
    const small = await preview(alice, `fileId=${fileId}&x=128&y=128&a=1&mode=cover&forceIcon=0`);
    expect(small.status).toBe(200);
    expect(small.headers['content-type']).toBe('image/webp');
    expect(small.headers['x-content-type-options']).toBe('nosniff');
    expect(small.headers['cache-control']).toMatch(/^private\b/);
    const meta = await sharp(small.body).metadata();
    expect(meta).toMatchObject({ format: 'webp', width: 256, height: 192 });
    // NextcloudKit's (iOS) large preview: 1,024 px.
    const large = await preview(alice, `fileId=${fileId}&x=1024&y=1024&a=1&mode=cover&forceIcon=0&mimeFallback=0`);
    expect(await sharp(large.body).metadata()).toMatchObject({ format: 'webp', width: 1024, height: 768 });
    const stats = await sharp(large.body).stats();
    expect(stats.channels[0]!.stdev).toBeGreaterThan(10); // the picture, not a blank
    const etag = small.headers.etag as string;
    expect(etag).toMatch(/^".+"$/);
    const again = await davAs(alice, 'GET', `/index.php/core/preview?fileId=${fileId}&x=128&y=128`, { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
  });

  it('takes an app password, as the apps sign in with one from their login flow', async () => {
    const made = dataOf<{ password: string }>(await apiCall(f.client, alice.session, 'POST', '/api/user/app_passwords', { name: 'preview test' }));
    const withApp = { ...alice, auth: `Basic ${Buffer.from(`${alice.email}:${made.password}`).toString('base64')}` };
    const answer = await preview(withApp, `fileId=${listed.get('photo.jpg')!.fileId}&x=64&y=64&a=1`);
    expect(answer.status).toBe(200);
    expect(await sharp(answer.body).metadata()).toMatchObject({ format: 'webp', width: 64 });
  });

  it('serves the preview by path (preview.png?file=, relative to the files root), and HEAD', async () => {
    const byPath = await preview(alice, `file=${encodeURIComponent('/home/pics/photo.jpg')}&x=64&y=64&a=1`, 'preview.png');
    expect(byPath.status).toBe(200);
    expect(await sharp(byPath.body).metadata()).toMatchObject({ format: 'webp', width: 64, height: 48 });
    // Without the leading slash, and without /index.php.
    const bare = await davAs(alice, 'GET', `/core/preview.png?file=${encodeURIComponent('home/pics/photo.jpg')}&x=200&y=100`);
    expect(await sharp(bare.body).metadata()).toMatchObject({ width: 256, height: 192 });
    const head = await davAs(alice, 'HEAD', `/index.php/core/preview.png?file=home/pics/photo.jpg&x=64&y=64`);
    expect(head.status).toBe(200);
    expect(Number(head.headers['content-length'])).toBe(byPath.body.length);
  });

  it('makes no preview of text, SVG or HTML (nor of an SVG named .png), by id or by path', async () => {
    for (const name of ['notes.txt', 'drawing.svg', 'page.html', 'disguised.png']) {
      const byId = await preview(alice, `fileId=${listed.get(name)!.fileId}&x=256&y=256&a=1`);
      expect(byId.status, name).toBe(404);
      expect(byId.body.length).toBe(0);
      const byPath = await preview(alice, `file=/home/pics/${name}&x=256&y=256`, 'preview.png');
      expect(byPath.status, name).toBe(404);
    }
  });

  it('refuses another user their file by id and by path alike, as for a file that does not exist (in parallel)', async () => {
    const { fileId } = listed.get('photo.jpg')!;
    const answers = await Promise.all([
      preview(bob, `fileId=${fileId}&x=256&y=256`),
      preview(bob, `file=/home/pics/photo.jpg&x=256&y=256`, 'preview.png'),
      preview(bob, `fileId=999999999&x=256&y=256`),
      preview(bob, `file=/home/pics/nothing.jpg&x=256&y=256`, 'preview.png'),
      preview(alice, `fileId=${fileId}&x=256&y=256`),
    ]);
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 404, 200]);
    // Nothing tells the first two from the two that name nothing.
    for (const a of answers.slice(0, 4)) expect([a.body.length, a.headers['content-type']]).toEqual([0, undefined]);
    // Without credentials, or with a wrong password: 401 as DAV answers it.
    expect((await preview(undefined, `fileId=${fileId}`)).status).toBe(401);
    expect((await davAs({ ...alice, auth: `Basic ${Buffer.from(`${alice.email}:wrong`).toString('base64')}` }, 'GET', `/index.php/core/preview?fileId=${fileId}`)).status).toBe(401);
  });

  it('serves a group drive file to a member who may download it, 403 to one who may only read, 404 to a non-member', async () => {
    const path = '/groups/Preview Team/home/team.png';
    const { fileId, hasPreview } = await propsOf(`${files(alice)}/groups/Preview%20Team/home/team.png`);
    expect(hasPreview).toBe('true');
    const [member, byPath, readOnly, outsider, outsiderByPath] = await Promise.all([
      preview(carol, `fileId=${fileId}&x=256&y=256&a=1`),
      preview(carol, `file=${encodeURIComponent(path)}&x=64&y=64`, 'preview.png'),
      preview(dave, `fileId=${fileId}&x=256&y=256&a=1`),
      preview(bob, `fileId=${fileId}&x=256&y=256&a=1`),
      preview(bob, `file=${encodeURIComponent(path)}&x=64&y=64`, 'preview.png'),
    ]);
    expect(member.status).toBe(200);
    expect(await sharp(member.body).metadata()).toMatchObject({ format: 'webp', width: 256, height: 171 });
    expect(byPath.status).toBe(200);
    expect(readOnly.status).toBe(403);
    expect([outsider.status, outsiderByPath.status]).toEqual([404, 404]);
  });

  it('answers 400 for no file named or a size of 0, 405 for another method', async () => {
    const { fileId } = listed.get('photo.jpg')!;
    expect((await preview(alice, 'x=32&y=32')).status).toBe(400);
    expect((await preview(alice, 'fileId=-1')).status).toBe(400);
    expect((await preview(alice, `fileId=${fileId}&x=0&y=32`)).status).toBe(400);
    expect((await preview(alice, 'x=32', 'preview.png')).status).toBe(400);
    // -1: the largest size the store makes.
    expect(await sharp((await preview(alice, `fileId=${fileId}&x=-1&y=-1`)).body).metadata()).toMatchObject({ width: 1024 });
    const post = await dav('POST', `/index.php/core/preview?fileId=${fileId}`);
    expect(post.status).toBe(405);
    expect(post.headers.allow).toBe('GET, HEAD');
  });

  it('shows nc:has-preview true for images the store decodes and false for anything else, in a Depth 1 listing', async () => {
    expect(Object.fromEntries([...listed].map(([name, p]) => [name, p.hasPreview]))).toEqual({
      'photo.jpg': 'true',
      'notes.txt': 'false',
      'drawing.svg': 'false',
      'page.html': 'false',
      'disguised.png': 'true',
    });
    const folder = multistatusOf(await dav('PROPFIND', `${files(alice)}/home/pics/`, { depth: '1', 'content-type': 'application/xml' }, ASK));
    const shown = Object.fromEntries(folder.map((r) => [decodeURIComponent(r.href.split('/').filter(Boolean).pop()!), r.props.get(`{${NC}}has-preview`)?.text]));
    expect(shown).toMatchObject({ pics: 'false', 'photo.jpg': 'true', 'notes.txt': 'false', 'drawing.svg': 'false' });
    // Not in allprop: only the apps that ask get it.
    const all = multistatusOf(await dav('PROPFIND', '/home/pics/photo.jpg', { depth: '0' }));
    expect(all[0]!.props.has(`{${NC}}has-preview`)).toBe(false);
  });
});

describe('previews over the HTTP transport with a bearer token', () => {
  let f: BridgeFixture;
  afterAll(async () => {
    await f?.close();
  });

  it("answers a store token's preview 404 (its session has no file access key) without turning previews off for anyone", async () => {
    f = await bridgeFixture({ transport: 'http' });
    const alice = await f.newDavUser();
    const { dav, davAs } = bridgeRequests(() => f, () => alice);
    const png = await sharp({ create: { width: 80, height: 40, channels: 3, background: { r: 200, g: 0, b: 0 } } }).png().toBuffer();
    expect((await dav('PUT', '/home/red.png', {}, png)).status).toBe(201);
    const bearer = await davAs(undefined, 'GET', '/index.php/core/preview.png?file=/home/red.png&x=64&y=64', { authorization: `Bearer ${alice.session.token}` });
    expect(bearer.status).toBe(404);
    const basic = await dav('GET', '/index.php/core/preview.png?file=/home/red.png&x=64&y=64');
    expect(basic.status).toBe(200);
    expect(await sharp(basic.body).metadata()).toMatchObject({ width: 64, height: 32 });
    const asked = `<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:nc="${NC}"><d:prop><nc:has-preview/></d:prop></d:propfind>`;
    const [self] = multistatusOf(await dav('PROPFIND', '/home/red.png', { depth: '0' }, asked));
    expect(self!.props.get(`{${NC}}has-preview`)?.text).toBe('true');
  });
});
