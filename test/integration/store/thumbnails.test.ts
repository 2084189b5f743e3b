/**
 * Thumbnails (docs/api.md "Thumbnails") against a real store: by file access key and through a
 * public link (with its password), WebP of the asked size with EXIF orientation applied, ETag and
 * 304, the cache on disk (private files, a hit the second time, a new revision a new thumbnail),
 * and what is refused with a 404 envelope: SVG, text, a PNG whose header claims 900 megapixels
 * (quickly, without decoding), another user's file (also many at once), a folder. The same over
 * S3 (s3rver on loopback): the bytes come through the blob backend.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSeeder, createFolder, uploadFile, type Seeder, type SeededUser } from '../../helpers/seed.js';
import { startTestStore, type TestStore } from '../../helpers/start-store.js';
import { as, basic, fetchRaw, LATEST, type Fetched } from '../../helpers/sharing.js';
import { dataOf } from '../../helpers/groups.js';
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from '../../helpers/s3-server.js';
import { MiB } from '../../helpers/stream-helpers.js';

/** A photo-like PNG of random pixels (large enough to live in the blob backend, not its row). */
function noisyPng(width: number, height: number): Promise<Buffer> {
  return sharp(randomBytes(width * height * 3), { raw: { width, height, channels: 3 } }).png({ compressionLevel: 1 }).toBuffer();
}

/** A 1x1 PNG whose header is rewritten to claim `width` x `height` (its CRC fixed): a decompression bomb's shape. */
async function pngClaiming(width: number, height: number): Promise<Buffer> {
  const png = Buffer.from(await sharp({ create: { width: 1, height: 1, channels: 3, background: '#336699' } }).png().toBuffer());
  png.writeUInt32BE(width, 16);
  png.writeUInt32BE(height, 20);
  png.writeUInt32BE(crc32(png.subarray(12, 29)) >>> 0, 29);
  return png;
}

const SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10" fill="red"/></svg>';

async function dimensions(body: Buffer): Promise<{ format?: string; width?: number; height?: number }> {
  const { format, width, height } = await sharp(body).metadata();
  return { format, width, height };
}

function expectNoThumbnail(res: Fetched): void {
  expect(res.status).toBe(404);
  expect(res.json()).toMatchObject({ status: 'error', msg: expect.stringMatching(/thumbnail|not found/) });
}

async function cacheFiles(dataDir: string): Promise<string[]> {
  const dir = path.join(dataDir, 'thumbnails');
  const fans = await fs.readdir(dir).catch(() => [] as string[]);
  const names = await Promise.all(fans.map(async (fan) => (await fs.readdir(path.join(dir, fan))).map((name) => path.join(dir, fan, name))));
  return names.flat().sort();
}

function suite(label: string, start: () => Promise<TestStore>, stop: () => Promise<void>): void {
  describe(`thumbnails (${label})`, () => {
    let store: TestStore;
    let seeder: Seeder;
    let ann: SeededUser;
    let bob: SeededUser;
    let photo: string;
    let photoBytes: Buffer;

    const thumb = (who: SeededUser, uuid: string, px: number | string, version: string | number = LATEST, headers: Record<string, string> = {}) =>
      fetchRaw(store, `/resources/auth/thumbnail/${who.session.fileAccessKey}/${uuid}/${version}/${px}`, { headers });

    beforeAll(async () => {
      store = await start();
      seeder = await createSeeder(store);
      ann = await seeder.user('Ann Photos');
      bob = await seeder.user('Bob Other');
      photoBytes = await noisyPng(400, 300);
      photo = await uploadFile(seeder.client, ann.session, 'home', 'holiday.png', photoBytes);
    });
    afterAll(async () => {
      await seeder?.client.close();
      await store?.close();
      await stop();
    });

    it('makes a WebP of at most the asked size from a PNG, by file access key, with private caching headers', async () => {
      const res = await thumb(ann, photo, 256);
      expect(res.status).toBe(200);
      expect(res.headers).toMatchObject({ 'content-type': 'image/webp', 'cache-control': 'private, no-cache', 'x-content-type-options': 'nosniff', etag: `"${photo}-1-256"` });
      expect(await dimensions(res.body)).toEqual({ format: 'webp', width: 256, height: 192 });
      expect((await thumb(ann, photo, 64)).body.length).toBeLessThan(res.body.length);
      const named = await thumb(ann, photo, 1024, 1);
      expect(named.headers['cache-control']).toBe('private, max-age=86400');
      // Never enlarged: 400 x 300 stays so at 1024.
      expect(await dimensions(named.body)).toEqual({ format: 'webp', width: 400, height: 300 });
    });

    it('applies the EXIF orientation of a JPEG', async () => {
      const jpeg = await sharp({ create: { width: 80, height: 40, channels: 3, background: '#c04020' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
      const file = await uploadFile(seeder.client, ann.session, 'home', 'portrait.jpg', jpeg);
      const res = await thumb(ann, file, 64);
      expect(res.status).toBe(200);
      expect(await dimensions(res.body)).toEqual({ format: 'webp', width: 32, height: 64 });
    });

    it('answers 304 to its ETag, and a HEAD without a body', async () => {
      const first = await thumb(ann, photo, 64);
      expect((await thumb(ann, photo, 64, LATEST, { 'if-none-match': String(first.headers.etag) })).status).toBe(304);
      const head = await fetchRaw(store, `/resources/auth/thumbnail/${ann.session.fileAccessKey}/${photo}/${LATEST}/64`, { method: 'HEAD' });
      expect(head.status).toBe(200);
      expect(head.body.length).toBe(0);
    });

    it('keeps thumbnails on disk as private files, served from there the second time', async () => {
      const file = await uploadFile(seeder.client, ann.session, 'home', 'cached.png', await noisyPng(120, 90));
      const first = await thumb(ann, file, 256);
      const hash = (await store.ctx.storage.sql.get<{ blob_hash: string }>('SELECT blob_hash FROM revisions WHERE node_uuid = ?', [file]))?.blob_hash as string;
      const cached = path.join(store.dataDir, 'thumbnails', hash.slice(0, 2), `${hash}-256.webp`);
      expect((await fs.stat(cached)).mode & 0o777).toBe(0o600);
      expect((await fs.stat(path.dirname(cached))).mode & 0o777).toBe(0o700);
      expect((await fs.stat(path.join(store.dataDir, 'thumbnails'))).mode & 0o777).toBe(0o700);
      // What is on disk is what is answered: a changed cache file shows (nothing is decoded again).
      const marker = await sharp({ create: { width: 7, height: 5, channels: 3, background: '#000' } }).webp().toBuffer();
      await fs.writeFile(cached, marker);
      const second = await thumb(ann, file, 256);
      expect(second.body.equals(marker)).toBe(true);
      expect(second.body.equals(first.body)).toBe(false);
    });

    it('makes a new thumbnail for a new revision, and still the old one for the old revision', async () => {
      const file = await uploadFile(seeder.client, ann.session, 'home', 'changing.png', await sharp({ create: { width: 100, height: 50, channels: 3, background: '#ff0000' } }).png().toBuffer());
      const before = await thumb(ann, file, 64);
      await uploadFile(seeder.client, ann.session, 'home', 'changing.png', await sharp({ create: { width: 50, height: 100, channels: 3, background: '#0000ff' } }).png().toBuffer());
      const after = await thumb(ann, file, 64);
      expect(after.headers.etag).toBe(`"${file}-2-64"`);
      expect(await dimensions(after.body)).toEqual({ format: 'webp', width: 32, height: 64 });
      expect(await dimensions(before.body)).toEqual({ format: 'webp', width: 64, height: 32 });
      expect((await thumb(ann, file, 64, 1)).body.equals(before.body)).toBe(true);
    });

    it('refuses SVG, text and a folder with a 404 envelope, and caches nothing for them', async () => {
      const svg = await uploadFile(seeder.client, ann.session, 'home', 'drawing.svg', SVG);
      const disguised = await uploadFile(seeder.client, ann.session, 'home', 'drawing.png', SVG);
      const text = await uploadFile(seeder.client, ann.session, 'home', 'notes.jpg', 'just some words, not a picture at all');
      const folder = await createFolder(seeder.client, ann.session, 'home', 'Pictures');
      const before = (await cacheFiles(store.dataDir)).filter((f) => f.endsWith('.webp'));
      for (const id of [svg, disguised, text, folder]) expectNoThumbnail(await thumb(ann, id, 64));
      expect((await cacheFiles(store.dataDir)).filter((f) => f.endsWith('.webp'))).toEqual(before);
    });

    it('refuses a PNG whose header claims 900 megapixels from its header, and remembers the refusal', async () => {
      const bomb = await uploadFile(seeder.client, ann.session, 'home', 'bomb.png', await pngClaiming(30_000, 30_000));
      expectNoThumbnail(await thumb(ann, bomb, 1024));
      // Refused before any pixel (2.7 GB of them) is decoded, and not tried again: an empty marker, no WebP.
      const hash = (await store.ctx.storage.sql.get<{ blob_hash: string }>('SELECT blob_hash FROM revisions WHERE node_uuid = ?', [bomb]))?.blob_hash as string;
      const files = (await cacheFiles(store.dataDir)).filter((f) => path.basename(f).startsWith(hash));
      expect(files.map((f) => path.basename(f))).toEqual([`${hash}.none`]);
      expectNoThumbnail(await thumb(ann, bomb, 64));
    });

    it('answers 400 to a size other than 64, 256 or 1024', async () => {
      const res = await thumb(ann, photo, 300);
      expect(res.status).toBe(400);
      expect(res.json()).toMatchObject({ status: 'error', msg: expect.stringContaining('64, 256, 1024') });
    });

    it("refuses another user's file as its download is refused, also many asked at once", async () => {
      const download = await fetchRaw(store, `/resources/auth/download/${bob.session.fileAccessKey}/${photo}/${LATEST}/x`);
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => thumb(bob, photo, [64, 256, 1024][i % 3] as number)));
      for (const res of answers) {
        expect(res.status).toBe(download.status);
        expect(res.headers['content-type']).toMatch(/json/);
        expect(res.json()).toMatchObject({ status: 'error' });
      }
      expect((await fetchRaw(store, `/resources/auth/thumbnail/not-a-key/${photo}/${LATEST}/64`)).status).toBe(401);
    });

    it('serves the thumbnail of a file behind a public link, and below a folder link, after the password', async () => {
      const fileLink = await dataOf<{ token: string }>(as(seeder.client, ann, 'POST', `/api/nodes/${photo}/shares`, { type: 'public' }));
      const res = await fetchRaw(store, `/public/${fileLink.token}?thumbnail=64`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('image/webp');
      expect(await dimensions(res.body)).toEqual({ format: 'webp', width: 64, height: 48 });

      const folder = await createFolder(seeder.client, ann.session, 'home', 'Shared album');
      await uploadFile(seeder.client, ann.session, folder, 'beach.png', await noisyPng(90, 60));
      await uploadFile(seeder.client, ann.session, folder, 'logo.svg', SVG);
      const folderLink = await dataOf<{ token: string }>(as(seeder.client, ann, 'POST', `/api/nodes/${folder}/shares`, { type: 'public', password: 'sand castle' }));
      const token = folderLink.token;
      expect((await fetchRaw(store, `/public/${token}/beach.png?thumbnail=64`)).status).toBe(401);
      const below = await fetchRaw(store, `/public/${token}/beach.png?thumbnail=64`, { headers: basic('sand castle') });
      expect(below.status).toBe(200);
      expect(await dimensions(below.body)).toEqual({ format: 'webp', width: 64, height: 43 });
      expectNoThumbnail(await fetchRaw(store, `/public/${token}/logo.svg?thumbnail=64`, { headers: basic('sand castle') }));
      expect((await fetchRaw(store, `/public/${token}?thumbnail=64`, { headers: basic('sand castle') })).status).toBe(404);
    });
  });
}

suite('local blobs', () => startTestStore(), async () => undefined);

let s3: TestS3Server | undefined;
suite(
  'S3 blobs',
  async () => {
    s3 = await startS3Server();
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    return startTestStore({
      flags: { 'store.blobs.s3.bucket': s3.bucket, 'store.blobs.s3.endpoint': s3.endpoint, 'store.blobs.s3.forcePathStyle': true, 'store.blobs.s3.prefix': 'thumbs', 'store.blobs.s3.partSizeBytes': 5 * MiB },
    });
  },
  async () => {
    await s3?.close();
  },
);
