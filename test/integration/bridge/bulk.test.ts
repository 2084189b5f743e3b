/**
 * Bulk upload (`POST /remote.php/dav/bulk`, bridge/uploads/bulk.ts) with raw multipart bodies
 * as the Nextcloud desktop client sends them (libsync putmultifilejob.cpp: multipart/related,
 * per part X-File-Path, X-File-Mtime, X-File-MD5 as hex, Content-Length): every part goes
 * through the one write path, so a part over quota, into a read-only group drive or under
 * someone else's lock, or whose MD5 is wrong, is refused in its own JSON entry while the others
 * land; a body that is not a well-formed bulk upload is a 400 and nothing is written; the parts of
 * one request are committed with one group commit (one WAL fsync, not one per file).
 */
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NodeId } from '../../../src/store-client/index.js';
import { BULK_CONCURRENCY } from '../../../src/bridge/bulk-gate.js';
import { bridgeRequests, EXCLUSIVE_LOCKINFO } from '../../helpers/dav-requests.js';
import { groupAdmin } from '../../helpers/groups.js';
import { bridgeFixture, TEST_TRANSPORT, type BridgeFixture, type DavUser } from '../../helpers/start-bridge.js';

const TEAM = 'Bulk Crew';
const ALL = ['read', 'write', 'delete', 'download'];
const BOUNDARY = 'boundary_bf38b9b4b10a303a28ed075624db3978';

let f: BridgeFixture;
let team: string;
let alice: DavUser;
let carol: DavUser;
let small: DavUser;
const { dav, davAs } = bridgeRequests(() => f, () => alice);

beforeAll(async () => {
  f = await bridgeFixture();
  const ga = groupAdmin(f.client, f.admin);
  team = await ga.group(TEAM);
  [alice, carol, small] = await Promise.all([f.newDavUser(), f.newDavUser(), f.newDavUser({ quotaBytes: 10_000 })]);
  await ga.member(team, carol.uuid, { node_permissions: ALL });
  await ga.member(team, alice.uuid, { node_permissions: ['read', 'download'] });
  await dav('MKCOL', '/home/docs');
});
afterAll(async () => {
  await f?.close();
});

interface Part {
  path: string;
  content: Buffer | string;
  headers?: Record<string, string>;
}

const md5 = (data: Buffer | string): string => createHash('md5').update(data).digest('hex');

/** A bulk body exactly as Qt's QHttpMultiPart writes the desktop's parts. */
function bulkBody(parts: Part[], boundary = BOUNDARY): Buffer {
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const content = Buffer.from(part.content);
    const headers = {
      'Content-Type': 'application/octet-stream',
      'X-File-Mtime': '1700000000',
      'X-File-MD5': md5(content),
      'Content-Length': String(content.length),
      'X-File-Path': part.path,
      ...part.headers,
    };
    const head = Object.entries(headers)
      .filter(([, v]) => v !== '')
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    chunks.push(Buffer.from(`--${boundary}\r\n${head}\r\n`, 'utf8'), content, Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

/** Where the bridge stages a bulk upload's large parts: its private data folder's `bulk` (never the system /tmp). */
const stagingRoot = (): string => path.join(f.store.config.dataDir, 'bulk');

/** The request folders and files staged under stagingRoot now (none when it does not exist). */
async function stagedNow(): Promise<string[]> {
  const dirs = await fs.readdir(stagingRoot()).catch(() => [] as string[]);
  const all: string[] = [];
  for (const dir of dirs) {
    all.push(dir);
    for (const file of await fs.readdir(path.join(stagingRoot(), dir)).catch(() => [] as string[])) all.push(`${dir}/${file}`);
  }
  return all;
}

async function until<T>(probe: () => Promise<T | undefined>, what: string): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const found = await probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const RELATED = { 'content-type': `multipart/related; boundary="${BOUNDARY}"` };

function post(body: Buffer, as: DavUser = alice, headers: Record<string, string> = RELATED) {
  return davAs(as, 'POST', '/remote.php/dav/bulk', headers, body);
}

type Entry = { error: boolean; etag?: string; fileid?: string; permissions?: string; message?: string };

async function text(path: string, as: DavUser = alice): Promise<string | undefined> {
  const answer = await dav('GET', path, {}, undefined, as);
  return answer.status === 200 ? answer.body.toString('utf8') : undefined;
}

describe('bulk upload', () => {
  it('lands every part where X-File-Path says, answering etag, fileid and permissions per path', async () => {
    const parts: Part[] = Array.from({ length: 30 }, (_, i) => ({ path: `/home/docs/f${i}.txt`, content: `file ${i} `.repeat(i + 1) }));
    parts.push({ path: '/home/ünïcode näme.txt', content: 'NFC or not' });
    const answer = await post(bulkBody(parts));
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    const json = JSON.parse(answer.text) as Record<string, Entry>;
    expect(Object.keys(json).sort()).toEqual(parts.map((p) => p.path).sort());
    for (const part of parts) {
      const entry = json[part.path] as Entry;
      expect(entry.error, part.path).toBe(false);
      expect(entry.etag).toMatch(/^[^"]+$/);
      expect(entry.fileid).toMatch(/^\d{8}oc/);
      expect(entry.permissions).toContain('W');
      expect(await text(part.path)).toBe(String(part.content));
    }
    // The etag and file id are those PROPFIND and a PUT answer.
    const head = await dav('HEAD', '/home/docs/f3.txt');
    expect(`"${json['/home/docs/f3.txt']?.etag}"`).toBe(head.headers.etag);
    // The client's mtime is kept.
    expect(new Date(String(head.headers['last-modified'])).getTime()).toBe(1_700_000_000_000);
  });

  it('a second bulk upload of the same paths makes new revisions', async () => {
    const answer = await post(bulkBody([{ path: '/home/docs/f1.txt', content: 'changed' }]));
    expect((JSON.parse(answer.text) as Record<string, Entry>)['/home/docs/f1.txt']?.error).toBe(false);
    expect(await text('/home/docs/f1.txt')).toBe('changed');
  });

  it('a part with a wrong MD5 is refused alone; the others land', async () => {
    const answer = await post(
      bulkBody([
        { path: '/home/docs/md5-good.txt', content: 'good' },
        { path: '/home/docs/md5-bad.txt', content: 'bad', headers: { 'X-File-MD5': md5('something else') } },
        { path: '/home/docs/sha-bad.txt', content: 'bad', headers: { 'X-File-MD5': '', 'OC-Checksum': `SHA1:${'0'.repeat(40)}` } },
      ]),
    );
    expect(answer.status).toBe(200);
    const json = JSON.parse(answer.text) as Record<string, Entry>;
    expect(json['/home/docs/md5-good.txt']?.error).toBe(false);
    expect(json['/home/docs/md5-bad.txt']).toMatchObject({ error: true, message: expect.stringMatching(/checksum|MD5/i) });
    expect(json['/home/docs/sha-bad.txt']).toMatchObject({ error: true });
    expect(await text('/home/docs/md5-good.txt')).toBe('good');
    expect(await text('/home/docs/md5-bad.txt')).toBeUndefined();
    expect(await text('/home/docs/sha-bad.txt')).toBeUndefined();
  });

  it('parts into a read-only group drive and under another user’s lock are refused alone', async () => {
    // Carol (write in the group) makes a file and locks one of Alice's... Alice has read only in the group.
    expect((await davAs(carol, 'PUT', `/groups/${encodeURIComponent(TEAM)}/home/shared.txt`, {}, 'carol wrote this')).status).toBe(201);
    await dav('PUT', '/home/docs/locked.txt', {}, 'before the lock');
    const lock = await dav('LOCK', '/home/docs/locked.txt', { depth: '0', 'content-type': 'application/xml', timeout: 'Second-600' }, EXCLUSIVE_LOCKINFO);
    expect(lock.status).toBe(200);
    const token = /<(opaquelocktoken:[^>]+)>/.exec(String(lock.headers['lock-token']))?.[1] as string;
    const answer = await post(
      bulkBody([
        { path: '/home/docs/lands.txt', content: 'lands' },
        { path: `/groups/${TEAM}/home/shared.txt`, content: 'alice may not' },
        { path: `/groups/${TEAM}/home/new.txt`, content: 'alice may not' },
        { path: '/home/docs/locked.txt', content: 'no token, no write' },
      ]),
    );
    expect(answer.status).toBe(200);
    const json = JSON.parse(answer.text) as Record<string, Entry>;
    expect(json['/home/docs/lands.txt']?.error).toBe(false);
    expect(json[`/groups/${TEAM}/home/shared.txt`]).toMatchObject({ error: true, message: expect.stringMatching(/^403/) });
    expect(json[`/groups/${TEAM}/home/new.txt`]).toMatchObject({ error: true, message: expect.stringMatching(/^403/) });
    expect(json['/home/docs/locked.txt']).toMatchObject({ error: true, message: expect.stringMatching(/^423/) });
    // The store's words reach the client, not the bridge's plumbing (operation names, upstream statuses).
    for (const refused of [`/groups/${TEAM}/home/shared.txt`, `/groups/${TEAM}/home/new.txt`]) {
      expect(json[refused]?.message).not.toMatch(/failed:|HTTP \d{3}|nodes\.|\bforbidden\b/);
    }
    expect(await text('/home/docs/lands.txt')).toBe('lands');
    expect(await text(`/groups/${encodeURIComponent(TEAM)}/home/shared.txt`, carol)).toBe('carol wrote this');
    expect(await text(`/groups/${encodeURIComponent(TEAM)}/home/new.txt`, carol)).toBeUndefined();
    expect(await text('/home/docs/locked.txt')).toBe('before the lock');
    // With the lock's token in the request's If header, the part goes through.
    const withToken = await davAs(alice, 'POST', '/remote.php/dav/bulk', { ...RELATED, if: `(<${token}>)` }, bulkBody([{ path: '/home/docs/locked.txt', content: 'with the token' }]));
    expect((JSON.parse(withToken.text) as Record<string, Entry>)['/home/docs/locked.txt']?.error).toBe(false);
    expect(await text('/home/docs/locked.txt')).toBe('with the token');
  });

  it('a part over the quota is refused alone; the others land and disk_used counts them exactly', async () => {
    const answer = await post(
      bulkBody([
        { path: '/home/a.txt', content: 'a'.repeat(3000) },
        { path: '/home/too-big.txt', content: 'b'.repeat(9000) },
        { path: '/home/c.txt', content: 'c'.repeat(3000) },
      ]),
      small,
    );
    expect(answer.status).toBe(200);
    const json = JSON.parse(answer.text) as Record<string, Entry>;
    expect(json['/home/a.txt']?.error).toBe(false);
    expect(json['/home/c.txt']?.error).toBe(false);
    expect(json['/home/too-big.txt']).toMatchObject({ error: true, message: expect.stringMatching(/^507/) });
    expect((await f.client.currentUser(small.session)).diskUsedBytes).toBe(6000);
    expect((await f.client.listFolder(small.session, 'home' as NodeId)).map((e) => e.name).sort()).toEqual(['a.txt', 'c.txt']);
  });

  it('answers 400 and writes nothing for a body that is not a well-formed bulk upload', async () => {
    const good = { path: '/home/docs/never.txt', content: 'must not land' };
    const body = bulkBody([good, { path: '/home/docs/never2.txt', content: 'nor this' }]);
    const cases: Array<[string, Buffer, Record<string, string>?]> = [
      ['no boundary', body, { 'content-type': 'multipart/related' }],
      ['not multipart/related', body, { 'content-type': 'application/octet-stream' }],
      ['truncated', body.subarray(0, body.length - 40)],
      ['no closing boundary', body.subarray(0, body.length - `--${BOUNDARY}--\r\n`.length)],
      ['missing X-File-Path', bulkBody([good, { path: '', content: 'x' }])],
      ['missing Content-Length', bulkBody([good, { path: '/home/docs/n3.txt', content: 'x', headers: { 'Content-Length': '' } }])],
      ['no checksum', bulkBody([good, { path: '/home/docs/n4.txt', content: 'x', headers: { 'X-File-MD5': '' } }])],
      ['..', bulkBody([good, { path: '/home/docs/../../etc/passwd', content: 'x' }])],
      ['. segment', bulkBody([good, { path: '/home/./docs/n5.txt', content: 'x' }])],
      ['empty segment', bulkBody([good, { path: '/home//n6.txt', content: 'x' }])],
      ['a path twice', bulkBody([good, { path: '/home/docs/never.txt', content: 'again' }])],
      ['a part longer than its Content-Length', bulkBody([good, { path: '/home/docs/n7.txt', content: 'xyz', headers: { 'Content-Length': '1' } }])],
      ['wrong boundary', bulkBody([good], 'another-boundary')],
    ];
    for (const [what, bytes, headers] of cases) {
      const answer = await post(bytes, alice, headers ?? RELATED);
      expect(answer.status, what).toBe(400);
      expect(answer.text, what).toMatch(/<s:message>.+<\/s:message>/);
    }
    expect(await text('/home/docs/never.txt')).toBeUndefined();
    expect(await text('/home/docs/never2.txt')).toBeUndefined();
  });

  it('a part outside the caller’s tree is refused (another user’s files are not reachable by path)', async () => {
    const answer = await post(bulkBody([{ path: `/remote.php/dav/files/${carol.email}/home/x.txt`, content: 'x' }]));
    expect(answer.status).toBe(200);
    expect((JSON.parse(answer.text) as Record<string, Entry>)[`/remote.php/dav/files/${carol.email}/home/x.txt`]?.error).toBe(true);
  });

  it('refuses an anonymous bulk upload (401) and a POST below /bulk (404)', async () => {
    expect((await davAs(undefined, 'POST', '/remote.php/dav/bulk', RELATED, bulkBody([{ path: '/home/anon.txt', content: 'x' }]))).status).toBe(401);
    expect((await post(bulkBody([{ path: '/home/x.txt', content: 'x' }]), alice, RELATED).then(() => dav('POST', '/remote.php/dav/bulk/more', RELATED, bulkBody([{ path: '/home/y.txt', content: 'y' }])))).status).toBe(404);
  });

  it.runIf(TEST_TRANSPORT === 'local')('commits a request’s parts with one group commit: far fewer WAL fsyncs than files', async () => {
    const durability = f.store.ctx.durability;
    const before = durability.flushes;
    const parts = Array.from({ length: 100 }, (_, i) => ({ path: `/home/docs/g${i}.bin`, content: Buffer.alloc(4096, i) }));
    const answer = await post(bulkBody(parts));
    expect(Object.values(JSON.parse(answer.text) as Record<string, Entry>).every((e) => !e.error)).toBe(true);
    expect(durability.flushes - before).toBeLessThanOrEqual(3);
  });

  it('parts larger than the in-memory threshold are staged on disk and land byte for byte', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251;
    const answer = await post(bulkBody([{ path: '/home/docs/big.bin', content: big }, { path: '/home/docs/after-big.txt', content: 'after' }]));
    const json = JSON.parse(answer.text) as Record<string, Entry>;
    expect(json['/home/docs/big.bin']?.error).toBe(false);
    expect((await dav('GET', '/home/docs/big.bin')).body.equals(big)).toBe(true);
    expect(await text('/home/docs/after-big.txt')).toBe('after');
  });

  it('refuses (507) a request declared larger than any room the caller has, staging and writing nothing', async () => {
    const tight = await f.newDavUser({ quotaBytes: 1_000_000 });
    const parts = Array.from({ length: 3 }, (_, i) => ({ path: `/home/huge${i}.bin`, content: Buffer.alloc(2 * 1024 * 1024, i) }));
    const answer = await post(bulkBody(parts), tight);
    expect(answer.status).toBe(507);
    expect(answer.text).toMatch(/<s:message>the bulk upload is \d+ bytes and the caller has at most 1000000 left in the quota<\/s:message>/);
    expect(await stagedNow()).toEqual([]);
    expect((await f.client.currentUser(tight.session)).diskUsedBytes).toBe(0);
    expect(await f.client.listFolder(tight.session, 'home' as NodeId)).toEqual([]);
  });

  it('without a Content-Length, keeps no part past the quota: each is answered 507 and nothing is staged', async () => {
    const tight = await f.newDavUser({ quotaBytes: 1_000_000 });
    const body = bulkBody([
      { path: '/home/fits.txt', content: 'f'.repeat(1000) },
      ...Array.from({ length: 3 }, (_, i) => ({ path: `/home/over${i}.bin`, content: Buffer.alloc(2 * 1024 * 1024, i) })),
    ]);
    const seen = new Set<string>();
    const watching = setInterval(() => void stagedNow().then((names) => names.forEach((n) => seen.add(n))), 2);
    const stream = new PassThrough();
    const answered = post(stream as never, tight);
    // Chunked (no Content-Length): only the parts as they are read can tell.
    for (let at = 0; at < body.length; at += 256 * 1024) {
      stream.write(body.subarray(at, at + 256 * 1024));
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    stream.end();
    const answer = await answered;
    clearInterval(watching);
    expect(answer.status).toBe(200);
    const json = JSON.parse(answer.text) as Record<string, Entry>;
    expect(json['/home/fits.txt']?.error).toBe(false);
    // Refused as it was read (the write path's own refusal says nothing of the request's other parts).
    for (let i = 0; i < 3; i++) expect(json[`/home/over${i}.bin`]).toMatchObject({ error: true, message: expect.stringMatching(/^507: .* left in the quota beside this request's other parts$/) });
    expect([...seen].filter((n) => n.includes('/'))).toEqual([]);
    expect(await stagedNow()).toEqual([]);
    expect((await f.client.currentUser(tight.session)).diskUsedBytes).toBe(1000);
  });

  it('stages large parts 0600 in a 0700 folder under the data folder, removed after; one more than BULK_CONCURRENCY.perUser of one user waits for a slot and lands', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024, 7);
    const head = bulkBody([{ path: '/home/docs/held.bin', content: big }]);
    const closing = Buffer.from(`--${BOUNDARY}--\r\n`);
    const withoutClose = head.subarray(0, head.length - closing.length);
    const held = Array.from({ length: BULK_CONCURRENCY.perUser }, () => new PassThrough());
    const answers = held.map((stream) => post(stream as never));
    held.forEach((stream) => stream.write(withoutClose));
    // Every held request has staged its part and waits for the rest of its body.
    const files = await until(async () => {
      const names = (await stagedNow()).filter((n) => n.includes('/'));
      return names.length >= held.length ? names : undefined;
    }, 'the held requests\' staged parts');
    expect((await fs.stat(stagingRoot())).mode & 0o777).toBe(0o700);
    for (const name of files) {
      expect((await fs.stat(path.join(stagingRoot(), path.dirname(name)))).mode & 0o777).toBe(0o700);
      expect((await fs.stat(path.join(stagingRoot(), name))).mode & 0o777).toBe(0o600);
    }
    // One more of the same user waits for a slot, its body unread, and lands once one frees.
    let thirdDone = false;
    const third = post(bulkBody([{ path: '/home/docs/third.txt', content: 'third' }])).then((answer) => {
      thirdDone = true;
      return answer;
    });
    // Another user is not held back by alice's.
    const carols = await post(bulkBody([{ path: '/home/carol.txt', content: 'carol' }]), carol);
    expect(carols.status).toBe(200);
    expect(thirdDone).toBe(false);
    expect(await text('/home/docs/third.txt')).toBeUndefined();
    held.forEach((stream) => stream.end(closing));
    for (const answer of await Promise.all(answers)) {
      expect(answer.status).toBe(200);
      expect((JSON.parse(answer.text) as Record<string, Entry>)['/home/docs/held.bin']?.error).toBe(false);
    }
    expect((await third).status).toBe(200);
    expect(await text('/home/docs/third.txt')).toBe('third');
    expect(await stagedNow()).toEqual([]);
    expect((await dav('GET', '/home/docs/held.bin')).body.equals(big)).toBe(true);
  });

  it('removes the staged parts of a request whose connection is cut', async () => {
    const stream = new PassThrough();
    const answered = post(stream as never).catch((err: unknown) => err);
    const body = bulkBody([{ path: '/home/docs/cut.bin', content: Buffer.alloc(2 * 1024 * 1024, 3) }]);
    stream.write(body.subarray(0, body.length - 100));
    await until(async () => ((await stagedNow()).some((n) => n.includes('/')) ? true : undefined), 'a staged part');
    stream.destroy(new Error('cut'));
    await answered;
    await until(async () => ((await stagedNow()).length === 0 ? true : undefined), 'the staged part removed');
    expect(await text('/home/docs/cut.bin')).toBeUndefined();
    // The cut request's slot is given back too.
    expect((await post(bulkBody([{ path: '/home/docs/after-cut.txt', content: 'x' }]))).status).toBe(200);
  });
});
