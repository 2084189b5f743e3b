/**
 * Nextcloud chunked upload (bridge/uploads/nextcloud.ts) and the /remote.php/dav/ URL layout
 * (bridge/remote-dav.ts), against a real store and bridge: rclone >= 1.63's exact request
 * sequence (backend/webdav/chunking.go: DELETE purge, MKCOL, PUTs named `%015d-%015d` with
 * `Content-Type: application/x-www-form-urlencoded`, MOVE `.file` with an absolute Destination,
 * X-OC-Mtime and OC-Checksum), v2 with Destination and OC-Total-Length, parallel and re-sent
 * chunks, resume by PROPFIND, refusals (another user's folder, gaps, checksum, quota) and expiry.
 * Runs on both transports (integration, integration-http) and on PostgreSQL (integration-pg-bridge).
 */
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import net from 'node:net';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bridgeRequests, multistatusOf } from '../../helpers/dav-requests.js';
import { davProp } from '../../helpers/multistatus.js';
import { LocalBlobBackend } from '../../../src/store/blobs/local.js';
import { partSessions } from '../../helpers/upload-parts.js';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { S3BlobBackend } from '../../../src/store/blobs/s3.js';
import { bridgeFixture, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';
import { MiB, patternBytes, readAll } from '../../helpers/stream-helpers.js';
import { nodeId } from '../../../src/store-client/types.js';

/** The store's S3 backend when the bridge serves it in-process (PostgreSQL + S3), else undefined. */
function inProcessS3(f: BridgeFixture): S3BlobBackend | undefined {
  const blobs = f.store.ctx.blobs;
  return TEST_TRANSPORT === 'local' && blobs instanceof S3BlobBackend ? blobs : undefined;
}

/** Keys under `<prefix><folder>/` of the store's bucket. */
async function bucketKeys(f: BridgeFixture, s3: S3BlobBackend, folder: string): Promise<string[]> {
  const prefix = `${s3.prefix}${folder}/`;
  const listed = await s3.client.send(new ListObjectsV2Command({ Bucket: f.store.config.store.blobs.s3.bucket, Prefix: prefix }));
  return (listed.Contents ?? []).map((o) => (o.Key ?? '').slice(prefix.length)).sort();
}

/**
 * Every command the store's S3 client sends from now on, with its body's length: the requests
 * themselves, seen as they leave (an SDK middleware, nothing answered in their place).
 */
function recordS3(s3: S3BlobBackend): { sent: Array<{ command: string; key: string; bytes: number }>; stop(): void } {
  const sent: Array<{ command: string; key: string; bytes: number }> = [];
  const name = `record-${Math.random()}`;
  s3.client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; ContentLength?: number };
      sent.push({ command: context.commandName ?? '?', key: input.Key ?? '', bytes: input.ContentLength ?? 0 });
      return next(args);
    },
    { step: 'initialize', name },
  );
  return { sent, stop: () => s3.client.middlewareStack.remove(name) };
}

/** rclone's chunk names: first and last byte offsets, inclusive, 15 digits each. */
function v1Name(start: number, length: number): string {
  return `${String(start).padStart(15, '0')}-${String(start + length - 1).padStart(15, '0')}`;
}

const sha1 = (bytes: Buffer): string => createHash('sha1').update(bytes).digest('hex');

describe('Nextcloud chunked upload', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let bob: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 3600 } });
    alice = await f.newDavUser();
    bob = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav, storeEntries, lock } = bridgeRequests(() => f, () => alice);
  const files = (who: DavUser = alice): string => `/remote.php/dav/files/${encodeURIComponent(who.email)}`;
  const uploads = (who: DavUser = alice): string => `/remote.php/dav/uploads/${encodeURIComponent(who.email)}`;

  async function storedBytes(name: string, who: DavUser = alice): Promise<Buffer> {
    const entry = (await storeEntries('home', who)).find((e) => e.name === name);
    if (!entry) throw new Error(`${name} is not in home`);
    return readAll((await f.client.download(who.session, entry.id, entry.name)).body);
  }

  const partFolders = (): Promise<string[]> => partSessions(f);

  describe('/remote.php/dav/files/<user>/ is the drive', () => {
    it('lists the drive root and home with hrefs under the prefix', async () => {
      await dav('PUT', '/home/alias.txt', {}, 'through the plain path');
      const root = await multistatusOf(await dav('PROPFIND', `${files()}/`, { depth: '1' }));
      const hrefs = root.map((r) => r.href);
      expect(hrefs).toContain(`${files()}/`);
      expect(hrefs).toContain(`${files()}/home/`);
      const home = await multistatusOf(await dav('PROPFIND', `${files()}/home/`, { depth: '1' }));
      expect(home.map((r) => r.href)).toContain(`${files()}/home/alias.txt`);
      const got = await dav('GET', `${files()}/home/alias.txt`);
      expect(got.text).toBe('through the plain path');
    });

    it('writes and moves through the prefix, Destination under the prefix or the plain path', async () => {
      expect((await dav('PUT', `${files()}/home/a.txt`, {}, 'A')).status).toBe(201);
      expect((await dav('MOVE', `${files()}/home/a.txt`, { destination: `${f.davUrl}${files()}/home/b.txt` })).status).toBe(201);
      expect((await dav('MOVE', `${files()}/home/b.txt`, { destination: `${f.davUrl}/home/c.txt` })).status).toBe(201);
      expect((await storeEntries()).map((e) => e.name)).toContain('c.txt');
      expect((await storedBytes('c.txt')).toString()).toBe('A');
    });

    it('compares the user name as the store does (case-insensitively)', async () => {
      expect((await dav('PROPFIND', `${files().toUpperCase().replace('/REMOTE.PHP/DAV/FILES', '/remote.php/dav/files')}/home/`, { depth: '0' })).status).toBe(207);
    });

    it("answers 404 for another user's name, an unknown space, or no user, revealing nothing", async () => {
      for (const target of [`${files(bob)}/`, `${files(bob)}/home/`, '/remote.php/dav/files/nobody-here/', '/remote.php/dav/calendars/x/', '/remote.php/dav/files/', '/remote.php/dav/']) {
        expect((await dav('PROPFIND', target, { depth: '0' })).status, target).toBe(404);
      }
      expect((await dav('PUT', `${files(bob)}/home/x.txt`, {}, 'x')).status).toBe(404);
      expect((await storeEntries('home', bob)).map((e) => e.name)).not.toContain('x.txt');
    });

    it('asks for credentials before anything else', async () => {
      const answer = await bridgeRequests(() => f).davAs(undefined, 'PROPFIND', `${files()}/`, { depth: '0' });
      expect(answer.status).toBe(401);
    });
  });

  describe("rclone >= 1.63 (vendor nextcloud): its exact request sequence", () => {
    /** backend/webdav/chunking.go: purge, MKCOL, one PUT per chunk, MOVE .file; rclone's chunk size is 10 MiB by default, smaller here. */
    async function rcloneUpload(name: string, content: Buffer, chunkBytes: number, mtimeSec: number): Promise<ReturnType<typeof dav>> {
      const dir = `rclone-chunked-upload-${createHash('md5').update(`home/${name}`).digest('hex')}`;
      const purge = await dav('DELETE', `${uploads()}/${dir}/`);
      expect([204, 404]).toContain(purge.status);
      expect((await dav('MKCOL', `${uploads()}/${dir}/`)).status).toBe(201);
      for (let offset = 0; offset < content.length; offset += chunkBytes) {
        const chunk = content.subarray(offset, offset + chunkBytes);
        const put = await dav('PUT', `${uploads()}/${dir}/${v1Name(offset, chunk.length)}`, { 'content-type': 'application/x-www-form-urlencoded', 'content-length': String(chunk.length) }, chunk);
        expect(put.status).toBe(201);
      }
      return dav('MOVE', `${uploads()}/${dir}/.file`, {
        destination: `${f.davUrl}${files()}/home/${name}`,
        'x-oc-mtime': String(mtimeSec),
        'oc-checksum': `SHA1:${sha1(content)}`,
      });
    }

    it('assembles a new file (201 with ETag, OC-ETag, OC-FileId, X-OC-Mtime), then a new revision (204)', async () => {
      const content = patternBytes(0, 3 * MiB + 12345);
      const moved = await rcloneUpload('big.bin', content, MiB, 1_700_000_000);
      expect(moved.status).toBe(201);
      expect(moved.headers['x-oc-mtime']).toBe('accepted');
      expect(moved.headers.etag).toMatch(/^".+"$/);
      expect(moved.headers['oc-etag']).toBe(moved.headers.etag);
      const entry = (await storeEntries()).find((e) => e.name === 'big.bin');
      // Nextcloud's oc:id form: the numeric id zero-padded to 8 digits, then the instance id.
      expect(moved.headers['oc-fileid']).toMatch(new RegExp(`^0*${entry?.fileId}oc[a-z0-9]{10}$`));
      expect(sha1(await storedBytes('big.bin'))).toBe(sha1(content));
      // rclone then reads the file back at Depth 0: size and mtime as sent.
      const [stat] = await multistatusOf(await dav('PROPFIND', `${files()}/home/big.bin`, { depth: '0' }));
      expect(davProp(stat!, 'getcontentlength').text).toBe(String(content.length));
      expect(new Date(davProp(stat!, 'getlastmodified').text).getTime()).toBe(1_700_000_000_000);

      const second = patternBytes(7, 2 * MiB + 1);
      const again = await rcloneUpload('big.bin', second, MiB, 1_700_000_100);
      expect(again.status).toBe(204);
      const after = (await storeEntries()).find((e) => e.name === 'big.bin');
      expect(after?.id).toBe(entry?.id);
      expect(after?.revision).toBe((entry?.revision ?? 0) + 1);
      expect(sha1(await storedBytes('big.bin'))).toBe(sha1(second));
      // The sessions are gone with their parts.
      expect(await partFolders()).toEqual([]);
    });
  });

  describe('Nextcloud desktop and Android (v1 chunking): chunk names in 16 digits', () => {
    // chunkUrl of src/libsync/propagateuploadng.cpp in nextcloud/desktop before v2: the byte
    // offset `rightJustified(16, '0')` ("1e16 is 10 petabyte"), no Destination until the MOVE,
    // which sends OC-Total-Length. Nextcloud sorts the names and accepts any.
    it('assembles them in offset order', async () => {
      const content = patternBytes(17, 2 * MiB + 999);
      const folder = `${uploads()}/4242`;
      expect((await dav('MKCOL', folder)).status).toBe(201);
      const offsets = [MiB, 0, 2 * MiB];
      for (const offset of offsets) {
        const chunk = content.subarray(offset, Math.min(offset + MiB, content.length));
        expect((await dav('PUT', `${folder}/${String(offset).padStart(16, '0')}`, {}, chunk)).status).toBe(201);
      }
      const moved = await dav('MOVE', `${folder}/.file`, { destination: `${f.davUrl}${files()}/home/desktop.bin`, 'oc-total-length': String(content.length) });
      expect(moved.status).toBe(201);
      expect(sha1(await storedBytes('desktop.bin'))).toBe(sha1(content));
    });

    // uploadChunk of ChunkedFileUploadRemoteOperation in nextcloud/android-library before v2:
    // `%016d-%016d`, first and last byte.
    it("assembles Android's 16-digit start-end names", async () => {
      const content = patternBytes(19, MiB + 77);
      const folder = `${uploads()}/android-v1`;
      expect((await dav('MKCOL', folder)).status).toBe(201);
      for (const start of [0, MiB]) {
        const chunk = content.subarray(start, start + MiB);
        const name = `${String(start).padStart(16, '0')}-${String(start + chunk.length - 1).padStart(16, '0')}`;
        expect((await dav('PUT', `${folder}/${name}`, {}, chunk)).status).toBe(201);
      }
      expect((await dav('MOVE', `${folder}/.file`, { destination: `${f.davUrl}${files()}/home/android.bin` })).status).toBe(201);
      expect(sha1(await storedBytes('android.bin'))).toBe(sha1(content));
    });
  });

  // nextcloud-chunk-file-upload itself is test/clients/nextcloud-chunk-file-upload.test.ts; its
  // later versions make the target's folders first (createDirsRecursively), taking this answer
  // for "there already".
  it("answers MKCOL of an existing folder with Sabre's message, which clients read as success", async () => {
    const made = await dav('MKCOL', `${files()}/home`);
    expect(made.status).toBe(405);
    expect(made.text).toContain('<s:message>The resource you tried to create already exists</s:message>');
  });

  it('refuses a chunk without a Content-Length (411) and keeps nothing of it: no part escapes the quota check', async () => {
    const id = `no-length-${Date.now()}`;
    expect((await dav('MKCOL', `${uploads()}/${id}`)).status).toBe(201);
    // A stream body goes out with Transfer-Encoding: chunked, no Content-Length.
    const answer = await dav('PUT', `${uploads()}/${id}/000000000000000-000000000000009`, {}, Readable.from([Buffer.from('0123456789')]));
    expect(answer.status).toBe(411);
    const listed = await multistatusOf(await dav('PROPFIND', `${uploads()}/${id}/`, { depth: '1' }));
    expect(listed.map((r) => r.href).filter((h) => !h.endsWith(`${id}/`))).toEqual([]);
    expect((await dav('DELETE', `${uploads()}/${id}`)).status).toBe(204);
  });

  describe('a chunk cut off mid-body', () => {
    it('keeps nothing of it; the chunk sent again lands and the upload assembles', async () => {
      const id = `${uploads()}/cut-chunk`;
      const content = patternBytes(9, 3 * MiB);
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      const name = v1Name(0, content.length);
      // Content-Length of the whole chunk, a third of it sent, then the connection dropped.
      const url = new URL(f.davUrl);
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(Number(url.port), url.hostname, () => {
          socket.write(`PUT ${id}/${name} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: ${alice.auth}\r\nContent-Length: ${content.length}\r\n\r\n`);
          socket.write(content.subarray(0, MiB), () => setTimeout(() => socket.destroy(), 200));
        });
        socket.on('close', () => resolve());
        socket.on('error', reject);
      });
      // The bridge notices the cut in its own time: bounded wait until no part is listed.
      const listed = async (): Promise<string[]> => (await multistatusOf(await dav('PROPFIND', `${id}/`, { depth: '1' }))).map((r) => r.href).filter((h) => !h.endsWith('/'));
      expect(await listed()).toEqual([]);
      expect((await dav('PUT', `${id}/${name}`, {}, content)).status).toBe(201);
      expect(await listed()).toEqual([`${id}/${name}`]);
      expect((await dav('MOVE', `${id}/.file`, { destination: `${f.davUrl}${files()}/home/cut.bin` })).status).toBe(201);
      expect(sha1(await storedBytes('cut.bin'))).toBe(sha1(content));
      if (TEST_TRANSPORT === 'http' || !(f.store.ctx.blobs instanceof S3BlobBackend)) {
        // No half-written part file stays behind in the folder either.
        expect(await partFolders()).toEqual([]);
      }
    });
  });

  describe('assembly without a second copy (local blob backend in-process: staged-parts.ts)', () => {
    /** Inode numbers of the sessions' assembled files (`<dataDir>/uploads/<session>/data`). */
    function assembledInodes(): Set<number> {
      const dir = path.join(f.store.config.dataDir, 'uploads');
      const files = existsSync(dir) ? readdirSync(dir).map((s) => path.join(dir, s, 'data')).filter((p) => existsSync(p)) : [];
      return new Set(files.map((p) => statSync(p).ino));
    }

    it('takes v1 chunks in parallel and out of order, a re-sent one, and the assembled file becomes the blob; checksums as a PUT records them', async () => {
      const inPlace = TEST_TRANSPORT === 'local' && f.store.ctx.blobs instanceof LocalBlobBackend;
      const content = patternBytes(21, 6 * MiB + 77);
      const id = `${uploads()}/in-place`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      const starts = Array.from({ length: 7 }, (_, i) => i * MiB);
      const chunk = (start: number): Buffer => content.subarray(start, start + MiB);
      const puts = await Promise.all([...starts].reverse().map((start) => dav('PUT', `${id}/${v1Name(start, chunk(start).length)}`, {}, chunk(start))));
      expect(puts.map((p) => p.status)).toEqual(starts.map(() => 201));
      // Chunk 2 re-sent with wrong bytes, then with the right ones; chunk 4 re-sent unchanged (its
      // place is taken, so that copy is a file of its own, written into its place at assembly).
      expect((await dav('PUT', `${id}/${v1Name(2 * MiB, MiB)}`, {}, Buffer.alloc(MiB, 1))).status).toBe(204);
      expect((await dav('PUT', `${id}/${v1Name(2 * MiB, MiB)}`, {}, chunk(2 * MiB))).status).toBe(204);
      expect((await dav('PUT', `${id}/${v1Name(4 * MiB, MiB)}`, {}, chunk(4 * MiB))).status).toBe(204);
      const before = inPlace ? assembledInodes() : new Set<number>();
      if (inPlace) expect(before.size).toBeGreaterThan(0);
      const moved = await dav('MOVE', `${id}/.file`, { destination: `${f.davUrl}${files()}/home/in-place.bin`, 'oc-total-length': String(content.length) });
      expect(moved.status).toBe(201);
      expect(sha1(await storedBytes('in-place.bin'))).toBe(sha1(content));
      // The same bytes by one PUT: the same checksums recorded.
      expect((await dav('PUT', '/home/one-put.bin', {}, content)).status).toBe(201);
      const entries = await storeEntries();
      const assembled = entries.find((e) => e.name === 'in-place.bin');
      expect(assembled?.checksums).toEqual({ sha1: sha1(content), md5: createHash('md5').update(content).digest('hex') });
      expect(assembled?.checksums).toEqual(entries.find((e) => e.name === 'one-put.bin')?.checksums);
      if (inPlace) {
        // The blob is the very file the chunks were written into: no byte was copied again.
        const blobs = path.join(f.store.config.dataDir, 'blobs');
        const blob = readdirSync(blobs, { recursive: true, withFileTypes: true }).find((e) => e.isFile() && before.has(statSync(path.join(e.parentPath, e.name)).ino));
        expect(blob).toBeDefined();
        expect(statSync(path.join(blob!.parentPath, blob!.name)).size).toBe(content.length);
      }
      expect(await partFolders()).not.toContain(expect.stringContaining('in-place'));
      expect((await dav('PROPFIND', `${id}/`, { depth: '0' })).status).toBe(404);
    });

    it('refuses an OC-Checksum the assembled bytes contradict and changes nothing; the upload stays whole for the right one', async () => {
      const old = patternBytes(5, 100 * 1024);
      const content = patternBytes(6, 2 * MiB + 3);
      expect((await dav('PUT', '/home/sum-big.bin', {}, old)).status).toBe(201);
      const id = `${uploads()}/checksum-big`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      for (const start of [0, MiB, 2 * MiB]) expect((await dav('PUT', `${id}/${v1Name(start, content.subarray(start, start + MiB).length)}`, {}, content.subarray(start, start + MiB))).status).toBe(201);
      const destination = `${f.davUrl}${files()}/home/sum-big.bin`;
      const entry = (await storeEntries()).find((e) => e.name === 'sum-big.bin');
      const wrong = await dav('MOVE', `${id}/.file`, { destination, 'oc-checksum': `SHA1:${sha1(old)}` });
      expect(wrong.status).toBe(400);
      expect(sha1(await storedBytes('sum-big.bin'))).toBe(sha1(old));
      expect((await storeEntries()).find((e) => e.name === 'sum-big.bin')?.revision).toBe(entry?.revision);
      const right = await dav('MOVE', `${id}/.file`, { destination, 'oc-checksum': `MD5:${createHash('md5').update(content).digest('hex')}` });
      expect(right.status).toBe(204);
      expect(sha1(await storedBytes('sum-big.bin'))).toBe(sha1(content));
      expect((await storeEntries()).find((e) => e.name === 'sum-big.bin')?.revision).toBe((entry?.revision ?? 0) + 1);
    });
  });

  describe('assembly without a second copy (S3 in-process: the chunks are multipart parts)', () => {
    const blake3Keys = (keys: string[]): string[] => keys.filter((k) => /^[0-9a-f]{64}$/.test(k));

    it('completes v2 chunks sent in parallel as one object that becomes the blob: no part objects, no second upload of the bytes; the same bytes again are deduplicated', async () => {
      const s3 = inProcessS3(f);
      if (!s3) return;
      const content = patternBytes(31, 3 * 5 * MiB + 77);
      const chunkBytes = 5 * MiB;
      const count = Math.ceil(content.length / chunkBytes);
      const chunkOf = (n: number): Buffer => content.subarray((n - 1) * chunkBytes, n * chunkBytes);
      const blobsBefore = blake3Keys(await bucketKeys(f, s3, 'blobs'));
      const adoptedBefore = await bucketKeys(f, s3, 'adopted');
      const upload = async (name: string, target: string): Promise<void> => {
        const v2 = { destination: `${f.davUrl}${files()}/home/${target}`, 'oc-total-length': String(content.length) };
        const id = `${uploads()}/${name}`;
        expect((await dav('MKCOL', `${id}/`, v2)).status).toBe(201);
        const numbers = Array.from({ length: count }, (_, i) => count - i);
        const puts = await Promise.all(numbers.map((n) => dav('PUT', `${id}/${n}`, v2, chunkOf(n))));
        expect(puts.map((p) => p.status)).toEqual(numbers.map(() => 201));
        // Chunk 2 re-sent: its place is taken, so this copy is an object of its own, made its part at assembly.
        expect((await dav('PUT', `${id}/2`, v2, chunkOf(2))).status).toBe(204);
        expect((await dav('MOVE', `${id}/.file`, { ...v2, 'oc-checksum': `SHA1:${sha1(content)}` })).status).toBe(201);
      };
      const record = recordS3(s3);
      try {
        await upload('s3-mp', 's3-mp.bin');
      } finally {
        record.stop();
      }
      expect(sha1(await storedBytes('s3-mp.bin'))).toBe(sha1(content));
      const entries = await storeEntries();
      expect(entries.find((e) => e.name === 's3-mp.bin')?.checksums).toEqual({ sha1: sha1(content), md5: createHash('md5').update(content).digest('hex') });
      // The bytes went up once, no blob upload: the parts as sent (chunk 2 twice), and copied at
      // assembly only the parts that were objects of their own (the re-sent chunk 2, the last one of 77 bytes).
      const up = record.sent.filter((r) => r.command === 'PutObjectCommand' || r.command === 'UploadPartCommand');
      expect(up.reduce((sum, r) => sum + r.bytes, 0)).toBe(content.length + chunkBytes + (chunkBytes + 77));
      expect(up.filter((r) => r.key.includes('/blobs/') || r.key.startsWith('blobs/'))).toEqual([]);
      expect(record.sent.filter((r) => r.command === 'CompleteMultipartUploadCommand')).toHaveLength(1);
      // One object holds the blob (adopted where its parts went), none under blobs/, no part objects left.
      expect(blake3Keys(await bucketKeys(f, s3, 'blobs'))).toEqual(blobsBefore);
      const adopted = (await bucketKeys(f, s3, 'adopted')).filter((k) => !adoptedBefore.includes(k));
      expect(adopted).toHaveLength(1);
      expect(await partFolders()).toEqual([]);
      // The same bytes again: the new object is dropped with its session, the blob kept.
      await upload('s3-mp-again', 's3-mp-again.bin');
      expect(sha1(await storedBytes('s3-mp-again.bin'))).toBe(sha1(content));
      expect((await bucketKeys(f, s3, 'adopted')).filter((k) => !adoptedBefore.includes(k))).toEqual(adopted);
      expect(blake3Keys(await bucketKeys(f, s3, 'blobs'))).toEqual(blobsBefore);
      expect(await partFolders()).toEqual([]);
    });

    it('assembles v1 chunks S3 cannot take as parts in their order (a 2 MiB one between multipart ones) by reading them, every byte right', async () => {
      const s3 = inProcessS3(f);
      if (!s3) return;
      const content = patternBytes(33, 14 * MiB + 100);
      const layout = [
        { start: 0, length: 6 * MiB },
        { start: 6 * MiB, length: 2 * MiB },
        { start: 8 * MiB, length: 6 * MiB },
        { start: 14 * MiB, length: 100 },
      ];
      const id = `${uploads()}/s3-irregular`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      const puts = await Promise.all(layout.map(({ start, length }) => dav('PUT', `${id}/${v1Name(start, length)}`, {}, content.subarray(start, start + length))));
      expect(puts.map((p) => p.status)).toEqual(layout.map(() => 201));
      const moved = await dav('MOVE', `${id}/.file`, { destination: `${f.davUrl}${files()}/home/s3-irregular.bin`, 'oc-total-length': String(content.length), 'oc-checksum': `SHA1:${sha1(content)}` });
      expect(moved.status).toBe(201);
      expect(sha1(await storedBytes('s3-irregular.bin'))).toBe(sha1(content));
      expect(await partFolders()).toEqual([]);
    });

    it('checks the quota against the total at assembly (507) and changes nothing', async () => {
      const s3 = inProcessS3(f);
      if (!s3) return;
      const carol = await f.newDavUser({ quotaBytes: 12 * MiB });
      const base = `/remote.php/dav/uploads/${encodeURIComponent(carol.email)}/over`;
      const dest = `${f.davUrl}/remote.php/dav/files/${encodeURIComponent(carol.email)}/home/over.bin`;
      const asCarol = bridgeRequests(() => f, () => carol).dav;
      expect((await asCarol('MKCOL', `${base}/`, { destination: dest })).status).toBe(201);
      const content = patternBytes(8, 10 * MiB);
      for (const n of [1, 2]) expect((await asCarol('PUT', `${base}/${n}`, { destination: dest }, content.subarray((n - 1) * 5 * MiB, n * 5 * MiB))).status).toBe(201);
      // Through the bridge the chunks' reservation holds the room (a PUT there is 507); the
      // store's own upload, which knows no reservation of the bridge's, fills the drive meanwhile.
      expect((await asCarol('PUT', '/home/filler.bin', {}, patternBytes(9, 4 * MiB))).status).toBe(507);
      const filler = patternBytes(9, 4 * MiB);
      await f.client.upload(carol.session, { folder: nodeId('home'), name: 'filler.bin' }, filler, filler.length);
      const adoptedBefore = await bucketKeys(f, s3, 'adopted');
      expect((await asCarol('MOVE', `${base}/.file`, { destination: dest, 'oc-total-length': String(content.length) })).status).toBe(507);
      expect(await bucketKeys(f, s3, 'adopted')).toEqual(adoptedBefore);
      expect((await asCarol('PROPFIND', `${base}/`, { depth: '1' })).status).toBe(207);
    });
  });

  describe('v2: Destination and OC-Total-Length on every request', () => {
    it('takes numbered chunks in any order and in parallel, lists them for a resume, and replaces a re-sent one', async () => {
      const content = patternBytes(3, 5 * MiB + 999);
      const chunkBytes = MiB;
      const count = Math.ceil(content.length / chunkBytes);
      const destination = `${f.davUrl}${files()}/home/v2.bin`;
      const v2 = { destination, 'oc-total-length': String(content.length) };
      const id = `${uploads()}/web-file-upload-123`;
      expect((await dav('MKCOL', `${id}/`, v2)).status).toBe(201);
      const chunkOf = (n: number): Buffer => content.subarray((n - 1) * chunkBytes, n * chunkBytes);
      // Every chunk but the third, all at once, last first.
      const numbers = Array.from({ length: count }, (_, i) => count - i).filter((n) => n !== 3);
      const puts = await Promise.all(numbers.map((n) => dav('PUT', `${id}/${n}`, v2, chunkOf(n))));
      expect(puts.map((p) => p.status)).toEqual(numbers.map(() => 201));

      // A client resuming asks what arrived.
      const listed = await multistatusOf(await dav('PROPFIND', `${id}/`, { depth: '1' }));
      const sizes = new Map(listed.filter((r) => !r.href.endsWith('/')).map((r) => [r.href.slice(r.href.lastIndexOf('/') + 1), Number(davProp(r, 'getcontentlength').text)]));
      expect([...sizes.keys()].sort()).toEqual(numbers.map(String).sort());
      expect(sizes.get('1')).toBe(chunkBytes);

      // Assembling now says what is missing; nothing is written.
      const early = await dav('MOVE', `${id}/.file`, v2);
      expect(early.status).toBe(400);
      expect(early.text).toContain('chunk 3 is missing');
      expect((await storeEntries()).map((e) => e.name)).not.toContain('v2.bin');

      // Chunk 2 re-sent with wrong bytes, then again with the right ones: the last copy counts.
      expect((await dav('PUT', `${id}/2`, v2, Buffer.alloc(chunkBytes, 1))).status).toBe(204);
      expect((await dav('PUT', `${id}/2`, v2, chunkOf(2))).status).toBe(204);
      expect((await dav('PUT', `${id}/3`, v2, chunkOf(3))).status).toBe(201);
      const moved = await dav('MOVE', `${id}/.file`, { ...v2, 'x-oc-mtime': '1700000200' });
      expect(moved.status).toBe(201);
      expect(sha1(await storedBytes('v2.bin'))).toBe(sha1(content));
      expect((await dav('PROPFIND', `${id}/`, { depth: '0' })).status).toBe(404);
    });

    it('refuses chunk names outside 1..10000 and a Destination other than the upload’s', async () => {
      const v2 = { destination: `${f.davUrl}${files()}/home/names.bin` };
      const id = `${uploads()}/names`;
      expect((await dav('MKCOL', `${id}/`, v2)).status).toBe(201);
      expect((await dav('PUT', `${id}/0`, v2, 'x')).status).toBe(400);
      expect((await dav('PUT', `${id}/10001`, v2, 'x')).status).toBe(400);
      expect((await dav('PUT', `${id}/000000000000000-000000000000000`, v2, 'x')).status).toBe(400);
      expect((await dav('PUT', `${id}/1`, { destination: `${f.davUrl}${files()}/home/other.bin` }, 'x')).status).toBe(400);
      expect((await dav('MKCOL', `${id}/`, v2)).status).toBe(405);
      expect((await dav('DELETE', `${id}/`)).status).toBe(204);
    });
  });

  describe('refusals', () => {
    it('holds a v1 chunk to the file its name implies: past the quota 507, past OC-Total-Length 400, far past any disk no 500', async () => {
      const small = await f.newDavUser({ quotaBytes: 10 * MiB });
      const id = `${uploads(small)}/far-away`;
      expect((await dav('MKCOL', `${id}/`, {}, undefined, small)).status).toBe(201);
      const far = (start: number): string => `${String(start).padStart(16, '0')}-${String(start + 9).padStart(16, '0')}`;
      // Ten bytes at 1 TiB make a file of 1 TiB: before, 201 and a sparse 1 TiB file on disk.
      expect((await dav('PUT', `${id}/${far(2 ** 40)}`, {}, '0123456789', small)).status).toBe(507);
      expect((await dav('PUT', `${id}/${far(0)}`, { 'oc-total-length': '10' }, '0123456789', small)).status).toBe(201);
      expect((await dav('PUT', `${id}/${far(5)}`, {}, '0123456789', small)).status).toBe(400);
      expect((await dav('DELETE', `${id}/`, {}, undefined, small)).status).toBe(204);
      // No quota: past what a file system holds (ext4: 16 TiB) the write failed with EFBIG, a 500.
      const open = `${uploads()}/far-away`;
      expect((await dav('MKCOL', `${open}/`)).status).toBe(201);
      for (const start of [2 ** 45, 9_007_199_254_740_000]) expect((await dav('PUT', `${open}/${far(start)}`, {}, '0123456789')).status).toBe(201);
      expect((await dav('MOVE', `${open}/.file`, { destination: `${f.davUrl}${files()}/home/far.bin` })).status).toBe(400);
      expect((await dav('DELETE', `${open}/`)).status).toBe(204);
    });

    it('leaves the parts to a MOVE that claimed the upload after a DELETE found it (423), so no commit loses its bytes', async () => {
      const id = `${uploads()}/deleted-while-moving`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      expect((await dav('PUT', `${id}/${v1Name(0, 3)}`, {}, 'abc')).status).toBe(201);
      const service = f.bridge.services.uploads;
      // The DELETE's read of the session, before the MOVE's claim: it saw no assembly.
      const seenByDelete = await service.find(alice.uuid, 'deleted-while-moving');
      if (!seenByDelete) throw new Error('no session');
      const done = new Error('the assembly ends here');
      await expect(service.whileAssembling(seenByDelete, async () => {
        // Before, the removal went ahead: the parts (on S3 the completed object) went from under the assembly.
        await expect(service.remove(seenByDelete)).rejects.toThrow(/being assembled/);
        expect((await multistatusOf(await dav('PROPFIND', `${id}/`, { depth: '1' }))).map((r) => r.href)).toEqual([`${id}/`, `${id}/${v1Name(0, 3)}`]);
        throw done;
      })).rejects.toBe(done);
      expect((await dav('DELETE', `${id}/`)).status).toBe(204);
      expect((await dav('PROPFIND', `${id}/`, { depth: '0' })).status).toBe(404);
    });

    it("keeps an upload folder its user's alone: another user gets 404 for every verb, and their own space is theirs", async () => {
      const id = `${uploads()}/private-upload`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      expect((await dav('PUT', `${id}/${v1Name(0, 3)}`, {}, 'abc')).status).toBe(201);
      // Bob through Alice's URL: not his space.
      for (const [method, headers] of [['PROPFIND', { depth: '1' }], ['PUT', {}], ['DELETE', {}], ['MKCOL', {}]] as const) {
        expect((await dav(method, method === 'PUT' ? `${id}/${v1Name(3, 1)}` : `${id}/`, headers, method === 'PUT' ? 'd' : undefined, bob)).status, method).toBe(404);
      }
      // Bob's own space: the same folder name is not Alice's session.
      const bobs = `${uploads(bob)}/private-upload`;
      expect((await dav('PUT', `${bobs}/${v1Name(3, 1)}`, {}, 'd', bob)).status).toBe(404);
      expect((await dav('MOVE', `${bobs}/.file`, { destination: `${f.davUrl}${files(bob)}/home/stolen.txt` }, undefined, bob)).status).toBe(404);
      expect((await dav('PROPFIND', `${uploads(bob)}/`, { depth: '1' }, undefined, bob)).text).not.toContain('private-upload');
      // Alice's session is untouched.
      const listed = await multistatusOf(await dav('PROPFIND', `${id}/`, { depth: '1' }));
      expect(listed.map((r) => r.href)).toEqual([`${id}/`, `${id}/${v1Name(0, 3)}`]);
      expect((await dav('DELETE', `${id}/`)).status).toBe(204);
    });

    it('refuses a gap or an overlap in v1 offsets, and totals that do not add up, with a message', async () => {
      const id = `${uploads()}/gaps`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      await dav('PUT', `${id}/${v1Name(0, 4)}`, {}, 'abcd');
      await dav('PUT', `${id}/${v1Name(6, 2)}`, {}, 'gh');
      const destination = { destination: `${f.davUrl}${files()}/home/gaps.txt` };
      const gap = await dav('MOVE', `${id}/.file`, destination);
      expect(gap.status).toBe(400);
      expect(gap.text).toContain('bytes 4 to 5 are missing');
      await dav('PUT', `${id}/${v1Name(4, 2)}`, {}, 'ef');
      const short = await dav('MOVE', `${id}/.file`, { ...destination, 'oc-total-length': '9' });
      expect(short.status).toBe(400);
      expect(short.text).toContain('the chunks hold 8 of the 9 bytes');
      expect((await dav('MOVE', `${id}/.file`, destination)).status).toBe(201);
      expect((await storedBytes('gaps.txt')).toString()).toBe('abcdefgh');
    });

    it('refuses an OC-Checksum the bytes contradict with 400, the target unchanged and the upload kept', async () => {
      await dav('PUT', '/home/sum.txt', {}, 'old content');
      const id = `${uploads()}/checksum`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      await dav('PUT', `${id}/${v1Name(0, 11)}`, {}, 'new content');
      const wrong = await dav('MOVE', `${id}/.file`, { destination: `${f.davUrl}${files()}/home/sum.txt`, 'oc-checksum': `SHA1:${sha1(Buffer.from('something else'))}` });
      expect(wrong.status).toBe(400);
      expect((await storedBytes('sum.txt')).toString()).toBe('old content');
      const right = await dav('MOVE', `${id}/.file`, { destination: `${f.davUrl}${files()}/home/sum.txt`, 'oc-checksum': `SHA1:${sha1(Buffer.from('new content'))}` });
      expect(right.status).toBe(204);
      expect((await storedBytes('sum.txt')).toString()).toBe('new content');
    });

    it('honours locks and the If header on the target as a PUT does', async () => {
      await dav('PUT', '/home/locked.txt', {}, 'locked content');
      const token = await lock(`${files()}/home/locked.txt`);
      const id = `${uploads()}/onto-locked`;
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      await dav('PUT', `${id}/${v1Name(0, 3)}`, {}, 'new');
      const destination = { destination: `${f.davUrl}${files()}/home/locked.txt` };
      expect((await dav('MOVE', `${id}/.file`, destination)).status).toBe(423);
      expect((await dav('MOVE', `${id}/.file`, { ...destination, if: '(["not-the-etag"])' })).status).toBe(412);
      expect((await storedBytes('locked.txt')).toString()).toBe('locked content');
      expect((await dav('MOVE', `${id}/.file`, { ...destination, if: `(<${token}>)` })).status).toBe(204);
      expect((await storedBytes('locked.txt')).toString()).toBe('new');
    });

    it('refuses a v2 upload aimed into the trash or any made-up place at its MKCOL, with a message, leaving no session', async () => {
      const who = await f.newDavUser();
      expect((await dav('MKCOL', '/home/binned-dir/', {}, undefined, who)).status).toBe(201);
      expect((await dav('DELETE', '/home/binned-dir/', {}, undefined, who)).status).toBe(204);
      const places: Array<[string, number]> = [
        ['/trash/landed.bin', 403],
        ['/trash/binned-dir/landed.bin', 403],
        ['/favorites/landed.bin', 403],
        ['/shared_with_you/landed.bin', 403],
        ['/groups/landed.bin', 403],
        ['/landed.bin', 403],
      ];
      for (const [place, status] of places) {
        const refused = await dav('MKCOL', `${uploads(who)}/made-up/`, { destination: `${f.davUrl}${files(who)}${place}`, 'oc-total-length': '3' }, undefined, who);
        expect(refused.status, place).toBe(status);
        expect(refused.text, place).toContain('<s:message>');
      }
      expect(await multistatusOf(await dav('PROPFIND', `${uploads(who)}/`, { depth: '1' }, undefined, who))).toHaveLength(1);
    });

    it('refuses an upload over quota at its start (507), leaving no session and no part', async () => {
      const small = await f.newDavUser({ quotaBytes: 2 * MiB });
      const v2 = { destination: `${f.davUrl}${files(small)}/home/huge.bin`, 'oc-total-length': String(3 * MiB) };
      const before = await partFolders();
      const refused = await dav('MKCOL', `${uploads(small)}/huge/`, v2, undefined, small);
      expect(refused.status).toBe(507);
      expect((await dav('PUT', `${uploads(small)}/huge/1`, v2, 'x', small)).status).toBe(404);
      expect(await multistatusOf(await dav('PROPFIND', `${uploads(small)}/`, { depth: '1' }, undefined, small))).toHaveLength(1);
      expect(await partFolders()).toEqual(before);
      // v1 learns the total from its first PUT: refused there, the chunk not kept.
      expect((await dav('MKCOL', `${uploads(small)}/huge-v1/`, {}, undefined, small)).status).toBe(201);
      const put = await dav('PUT', `${uploads(small)}/huge-v1/${v1Name(0, 4)}`, { 'oc-total-length': String(3 * MiB) }, 'abcd', small);
      expect(put.status).toBe(507);
      expect(await multistatusOf(await dav('PROPFIND', `${uploads(small)}/huge-v1/`, { depth: '1' }, undefined, small))).toHaveLength(1);
      // rclone sends no total: the chunk that would cross the quota is refused, those before it kept.
      const first = patternBytes(0, 1.5 * MiB);
      expect((await dav('PUT', `${uploads(small)}/huge-v1/${v1Name(0, first.length)}`, {}, first, small)).status).toBe(201);
      const crossing = await dav('PUT', `${uploads(small)}/huge-v1/${v1Name(first.length, MiB)}`, {}, patternBytes(first.length, MiB), small);
      expect(crossing.status).toBe(507);
      const listed = await multistatusOf(await dav('PROPFIND', `${uploads(small)}/huge-v1/`, { depth: '1' }, undefined, small));
      expect(listed.map((r) => r.href)).toEqual([`${uploads(small)}/huge-v1/`, `${uploads(small)}/huge-v1/${v1Name(0, first.length)}`]);
      // A chunk re-sent replaces its copy and is not counted twice.
      expect((await dav('PUT', `${uploads(small)}/huge-v1/${v1Name(0, first.length)}`, {}, first, small)).status).toBe(204);
      // What huge-v1's chunk holds counts against every other upload of the user's too.
      const parked = { destination: `${f.davUrl}${files(small)}/home/parked.bin`, 'oc-total-length': String(MiB) };
      expect((await dav('MKCOL', `${uploads(small)}/parked/`, parked, undefined, small)).status).toBe(507);
      expect((await dav('DELETE', `${uploads(small)}/huge-v1/`, {}, undefined, small)).status).toBe(204);
      // With a total within quota, a client cannot park more chunk bytes than the quota holds either.
      expect((await dav('MKCOL', `${uploads(small)}/parked/`, parked, undefined, small)).status).toBe(201);
      expect((await dav('PUT', `${uploads(small)}/parked/1`, parked, patternBytes(0, MiB), small)).status).toBe(201);
      // Chunk 2 of 1.5 MiB ends past the 1 MiB total whatever chunk 1 holds (400); chunks that each
      // fit the total are held to the quota together (507 at the one crossing it).
      expect((await dav('PUT', `${uploads(small)}/parked/2`, parked, patternBytes(0, 1.5 * MiB), small)).status).toBe(400);
      expect((await dav('PUT', `${uploads(small)}/parked/2`, parked, patternBytes(0, MiB / 2), small)).status).toBe(201);
      expect((await dav('PUT', `${uploads(small)}/parked/3`, parked, patternBytes(0, MiB / 2), small)).status).toBe(201);
      expect((await dav('PUT', `${uploads(small)}/parked/4`, parked, patternBytes(0, MiB / 2), small)).status).toBe(507);
      expect((await dav('DELETE', `${uploads(small)}/parked/`, {}, undefined, small)).status).toBe(204);
    });

    it('answers a second MOVE during an assembly with 423 (then 404), and the file gets one revision', async () => {
      await dav('PUT', '/home/once.bin', {}, 'before');
      const revision = (await storeEntries()).find((e) => e.name === 'once.bin')?.revision ?? 0;
      const id = `${uploads()}/twice`;
      const content = patternBytes(1, 8 * MiB);
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      for (let offset = 0; offset < content.length; offset += 2 * MiB) {
        expect((await dav('PUT', `${id}/${v1Name(offset, 2 * MiB)}`, {}, content.subarray(offset, offset + 2 * MiB))).status).toBe(201);
      }
      const destination = { destination: `${f.davUrl}${files()}/home/once.bin` };
      const [first, second] = await Promise.all([dav('MOVE', `${id}/.file`, destination), dav('MOVE', `${id}/.file`, destination)]);
      const statuses = [first.status, second.status].sort();
      expect(statuses[0]).toBe(204);
      expect([404, 423]).toContain(statuses[1]);
      const after = (await storeEntries()).find((e) => e.name === 'once.bin');
      expect(after?.revision).toBe(revision + 1);
      expect(sha1(await storedBytes('once.bin'))).toBe(sha1(content));
    });

    it('DELETE aborts: the folder and its parts are gone', async () => {
      const id = `${uploads()}/aborted`;
      const before = await partFolders();
      expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
      expect((await dav('PUT', `${id}/${v1Name(0, 5)}`, {}, 'hello')).status).toBe(201);
      expect((await partFolders()).length).toBe(before.length + 1);
      expect((await dav('DELETE', `${id}/`)).status).toBe(204);
      expect(await partFolders()).toEqual(before);
      expect((await dav('PROPFIND', `${id}/`, { depth: '0' })).status).toBe(404);
      expect((await dav('DELETE', `${id}/`)).status).toBe(404);
    });
  });
});

describe('Nextcloud chunked upload: expiry', () => {
  let f: BridgeFixture;
  let user: DavUser;

  beforeAll(async () => {
    f = await bridgeFixture({ bridgeFlags: { uploadExpirySec: 1 } });
    user = await f.newDavUser();
  });
  afterAll(async () => {
    await f.close();
  });

  const { dav } = bridgeRequests(() => f, () => user);

  it('removes an abandoned upload and its parts after bridge.uploadExpirySec', async () => {
    const id = `/remote.php/dav/uploads/${encodeURIComponent(user.email)}/abandoned`;
    expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
    expect((await dav('PUT', `${id}/${v1Name(0, 5)}`, {}, 'hello')).status).toBe(201);
    expect(await partSessions(f)).toHaveLength(1);
    // The sweep runs every second here; bounded wait.
    const deadline = Date.now() + 10_000;
    while ((await partSessions(f)).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await partSessions(f)).toEqual([]);
    expect((await dav('PROPFIND', `${id}/`, { depth: '0' })).status).toBe(404);
    expect((await dav('PUT', `${id}/${v1Name(5, 1)}`, {}, '!')).status).toBe(404);
  });

  it('on S3, aborts the multipart upload of an abandoned one and leaves no object', async () => {
    const s3 = inProcessS3(f);
    if (!s3) return;
    const id = `/remote.php/dav/uploads/${encodeURIComponent(user.email)}/abandoned-mp`;
    expect((await dav('MKCOL', `${id}/`)).status).toBe(201);
    const record = recordS3(s3);
    try {
      // A 5 MiB chunk is a multipart part; the 5-byte one an object of its own.
      expect((await dav('PUT', `${id}/${v1Name(0, 5 * MiB)}`, {}, patternBytes(4, 5 * MiB))).status).toBe(201);
      expect((await dav('PUT', `${id}/${v1Name(5 * MiB, 5)}`, {}, 'hello')).status).toBe(201);
      const uploadId = record.sent.find((r) => r.command === 'UploadPartCommand')?.key;
      expect(uploadId).toContain('adopted/');
      const deadline = Date.now() + 10_000;
      while (!record.sent.some((r) => r.command === 'AbortMultipartUploadCommand') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      // s3rver answers AbortMultipartUpload 405 (not implemented there): what counts is that it was asked.
      expect(record.sent.filter((r) => r.command === 'AbortMultipartUploadCommand').map((r) => r.key)).toEqual([uploadId]);
    } finally {
      record.stop();
    }
    // The sweep aborts the upload, deletes the object, then ends the intent (s3-parts.ts: last, so
    // a crash leaves it to the collector): wait for that last step, not only the first ones.
    const intents = () => f.store.ctx.storage.sql.all("SELECT id FROM blob_intents WHERE id LIKE 'mp-%'");
    const deadline = Date.now() + 10_000;
    while (((await partSessions(f)).length > 0 || (await intents()).length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await partSessions(f)).toEqual([]);
    expect(await bucketKeys(f, s3, 'adopted')).toEqual([]);
    // Its intent is gone too: nothing is left for the collector.
    expect(await intents()).toEqual([]);
  });
});
