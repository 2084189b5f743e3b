/**
 * Issue 23, items 3 and 4, with real clients: rclone 1.60 (webdav) and davfs2 1.6 browse
 * `/versions/`, copy a revision out (its bytes are that revision's), and restore one onto its
 * file (it becomes the newest revision, the earlier ones stay): rclone by a server-side COPY,
 * davfs2 by a `cp` from a mount of /versions/ into a mount of the drive (a GET and a PUT);
 * `rclone sync` of `/` does not copy a single revision; `/trash` answers Nextcloud's trash
 * properties to a plain PROPFIND (undici) and a MOVE to `/restore/<name>` puts an entry back;
 * a folder marked skip-trash sends rclone's deletes past the trash. As in davfs2.test.ts the
 * bridge runs in this process, so every file operation on the mount is a spawned program.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requireBinary } from '../helpers/require-binary.js';
import { bridgeFixture, type BridgeFixture, type DavUser } from '../helpers/start-bridge.js';
import { makeTmpDir } from '../helpers/tmp-dir.js';
import { DavfsMount, requireDavfs, STEP_TIMEOUT_MS } from './davfs2-mount.js';
import { rcloneRemote, type RcloneRemote } from './rclone-remote.js';
import { describeRun, runProgram } from './run-program.js';
import { storeEntry, storeList } from './store-state.js';

const rclone = requireBinary('rclone');
const davfs = requireDavfs('restore.test');
const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
const VERSIONS = ['report version one', 'report version two, a little longer', 'report version three'];

describe('restores from a mount (issue 23)', () => {
  let f: BridgeFixture;
  let alice: DavUser;
  let tmp: ReturnType<typeof makeTmpDir>;

  async function dav(method: string, urlPath: string, headers: Record<string, string> = {}, body?: string): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
    const res = await request(`${f.davUrl}${urlPath}`, { method, headers: { authorization: alice.auth, ...headers }, ...(body === undefined ? {} : { body }) });
    return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
  }

  async function revisionText(version: number): Promise<string> {
    const entry = await storeEntry(f, alice, ['docs', 'report.odt']);
    if (!entry) throw new Error('no report.odt');
    const download = await f.client.download(alice.session, entry.id, entry.name, { version });
    return Buffer.concat(await download.body.toArray()).toString();
  }

  beforeAll(async () => {
    f = await bridgeFixture();
    alice = await f.newDavUser();
    tmp = makeTmpDir('driveway-restore-');
    expect((await dav('MKCOL', '/home/docs/')).status).toBe(201);
    for (const text of VERSIONS) expect([201, 204]).toContain((await dav('PUT', '/home/docs/report.odt', {}, text)).status);
  }, 120_000);

  afterAll(async () => {
    await f?.close();
  });

  rclone.describe('rclone 1.60 (webdav, vendor other)', () => {
    let remote: RcloneRemote;

    beforeAll(async () => {
      remote = await rcloneRemote({ rclonePath: rclone.path, name: 'VR', url: `${f.davUrl}/`, username: alice.email, password: alice.password, tmpDir: tmp.dir });
    });

    it('lists /versions/ and a file’s revisions, copies one out with its bytes, restores one by server-side COPY', async () => {
      const dirs = await remote.run(['lsf', 'vr:versions/home/docs/']);
      expect(dirs.code, describeRun(dirs)).toBe(0);
      expect(dirs.stdout.trim().split('\n')).toEqual(['report.odt/']);
      const listing = await remote.run(['lsf', '--format', 'ps', '--separator', '|', 'vr:versions/home/docs/report.odt/']);
      expect(listing.code, describeRun(listing)).toBe(0);
      const rows = listing.stdout.trim().split('\n').map((l) => l.split('|'));
      expect(rows.map((r) => Number(r[1]))).toEqual(VERSIONS.map((v) => Buffer.byteLength(v)));
      for (const [name] of rows) expect(name).toMatch(/^\d{4}-\d\d-\d\dT\d\d\.\d\d\.\d\d(\.\d{3})?Z( r\d+)? report\.odt$/);

      const out = path.join(tmp.dir, 'rclone-out');
      const copied = await remote.run(['copy', 'vr:versions/home/docs/report.odt/', out]);
      expect(copied.code, describeRun(copied)).toBe(0);
      const files = readdirSync(out).sort();
      expect(files.map((name) => readFileSync(path.join(out, name), 'utf8'))).toEqual(VERSIONS);

      // The first revision onto its file: rclone copies server-side (one COPY).
      const first = rows[0]?.[0] as string;
      const restore = await remote.run(['copyto', '-v', `vr:versions/home/docs/report.odt/${first}`, 'vr:home/docs/report.odt']);
      expect(restore.code, describeRun(restore)).toBe(0);
      expect(restore.stderr).toMatch(/Copied \(server-side copy\)/);
      expect((await dav('GET', '/home/docs/report.odt')).text).toBe(VERSIONS[0]);
      expect((await storeEntry(f, alice, ['docs', 'report.odt']))?.revision).toBe(4);
      expect([await revisionText(1), await revisionText(2), await revisionText(3)]).toEqual(VERSIONS);
      const after = await remote.run(['lsf', 'vr:versions/home/docs/report.odt/']);
      expect(after.stdout.trim().split('\n')).toHaveLength(4);
    });

    it('rclone sync of / copies the drive and not one revision', async () => {
      const mirror = path.join(tmp.dir, 'rclone-sync');
      mkdirSync(mirror);
      const sync = await remote.run(['sync', 'vr:', mirror]);
      expect(sync.code, describeRun(sync)).toBe(0);
      expect(readdirSync(mirror)).not.toContain('versions');
      expect(readFileSync(path.join(mirror, 'home', 'docs', 'report.odt'), 'utf8')).toBe(VERSIONS[0]);
    });

    it('deletes below a folder marked skip-trash do not reach the trash', async () => {
      expect((await dav('MKCOL', '/home/backup/')).status).toBe(201);
      const mark = await dav('PROPPATCH', '/home/backup/', { 'content-type': 'application/xml' },
        '<?xml version="1.0"?><D:propertyupdate xmlns:D="DAV:"><D:set><D:prop><skip-trash xmlns="urn:driveway:">1</skip-trash></D:prop></D:set></D:propertyupdate>');
      expect(mark.status).toBe(207);
      expect(mark.text).toContain('200');
      const src = path.join(tmp.dir, 'backup-src');
      mkdirSync(src);
      for (const name of ['a.pack', 'b.pack']) await runProgram('sh', ['-c', `printf '${name}' > ${name}`], { cwd: src, timeoutMs: 10_000 });
      expect((await remote.run(['sync', src, 'vr:home/backup'])).code).toBe(0);
      await runProgram('rm', [path.join(src, 'a.pack')], { timeoutMs: 10_000 });
      const pruned = await remote.run(['sync', src, 'vr:home/backup']);
      expect(pruned.code, describeRun(pruned)).toBe(0);
      expect((await storeList(f, alice, ['backup'])).map((e) => e.name)).toEqual(['b.pack']);
      expect((await f.client.listFolder(alice.session, 'trash' as never)).map((e) => e.name)).not.toContain('a.pack');
    });
  });

  davfs.describe('davfs2 1.6', () => {
    let mount: DavfsMount;
    let drive: DavfsMount;

    beforeAll(() => {
      mount = new DavfsMount({ mountPath: davfs.mountPath, url: `${f.davUrl}/versions/`, username: alice.email, password: alice.password, tmpDir: tmp.dir, name: 'versions' });
      drive = new DavfsMount({ mountPath: davfs.mountPath, url: `${f.davUrl}/home/`, username: alice.email, password: alice.password, tmpDir: tmp.dir, name: 'drive' });
    });
    afterAll(async () => {
      await mount?.cleanup();
      await drive?.cleanup();
    }, STEP_TIMEOUT_MS);

    it('mounts /versions/, lists a file’s revisions and copies one out with that revision’s bytes', async (ctx) => {
      const mounted = await mount.mount();
      if (mount.fuseRefused) ctx.skip(`FUSE unusable here: ${mount.fuseRefused}`);
      expect(mounted.code, describeRun(mounted)).toBe(0);
      const out = path.join(tmp.dir, 'davfs-out');
      mkdirSync(out);
      const run = await runProgram('sh', ['-c', `ls -1 "${mount.mnt}/home/docs/report.odt/" && cp "${mount.mnt}/home/docs/report.odt/"* "${out}/"`], { timeoutMs: STEP_TIMEOUT_MS });
      expect(run.code, describeRun(run)).toBe(0);
      const names = run.stdout.trim().split('\n');
      expect(names.length).toBeGreaterThanOrEqual(3);
      const copied = names.map((name) => sha256(readFileSync(path.join(out, name))));
      expect(copied.slice(0, 3)).toEqual(VERSIONS.map(sha256));
      // Read-only: writing there fails and changes nothing.
      const write = await runProgram('mkdir', [`${mount.mnt}/home/docs/report.odt/new`], { timeoutMs: STEP_TIMEOUT_MS });
      expect(write.code).not.toBe(0);
      const unmounted = await mount.unmount();
      expect(unmounted.code, describeRun(unmounted)).toBe(0);
      expect((await storeList(f, alice, ['docs'])).map((e) => e.name)).toEqual(['report.odt']);
    }, STEP_TIMEOUT_MS * 3);

    it('restores one: the second revision copied from /versions/ onto its file in a mount of the drive becomes the newest, the others kept', async (ctx) => {
      const before = (await storeEntry(f, alice, ['docs', 'report.odt']))?.revision ?? 0;
      for (const m of [mount, drive]) {
        const mounted = await m.mount();
        if (m.fuseRefused) ctx.skip(`FUSE unusable here: ${m.fuseRefused}`);
        expect(mounted.code, describeRun(mounted)).toBe(0);
      }
      const revisions = `${mount.mnt}/home/docs/report.odt`;
      const run = await runProgram('sh', ['-c', `cp "${revisions}/$(ls -1 "${revisions}/" | sed -n 2p)" "${drive.mnt}/docs/report.odt"`], { timeoutMs: STEP_TIMEOUT_MS });
      expect(run.code, describeRun(run)).toBe(0);
      // davfs2 uploads a changed file when it is unmounted at the latest.
      for (const m of [drive, mount]) {
        const unmounted = await m.unmount();
        expect(unmounted.code, describeRun(unmounted)).toBe(0);
      }
      expect((await dav('GET', '/home/docs/report.odt')).text).toBe(VERSIONS[1]);
      expect((await storeEntry(f, alice, ['docs', 'report.odt']))?.revision).toBe(before + 1);
      expect([await revisionText(1), await revisionText(2), await revisionText(3)]).toEqual(VERSIONS);
    }, STEP_TIMEOUT_MS * 4);
  });

  it('a plain PROPFIND of /trash shows Nextcloud’s trash properties; MOVE to /restore/<name> puts the entry back', async () => {
    expect((await dav('PUT', '/home/docs/old.txt', {}, 'old')).status).toBe(201);
    expect((await dav('DELETE', '/home/docs/old.txt')).status).toBe(204);
    const found = await dav('PROPFIND', '/trash/old.txt', { depth: '0' });
    expect(found.status).toBe(207);
    expect(found.text).toMatch(/<nc:trashbin-original-location>home\/docs\/old\.txt<\/nc:trashbin-original-location>/);
    expect(found.text).toMatch(/<nc:trashbin-filename>old\.txt<\/nc:trashbin-filename>/);
    expect(found.text).toMatch(/<nc:trashbin-deletion-time>\d{10}<\/nc:trashbin-deletion-time>/);
    const restored = await dav('MOVE', '/trash/old.txt', { destination: `${f.davUrl}/restore/old.txt` });
    expect(restored.status).toBe(201);
    expect((await dav('GET', '/home/docs/old.txt')).text).toBe('old');
  });
});
